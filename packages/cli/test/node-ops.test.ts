/**
 * `vrp node` operations a host runs by hand or from cron, through the real CLI: calendar feeds
 * added from a relative path keep working when sync runs from another directory, a missing
 * feed file is refused, `calendar list` shows notes, and `serve --sync-interval` syncs in the
 * background — in `--workers N` mode once per node, in the primary.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { addCalendarFeed, initNode, listCalendar } from '@vrpkit/node';
import { repoRoot, runVrp } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Each case starts the real CLI under tsx (several seconds on a shared 2-core machine).
vi.setConfig({ testTimeout: 90_000 });
const dir = mkdtempSync(join(tmpdir(), 'vrpkit-cli-node-ops-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ICS = 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nEND:VCALENDAR\r\n';

async function sampleNode(name: string): Promise<string> {
  const dataDir = join(dir, name);
  await initNode({ domain: 'ops.example', dataDir });
  return dataDir;
}

describe('vrp node calendar', () => {
  it('a feed added from a relative path still syncs when sync runs from another directory (cron)', async () => {
    const dataDir = await sampleNode('relative');
    const hostHome = join(dir, 'host-home');
    const cronHome = join(dir, 'cron-home');
    mkdirSync(join(hostHome, 'calendars'), { recursive: true });
    mkdirSync(cronHome);
    writeFileSync(join(hostHome, 'calendars', 'airbnb.ics'), ICS);

    const add = await runVrp(
      ['node', 'calendar', 'add-feed', '--data-dir', dataDir, '--name', 'airbnb', '--file', 'calendars/airbnb.ics', '--json'],
      {
        cwd: hostHome,
      },
    );
    expect(add.code).toBe(0);
    expect(JSON.parse(add.stdout)).toEqual({ added: 'airbnb', file: join(hostHome, 'calendars', 'airbnb.ics') });

    const sync = await runVrp(['node', 'calendar', 'sync', '--data-dir', dataDir, '--json'], { cwd: cronHome });
    expect(sync.code).toBe(0);
    expect(JSON.parse(sync.stdout)).toEqual({ feeds: [{ name: 'airbnb', ok: true, ranges: 0 }] });
    const [feed] = (await listCalendar({ dataDir })).feeds;
    expect(feed).toMatchObject({ file: join(hostHome, 'calendars', 'airbnb.ics'), last_error: null });
    expect(feed!.last_success_at).not.toBeNull();
  });

  it('add-feed refuses a file that does not exist, naming its absolute path, and stores nothing', async () => {
    const dataDir = await sampleNode('missing');
    const r = await runVrp(['node', 'calendar', 'add-feed', '--data-dir', dataDir, '--name', 'other', '--file', 'nowhere.ics'], {
      cwd: dir,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error[feed_file_not_found]: no calendar file at ${join(dir, 'nowhere.ics')}`);
    expect((await listCalendar({ dataDir })).feeds).toEqual([]);
  });

  it('calendar list shows the notes of blocks', async () => {
    const dataDir = await sampleNode('notes');
    const block = await runVrp([
      'node',
      'calendar',
      'block',
      '--data-dir',
      dataDir,
      '--from',
      '2099-07-01',
      '--to',
      '2099-07-08',
      '--note',
      'Family visit',
    ]);
    expect(block.code).toBe(0);
    const list = await runVrp(['node', 'calendar', 'list', '--data-dir', dataDir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/2099-07-01 → 2099-07-08 {2}block {2}Family visit\n/);
  });
});

describe('vrp node serve --sync-interval', () => {
  it('refuses a bare number, which could be seconds or minutes', async () => {
    const r = await runVrp(['node', 'serve', '--data-dir', join(dir, 'unused'), '--dev', '--sync-interval', '15']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--sync-interval.*a duration with its unit such as 90s, 15m or 1h/);
  });

  /** A TCP listener standing in for an https feed: it counts connections (each one a sync attempt) and closes them. */
  function countingFeedServer(): Promise<{ server: Server; url: string; count: () => number }> {
    let n = 0;
    const server = createServer((s: Socket) => {
      n++;
      s.destroy();
    });
    return new Promise((done) =>
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        done({ server, url: `https://127.0.0.1:${port}/calendar.ics`, count: () => n });
      }),
    );
  }

  function serve(args: string[]): {
    child: ChildProcess;
    listening: Promise<{ port: number; worker_pids?: number[] }>;
    exited: Promise<unknown>;
  } {
    const bin = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=vrpkit-source', bin, ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.resume();
    const listening = createInterface({ input: child.stdout! })
      [Symbol.asyncIterator]()
      .next()
      .then((l) => JSON.parse(l.value as string));
    return { child, listening, exited: new Promise((done) => child.on('close', done)) };
  }

  for (const workers of [1, 2]) {
    it(`with --workers ${workers}, the node syncs its feeds at start and once per node, not once per process`, async () => {
      const dataDir = await sampleNode(`serve-sync-${workers}`);
      const feed = await countingFeedServer();
      await addCalendarFeed({ dataDir, name: 'channel', url: feed.url });
      // An hour's interval: the first pass runs at start, a failed feed retries only after 1/16 of it.
      const run = serve(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', '--sync-interval', '1h', '--workers', String(workers)]);
      try {
        await run.listening;
        const until = Date.now() + 20_000;
        while (feed.count() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
        await new Promise((r) => setTimeout(r, 2000)); // room for any other process's first pass
        expect(feed.count()).toBe(1);
        const [f] = (await listCalendar({ dataDir })).feeds;
        expect(f!.last_error).toMatch(/^feed_unreachable: https:\/\/127\.0\.0\.1:\d+\/… \(url sha256 [0-9a-f]{12}\): /);
      } finally {
        run.child.kill('SIGTERM');
        await run.exited;
        feed.server.close();
      }
    });
  }
});
