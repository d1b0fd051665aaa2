/**
 * Approving an act as a person does it: `vrp gate proxy --ui --notify-url` is a real child
 * process in front of `@modelcontextprotocol/server-filesystem`, the agent is the official SDK
 * `Client` over stdio, the notice goes to a real https receiver (test CA), the page is opened
 * in real Chromium, and `vrp gate ui` decides from another process on the same SQLite store.
 *
 * Without Chromium (`VRPKIT_CHROMIUM`) the browser half is skipped, saying so; set
 * VRPKIT_UPDATE_SCREENSHOTS=1 to rewrite docs/img/approvals.png from the browser test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { repoRoot, runVrpInProcess } from '@vrpkit/testkit/cli';
import { createTestCa, startHttpsServer, type TestServer } from '@vrpkit/testkit/tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const filesystemServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const vrpArgs = ['--import', 'tsx', '--conditions=vrpkit-source', bin];
/** Starting `vrp` from source (tsx) takes seconds, and tens of seconds on a loaded machine. */
const SPAWN = { timeout: 180_000 };
const BROWSER = hasChromium('gate approvals page');

interface Notice {
  event: string;
  candidate_act_id: string;
  tool: string;
  server_id: string;
  consequence_class: string;
  arguments_digest: string;
  binding_digest: string;
  link: string | null;
}

describe('approving an act: vrp gate proxy --ui --notify-url, and vrp gate ui from another process', SPAWN, () => {
  const dir = mkdtempSync(join(tmpdir(), 'vrp-gate-approvals-'));
  const root = join(dir, 'root');
  const store = join(dir, 'gate.db');
  let client: Client;
  let logs = '';
  let page: { url: string; token: string };
  let receiver: TestServer;
  const notices: Notice[] = [];
  const noticeWaiters: (() => void)[] = [];
  const children: ChildProcess[] = [];

  /** The next notice the receiver gets (the one for the call just made). */
  async function nextNotice(count: number): Promise<Notice> {
    while (notices.length < count) await new Promise<void>((r) => noticeWaiters.push(r));
    return notices[count - 1]!;
  }

  function write(path: string, content: string) {
    const progress: unknown[] = [];
    const result = client
      .callTool({ name: 'write_file', arguments: { path: join(root, path), content } }, CallToolResultSchema, {
        onprogress: (p) => progress.push(p),
        timeout: 170_000,
      })
      .then((r) => r as CallToolResult);
    result.catch(() => {}); // a test that fails first leaves the call pending when the client closes
    return { result, progress };
  }

  beforeAll(async () => {
    mkdirSync(root);
    const policy = join(dir, 'policy.yaml');
    writeFileSync(
      policy,
      [
        'version: 1',
        'policy_id: filesystem',
        'informative_defaults: false',
        'tools:',
        '  - { tool: "read_*", consequence_class: INFORMATIONAL }',
        '  - { tool: write_file, consequence_class: PERSISTENT_STATE_CHANGE }',
        'hot_envelopes:',
        '  - { name: reads, consequence_classes: [INFORMATIONAL] }',
      ].join('\n'),
    );
    const ca = await createTestCa();
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, ca.ca.certPem);
    receiver = await startHttpsServer(await ca.certFor('localhost'), (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (req.method === 'POST' && req.headers['content-type'] === 'application/json') notices.push(JSON.parse(body) as Notice);
        res.writeHead(204).end();
        for (const w of noticeWaiters.splice(0)) w();
      });
    });

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        ...vrpArgs,
        'gate',
        'proxy',
        '--policy',
        policy,
        '--store',
        store,
        '--name',
        'fs',
        '--ui',
        '--approver',
        'alice',
        '--notify-url',
        `https://localhost:${receiver.port}/hook`,
        '--',
        process.execPath,
        filesystemServer,
        root,
      ],
      cwd: repoRoot,
      // The notice receiver's certificate is issued by the test CA.
      env: { ...(process.env as Record<string, string>), NODE_EXTRA_CA_CERTS: caFile },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      logs += d;
    });
    client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport, SPAWN);
    const line = logs.split('\n').find((l) => l.includes('"event":"approvals_page"'));
    page = JSON.parse(line!) as { url: string; token: string };
    await client.listTools();
    const pinned = await runVrpInProcess(['gate', 'tools', 'pin', 'write_file', 'read_text_file', '--store', store]);
    expect(pinned.code).toBe(0);
  }, SPAWN.timeout);

  afterAll(async () => {
    await client?.close();
    for (const c of children) c.kill();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!BROWSER)(
    'in Chromium: refused without the token; the token opens the page with the exact arguments as text; a forged CSRF token is refused; Approve runs the waiting call once',
    async () => {
      const content = 'Dear team,\n<script>window.__pwned = 1</script><b>bold?</b> & "quoted"';
      const call = write('letter.txt', content);
      const notice = await nextNotice(1);
      expect(notice).toMatchObject({
        event: 'escalation_waiting',
        tool: 'write_file',
        consequence_class: 'PERSISTENT_STATE_CHANGE',
        link: page.url,
      });
      // The notice names the act by ids and digests, never by its arguments.
      expect(JSON.stringify(notice)).not.toContain('Dear team');
      expect(JSON.stringify(notice)).not.toContain('letter.txt');

      const browser = await launchChromium();
      try {
        const stranger = await browser.newPage();
        const refused = await stranger.goto(page.url);
        expect(refused?.status()).toBe(401);
        expect(await stranger.locator('body').textContent()).toContain('Open this page with the URL and token');

        const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } });
        const scriptsRun: string[] = [];
        tab.on('dialog', (d) => void d.dismiss());
        tab.on('console', (m) => scriptsRun.push(m.text()));
        await tab.goto(`${page.url}?token=${page.token}`);
        expect(tab.url()).toBe(page.url); // the token left the address bar
        const act = tab.locator(`section[data-act="${notice.candidate_act_id}"]`);
        // The arguments exactly as digested (canonical key order), pretty-printed, as text.
        expect(await act.locator('pre.arguments').textContent()).toBe(JSON.stringify({ content, path: join(root, 'letter.txt') }, null, 2));
        expect(await act.locator('.arguments-digest').textContent()).toBe(notice.arguments_digest);
        expect(await act.locator('.binding-digest').textContent()).toBe(notice.binding_digest);
        expect(await tab.locator('script, b').count()).toBe(0);
        expect(await tab.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
        expect(scriptsRun).toEqual([]);
        if (process.env.VRPKIT_UPDATE_SCREENSHOTS === '1') {
          mkdirSync(join(repoRoot, 'docs/img'), { recursive: true });
          await tab.screenshot({ path: join(repoRoot, 'docs/img/approvals.png') });
        }

        // A form whose CSRF token is not the session's decides nothing.
        await act.locator('form:has(button.reject) input[name="csrf"]').evaluate((el) => {
          (el as HTMLInputElement).value = 'forged';
        });
        await act.locator('button.reject').click();
        expect(await tab.locator('h1').textContent()).toBe('Refused');
        expect(await tab.locator('body').textContent()).toContain('The form token is not valid');

        await tab.goto(page.url);
        await tab.locator(`section[data-act="${notice.candidate_act_id}"] button.approve`).click();
        expect(await tab.locator('#decision').textContent()).toBe(`Approved candidate act ${notice.candidate_act_id}.`);
      } finally {
        await browser.close();
      }
      const r = await call.result;
      expect(r.isError).toBeFalsy();
      expect(readFileSync(join(root, 'letter.txt'), 'utf8')).toBe(content);
      expect(call.progress.length).toBeGreaterThanOrEqual(1);
      const journal = JSON.parse((await runVrpInProcess(['gate', 'journal', '--db', store, '--json'])).stdout) as {
        candidate_act_id: string;
        state: string;
      }[];
      expect(journal.filter((j) => j.candidate_act_id === notice.candidate_act_id).map((j) => j.state)).toEqual(['EFFECTUATED']);
    },
    SPAWN.timeout,
  );

  it(
    'vrp gate ui in another process: refused without the token; its decision on the same store is seen by the waiting proxy, which runs the call',
    async () => {
      const ui = spawn(
        process.execPath,
        [...vrpArgs, 'gate', 'ui', '--store', store, '--listen', '127.0.0.1:0', '--approver', 'bob', '--json'],
        {
          cwd: repoRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      children.push(ui);
      // `--json` prints one JSON object (pretty-printed) once the page listens.
      let out = '';
      const started = await new Promise<{ url: string; token: string }>((resolve, reject) => {
        ui.stdout!.on('data', (d) => {
          out += d;
          try {
            resolve(JSON.parse(out));
          } catch {}
        });
        ui.on('exit', () => reject(new Error(`vrp gate ui exited: ${out}`)));
      });
      expect((await fetch(started.url, { redirect: 'manual' })).status).toBe(401);

      const call = write('second.txt', 'second');
      const notice = await nextNotice(notices.length + 1);
      expect(notice.tool).toBe('write_file');
      expect(existsSync(join(root, 'second.txt'))).toBe(false);

      const login = await fetch(`${started.url}?token=${started.token}`, { redirect: 'manual' });
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
      const html = await (await fetch(started.url, { headers: { cookie } })).text();
      expect(html).toContain(notice.binding_digest);
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
      const decided = await fetch(`${started.url}decide`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, act: notice.candidate_act_id, digest: notice.binding_digest, decision: 'approve' }),
      });
      expect(decided.status).toBe(200);

      const r = await call.result;
      expect(r.isError).toBeFalsy();
      expect(readFileSync(join(root, 'second.txt'), 'utf8')).toBe('second');
      const pending = JSON.parse((await runVrpInProcess(['gate', 'pending', '--db', store, '--json'])).stdout) as unknown[];
      expect(pending).toEqual([]);
      // The proxy's log holds digests, never the arguments it forwarded.
      expect(logs).not.toContain('Dear team');
      expect(logs).toContain('"event":"approval_wait_ended"');
    },
    SPAWN.timeout,
  );
});

describe('approvals flags: bad input is a usage error and starts nothing', () => {
  it.each([
    [
      ['gate', 'proxy', '--policy', 'p.yaml', '--store', 's.db', '--approval-timeout', 'soon', '--', 'x'],
      /--approval-timeout must be a duration/,
    ],
    [
      ['gate', 'proxy', '--policy', 'p.yaml', '--store', 's.db', '--notify-url', 'http://chat.example/hook', '--', 'x'],
      /--notify-url must be https/,
    ],
    [['gate', 'proxy', '--policy', 'p.yaml', '--store', 's.db', '--ui', '--ui-listen', '0.0.0.0:8932', '--', 'x'], /loopback hosts only/],
    [['gate', 'proxy', '--policy', 'p.yaml', '--store', 's.db', '--ui-listen', '127.0.0.1:1', '--', 'x'], /--ui-listen needs --ui/],
    [
      ['gate', 'proxy', '--policy', 'p.yaml', '--store', 's.db', '--approval-link-ttl', '10 min', '--', 'x'],
      /--approval-link-ttl must be a duration/,
    ],
    [
      ['gate', 'proxy', '--policy', 'p.yaml', '--store', 's.db', '--approval-link-ttl', '0', '--', 'x'],
      /--approval-link-ttl must be more than 0/,
    ],
    [['gate', 'ui', '--store', 's.db', '--listen', '0.0.0.0:8932'], /loopback hosts only/],
    [['gate', 'ui', '--store', 's.db', '--retain-arguments', '7 days'], /--retain-arguments must be a duration/],
  ])('vrp %j', async (args, message) => {
    const r = await runVrpInProcess(args);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(message);
  });
});
