/**
 * `vrp node serve` as a service: stdout with `--json` holds JSON lines only, each stamped, ending
 * with a stop event; `node backup` / `node restore` from the command line; `--connect-to` entries
 * that would never be dialled are refused; and the systemd unit in docs/deploy.md parses.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot, runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it } from 'vitest';

const DOMAIN = 'serve-ops-cli.example';
const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-cli-serve-ops-'));
const dataDir = join(tmp, 'node');
const bin = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('vrp node serve --json', () => {
  it('prints JSON lines only, each with a ts, and a stopped event on SIGTERM', async () => {
    expect((await runVrpInProcess(['node', 'init', '--domain', DOMAIN, '--data-dir', dataDir, '--sample'])).code).toBe(0);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=vrpkit-source', bin, 'node', 'serve', '--data-dir', dataDir, '--dev', '--json'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8');
    const listening = new Promise<Record<string, unknown>>((done, fail) => {
      child.stdout.on('data', (chunk: string) => {
        stdout += chunk;
        const first = stdout.split('\n')[0];
        if (stdout.includes('\n') && first) done(JSON.parse(first));
      });
      child.once('exit', () => fail(new Error(`serve exited before listening: ${stdout}`)));
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const first = await listening;
    expect(first).toMatchObject({ event: 'listening', origin: `https://${DOMAIN}`, address: '127.0.0.1' });
    expect(first.ts).toMatch(ISO_UTC);

    // One request, reached like a client would (the dev CA, the domain's name for TLS).
    const status = await new Promise<number | undefined>((done, fail) =>
      httpsGet(
        {
          host: '127.0.0.1',
          port: first.port as number,
          path: '/.well-known/jwks.json',
          servername: DOMAIN,
          headers: { host: DOMAIN },
          ca: readFileSync(first.ca as string, 'utf8'),
          agent: false,
        },
        (res) => {
          res.resume();
          res.on('end', () => done(res.statusCode));
        },
      ).on('error', fail),
    );
    expect(status).toBe(200);
    await expect.poll(() => stdout.split('\n').length, { timeout: 5_000 }).toBeGreaterThan(2);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    const events = lines.map((l) => JSON.parse(l) as { event: string; ts: string });
    expect(events.map((e) => e.event)).toEqual(['listening', 'request', 'stopped']);
    for (const e of events) expect(e.ts).toMatch(ISO_UTC);
    expect(events.at(-1)).toMatchObject({ event: 'stopped', reason: 'SIGTERM', origin: `https://${DOMAIN}` });
  }, 120_000);

  it('--behind-proxy without --trusted-proxy, or on a public address, is refused with a stable code', async () => {
    const noProxy = await runVrpInProcess(['node', 'serve', '--data-dir', dataDir, '--behind-proxy', '--json']);
    expect(noProxy.code).toBe(1);
    expect(JSON.parse(noProxy.stdout).error.code).toBe('trusted_proxy_required');
    const pub = await runVrpInProcess([
      'node',
      'serve',
      '--data-dir',
      dataDir,
      '--behind-proxy',
      '--trusted-proxy',
      '10.0.0.1',
      '--host',
      '0.0.0.0',
    ]);
    expect(pub.code).toBe(1);
    expect(pub.stderr).toContain('error[proxy_listen_public]');
  });

  it('--acme needs --acme-email, and runs in one process only', async () => {
    const noEmail = await runVrpInProcess(['node', 'serve', '--data-dir', dataDir, '--acme']);
    expect(noEmail.code).toBe(1);
    expect(noEmail.stderr).toContain('error[acme_email_required]');
    const workers = await runVrpInProcess([
      'node',
      'serve',
      '--data-dir',
      dataDir,
      '--acme',
      '--acme-email',
      'a@b.example',
      '--workers',
      '2',
    ]);
    expect(workers.code).toBe(1);
    expect(workers.stderr).toContain('error[acme_single_process]');
  });
});

describe('vrp node backup / restore', () => {
  it('round-trips through a passphrase file or VRPKIT_BACKUP_PASSPHRASE; a wrong passphrase restores nothing', async () => {
    const passFile = join(tmp, 'pass');
    writeFileSync(passFile, 'a long passphrase for tests\n', { mode: 0o600 });
    const out = join(tmp, 'cli.vrpbak');
    const b = await runVrpInProcess(['node', 'backup', '--data-dir', dataDir, '--out', out, '--passphrase-file', passFile, '--json']);
    expect(b.code).toBe(0);
    expect(JSON.parse(b.stdout)).toMatchObject({ canonical_domain: DOMAIN, store: 'sqlite' });

    process.env.VRPKIT_BACKUP_PASSPHRASE = 'not it';
    try {
      const wrong = await runVrpInProcess(['node', 'restore', '--in', out, '--data-dir', join(tmp, 'wrong'), '--json']);
      expect(wrong.code).toBe(1);
      expect(JSON.parse(wrong.stdout).error.code).toBe('backup_unauthenticated');
      process.env.VRPKIT_BACKUP_PASSPHRASE = 'a long passphrase for tests';
      const r = await runVrpInProcess(['node', 'restore', '--in', out, '--data-dir', join(tmp, 'restored')]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`restored ${DOMAIN}`);
    } finally {
      delete process.env.VRPKIT_BACKUP_PASSPHRASE;
    }
    const keys = await runVrpInProcess(['node', 'keys', 'list', '--data-dir', join(tmp, 'restored'), '--json']);
    const original = await runVrpInProcess(['node', 'keys', 'list', '--data-dir', dataDir, '--json']);
    expect(JSON.parse(keys.stdout)).toEqual(JSON.parse(original.stdout));

    const none = await runVrpInProcess(['node', 'backup', '--data-dir', dataDir, '--out', join(tmp, 'x.vrpbak')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('error[passphrase_required]');
  });
});

describe('--connect-to', () => {
  it('refuses an entry for a port other than 443 (it would never be dialled) instead of ignoring it', async () => {
    const r = await runVrpInProcess([
      'verify',
      `https://${DOMAIN}`,
      '--check-in',
      '2027-07-01',
      '--check-out',
      '2027-07-03',
      '--guests',
      '2',
      '--connect-to',
      `${DOMAIN}:8443:127.0.0.1:8443`,
    ]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('port 8443');
  });
});

describe('docs/deploy.md', () => {
  it('its systemd unit passes systemd-analyze verify', async (ctx) => {
    const doc = readFileSync(join(repoRoot, 'docs/deploy.md'), 'utf8');
    const unit = /```ini\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(unit).toContain('ExecStart=/usr/bin/node /opt/vrpkit/packages/cli/dist/bin.js node serve');
    const has = await new Promise<boolean>((done) => execFile('systemd-analyze', ['--version'], (e) => done(!e)));
    if (!has) {
      ctx.skip('systemd-analyze is not installed here; the unit was only checked for its ExecStart line');
      return;
    }
    // verify checks that ExecStart's program exists: point it at this machine's node.
    const file = join(tmp, 'vrp-node.service');
    writeFileSync(file, unit!.replace('/usr/bin/node', process.execPath));
    const r = await new Promise<{ code: number; stderr: string }>((done) =>
      execFile('systemd-analyze', ['verify', file], (e, _o, stderr) => done({ code: e ? 1 : 0, stderr })),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
