/**
 * An escalated `tools/call` through the proxy waits for a person: the proxy runs in this
 * process (`startProxy`, agent side over Streamable HTTP with the official SDK `Client`), the
 * downstream is the real `@modelcontextprotocol/server-filesystem` child, the store is a real
 * SQLite file (and a PostgreSQL schema with `VRPKIT_TEST_PG_URL`), and the person decides through another connection to that file — the approvals
 * page (`startApprovalsUi`, real HTTP) or `decideEscalation` — as another process would.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { decideEscalation, type GateStore, loadPolicy, openPostgresStore, openSqliteStore, type PolicyDocument } from '@vrpkit/gate';
import { repoRoot } from '@vrpkit/testkit/cli';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProxyOptions, type RunningProxy, startProxy } from '../src/proxy/index.js';
import { type ApprovalsUi, CONTENT_SECURITY_POLICY, SESSION_COOKIE, startApprovalsUi } from '../src/ui/index.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';

const filesystemServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const T = { timeout: 120_000 };
const pgs = pgTestSchemas('gate proxy approval', 'the wait for a decision made on PostgreSQL');

const POLICY: PolicyDocument = {
  version: 1,
  policy_id: 'filesystem',
  informative_defaults: false,
  tools: [
    { tool: 'read_*', consequence_class: 'INFORMATIONAL' },
    { tool: 'list_*', consequence_class: 'INFORMATIONAL' },
    { tool: 'write_file', consequence_class: 'PERSISTENT_STATE_CHANGE' },
  ],
  hot_envelopes: [{ name: 'reads', consequence_classes: ['INFORMATIONAL'] }],
};

afterAll(removeTmpDirs);

interface Setup {
  root: string;
  proxy: RunningProxy;
  /** The proxy's own store connection. */
  store: GateStore;
  /** Another connection to the same file: where the person decides. */
  person: GateStore;
  client: Client;
  close(): Promise<void>;
}

/** A proxy on a fresh store; `open` makes each connection to that store (default: one SQLite file). */
async function setup(
  name: string,
  approvalTimeoutMs: number,
  extra: Partial<ProxyOptions> = {},
  openStore?: () => Promise<GateStore>,
): Promise<Setup> {
  const dir = tmpDir(`proxy-approval-${name}`);
  const root = join(dir, 'root');
  mkdirSync(root);
  const dbFile = join(dir, 'gate.db');
  const open = openStore ?? (() => openSqliteStore(dbFile));
  const store = await open();
  const proxy = await startProxy({
    policy: loadPolicy(POLICY),
    store,
    name,
    downstream: { kind: 'stdio', command: process.execPath, args: [filesystemServer, root] },
    listen: { host: '127.0.0.1', port: 0 },
    approvalTimeoutMs,
    log: () => {},
    ...extra,
  });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(proxy.listener!.url), {
      requestInit: { headers: { authorization: `Bearer ${proxy.listener!.token}` } },
    }),
  );
  await client.listTools();
  const person = await open();
  for (const tool of ['write_file', 'read_text_file']) await person.proxy.pin(proxy.serverId, tool, { by: 'test', now: Date.now() });
  return {
    root,
    proxy,
    store,
    person,
    client,
    close: async () => {
      await client.close().catch(() => {});
      await proxy.stop();
      await store.close();
      await person.close();
    },
  };
}

/** A write through the proxy, with a progress token; `progress` collects the notifications it receives. */
function write(s: Setup, path: string, content: string) {
  const progress: { progress: number; total?: number; message?: string }[] = [];
  const started = Date.now();
  const result = s.client
    .callTool({ name: 'write_file', arguments: { path: join(s.root, path), content } }, CallToolResultSchema, {
      onprogress: (p) => progress.push(p),
      timeout: 110_000,
    })
    .then((r) => ({ r: r as CallToolResult, ms: Date.now() - started }));
  return { result, progress };
}

/** The escalation the proxy recorded for the waiting call (read through the person's connection). */
async function pendingEscalation(store: GateStore) {
  for (let i = 0; i < 400; i++) {
    const [row] = await store.escalations.list('PENDING');
    if (row) return row;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no escalation appeared');
}

function errorOf(r: CallToolResult): { code: string; invoked: boolean } {
  expect(r.isError).toBe(true);
  const first = r.content[0];
  if (first?.type !== 'text') throw new Error('expected a text block');
  return (JSON.parse(first.text) as { error: { code: string; invoked: boolean } }).error;
}

/** A session on the approvals page: its cookie. */
async function session(ui: ApprovalsUi): Promise<string> {
  const login = await fetch(`${ui.url}?token=${ui.token}`, { redirect: 'manual' });
  return (login.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** The token of one act's approve or reject form on the page. */
function formTokenOf(body: string, actId: string, decision: 'approve' | 'reject'): string {
  const form = new RegExp(
    `name="csrf" value="([^"]+)"><input type="hidden" name="act" value="${actId}"><input type="hidden" name="digest" value="[^"]+"><button class="${decision}"`,
  );
  return form.exec(body)![1]!;
}

/** Reject a pending act through the page's own reject form. */
async function reject(ui: ApprovalsUi, cookie: string, row: { candidate_act_id: string; binding_digest: string }) {
  const body = await (await fetch(ui.url, { headers: { cookie } })).text();
  const token = formTokenOf(body, row.candidate_act_id, 'reject');
  const r = await fetch(`${ui.url}decide`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: token, act: row.candidate_act_id, digest: row.binding_digest, decision: 'reject' }),
  });
  expect(r.status).toBe(200);
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('an escalated call that nobody decides', T, () => {
  let s: Setup;
  const logged: { event: string; fields: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    // The notice goes to a port where nothing listens: the failure is logged, the wait goes on.
    s = await setup('timeout', 2500, {
      notifyUrl: 'https://127.0.0.1:47/hook',
      log: (event, fields = {}) => void logged.push({ event, fields }),
    });
  }, T.timeout);
  afterAll(() => s?.close());

  it('waits --approval-timeout with progress notifications (a failing --notify-url is logged, not waited for), then returns the pending deny; nothing is written; the arguments are retained for the page', async () => {
    const call = write(s, 'late.txt', 'UNSEEN-CONTENT-91x');
    const { r, ms } = await call.result;
    expect(errorOf(r)).toMatchObject({ code: 'EF_APPROVAL_REQUIRED', invoked: false });
    expect(textOf(r)).toMatch(/Approval pending for candidate act /);
    expect(ms).toBeGreaterThanOrEqual(2400);
    expect(call.progress.length).toBeGreaterThanOrEqual(1);
    expect(call.progress[0]).toMatchObject({ total: 2.5, message: expect.stringContaining('waiting for a person') });
    expect(existsSync(join(s.root, 'late.txt'))).toBe(false);
    expect(logged.find((l) => l.event === 'notify_failed')?.fields).toMatchObject({ reason: expect.any(String) });
    expect(JSON.stringify(logged)).not.toContain('UNSEEN-CONTENT-91x');

    const [row] = await s.person.escalations.list('PENDING');
    const kept = await s.person.pendingArguments.get(row!.candidate_act_id);
    expect(JSON.parse(kept!.arguments_json)).toEqual({ path: join(s.root, 'late.txt'), content: 'UNSEEN-CONTENT-91x' });
    expect(kept!.arguments_digest).toBe(JSON.parse(row!.act_json).arguments_digest.value);
  });
});

describe('an escalated call decided while it waits', T, () => {
  let s: Setup;
  let ui: ApprovalsUi;
  beforeAll(async () => {
    s = await setup('decided', 100_000);
    ui = await startApprovalsUi({ store: s.person, listen: { host: '127.0.0.1', port: 0 }, approver: 'alice' });
  }, T.timeout);
  afterAll(async () => {
    await ui?.close();
    await s?.close();
  });

  it('approved from another connection: the waiting call runs once with the approved authority; the identical call again is a replay (EF_005)', async () => {
    const call = write(s, 'approved.txt', 'approved content');
    const row = await pendingEscalation(s.person);
    const d = await decideEscalation(s.person.escalations, {
      candidateActId: row.candidate_act_id,
      status: 'APPROVED',
      approver: 'bob',
      reviewedDigest: row.binding_digest,
      now: Date.now(),
    });
    expect(d).toMatchObject({ ok: true, decided: true });
    const { r } = await call.result;
    expect(r.isError).toBeFalsy();
    expect(readFileSync(join(s.root, 'approved.txt'), 'utf8')).toBe('approved content');
    // The proxy journals the outcome after it answered (deferOutcome).
    await expect.poll(async () => (await s.person.journal.get(row.candidate_act_id))?.state).toBe('EFFECTUATED');

    const replay = await write(s, 'approved.txt', 'approved content').result;
    expect(errorOf(replay.r)).toMatchObject({ code: 'EF_005', invoked: false });
  });

  it('rejected: the waiting call is refused (EF_NOT_AUTHORIZED) and says a person refused it; nothing is written', async () => {
    const call = write(s, 'rejected.txt', 'rejected content');
    const row = await pendingEscalation(s.person);
    await decideEscalation(s.person.escalations, {
      candidateActId: row.candidate_act_id,
      status: 'REJECTED',
      approver: 'bob',
      reviewedDigest: row.binding_digest,
      now: Date.now(),
    });
    const { r } = await call.result;
    expect(errorOf(r)).toMatchObject({ code: 'EF_NOT_AUTHORIZED', invoked: false });
    expect(textOf(r)).toContain(`A person refused candidate act ${row.candidate_act_id}`);
    expect(existsSync(join(s.root, 'rejected.txt'))).toBe(false);
  });

  it('the approvals page: refused without the token, session cookie is HttpOnly SameSite=Strict, strict CSP, arguments escaped, a bad CSRF token decides nothing, the approve form runs the waiting call', async () => {
    const hostile = '</pre><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    const call = write(s, 'page.txt', hostile);
    const row = await pendingEscalation(s.person);

    const bare = await fetch(ui.url, { redirect: 'manual' });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect((await fetch(`${ui.url}?token=wrong`, { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(`${ui.url}decide`, { method: 'POST', body: new URLSearchParams({ act: row.candidate_act_id }) })).status).toBe(401);

    const login = await fetch(`${ui.url}?token=${ui.token}`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/');
    const setCookie = login.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = setCookie.split(';')[0]!;
    // The redirect after the token stays on this origin, whatever the path asked for.
    const offsite = await fetch(`${ui.url}/evil.example/?token=${ui.token}`, { redirect: 'manual' });
    expect(offsite.headers.get('location')).toBe('/');

    const page = await fetch(ui.url, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    const body = await page.text();
    expect(body).not.toContain('<script');
    expect(body).not.toContain('<img');
    expect(body).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt;');
    expect(body).toContain(row.binding_digest);
    expect(body).toContain(JSON.parse(row.act_json).arguments_digest.value);
    const csrf = /name="csrf" value="([^"]+)"/.exec(body)?.[1];
    expect(csrf).toBeTruthy();

    const form = (over: Record<string, string>) =>
      fetch(`${ui.url}decide`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: csrf!, act: row.candidate_act_id, digest: row.binding_digest, decision: 'approve', ...over }),
        redirect: 'manual',
      });
    expect((await form({ csrf: 'forged' })).status).toBe(403);
    // The token was made for this act, this digest and this decision: another digest is refused before anything is decided.
    expect((await form({ digest: 'another-digest' })).status).toBe(403);
    expect((await s.person.escalations.get(row.candidate_act_id))?.status).toBe('PENDING');

    const approved = await form({});
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain(`Approved candidate act ${row.candidate_act_id}`);
    expect((await s.person.escalations.get(row.candidate_act_id))?.approver).toBe('token:alice');
    const { r } = await call.result;
    expect(r.isError).toBeFalsy();
    expect(readFileSync(join(s.root, 'page.txt'), 'utf8')).toBe(hostile);
    expect((await form({})).status).toBe(409); // already decided: nothing changes
    const after = await (await fetch(ui.url, { headers: { cookie } })).text();
    expect(after).not.toContain(`data-act="${row.candidate_act_id}"`);
    expect(after).toContain(`<td>APPROVED</td><td>token:alice</td><td>write_file</td><td class="mono">${row.candidate_act_id}</td>`);

    const audit = await (
      await fetch(`${ui.url}audit?decision=APPROVED&act=${encodeURIComponent(row.candidate_act_id)}`, { headers: { cookie } })
    ).text();
    expect(audit).toContain(row.candidate_act_id);
    expect(audit).toContain('alice');
  });

  it('shows hostile arguments and tool definitions with visible \\u{…} escapes, never raw bidi, control or invisible characters (issue 36 defect 4)', async () => {
    const hostile = 'pay \u202eevil\u202c \u2066x\u2069 \x1b[2J \u200f\u061c\u2028\u200b \x85 end';
    const call = write(s, 'bidi.txt', hostile);
    const row = await pendingEscalation(s.person);
    await s.person.proxy.recordSeen(
      [
        {
          server_id: 'hostile-server',
          tool_name: 'send_note',
          digest: 'hostile-definition-digest',
          definition: JSON.stringify({ name: 'send_note', description: 'Reads a note.\u202e etirw dna \u2067ok\u2069\x9b' }),
          server_info: 'srv\u202einfo',
        },
      ],
      Date.now(),
    );
    const cookie = await session(ui);
    const body = await (await fetch(ui.url, { headers: { cookie } })).text();
    expect(body).toContain('pay \\u{202E}evil\\u{202C} \\u{2066}x\\u{2069} \\u001b[2J \\u{200F}\\u{061C}\\u{2028}\\u{200B} \\u{0085} end');
    expect(body).toContain('Reads a note.\\u{202E} etirw dna \\u{2067}ok\\u{2069}\\u{009B}');
    expect(body).toContain('srv\\u{202E}info');
    expect(body.replaceAll('\n', '')).not.toMatch(/[\p{Cc}\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u);
    expect(body).toContain(row.binding_digest);
    await reject(ui, cookie, row);
    expect(errorOf((await call.result).r)).toMatchObject({ code: 'EF_NOT_AUTHORIZED', invoked: false });
  });

  it("the page's forms refuse cross-site posts: another Origin or Sec-Fetch-Site, or a token made for another form, decide nothing (issue 36, defect 5's rule)", async () => {
    const call = write(s, 'cross-site.txt', 'cross-site content');
    const row = await pendingEscalation(s.person);
    const cookie = await session(ui);
    const body = await (await fetch(ui.url, { headers: { cookie } })).text();
    const tokenOf = (decision: 'approve' | 'reject') => formTokenOf(body, row.candidate_act_id, decision);
    const post = (decision: string, token: string, headers: Record<string, string>) =>
      fetch(`${ui.url}decide`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ csrf: token, act: row.candidate_act_id, digest: row.binding_digest, decision }),
      });
    const approveToken = tokenOf('approve');
    const pageOrigin = new URL(ui.url).origin;
    const crossSite: Record<string, string>[] = [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'null' },
    ];
    for (const headers of crossSite) {
      const r = await post('approve', approveToken, headers);
      expect([headers, r.status]).toEqual([headers, 403]);
      expect(await r.text()).toContain('Only this page&#39;s own forms can decide');
    }
    // The reject form's token cannot approve; the approve form's token cannot reject.
    expect((await post('approve', tokenOf('reject'), {})).status).toBe(403);
    expect((await post('reject', approveToken, {})).status).toBe(403);
    expect((await s.person.escalations.get(row.candidate_act_id))?.status).toBe('PENDING');
    // The page's own form, as a browser sends it.
    const own = await post('reject', tokenOf('reject'), { origin: pageOrigin, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(200);
    expect((await s.person.escalations.get(row.candidate_act_id))?.status).toBe('REJECTED');
    expect(errorOf((await call.result).r)).toMatchObject({ code: 'EF_NOT_AUTHORIZED', invoked: false });
  });

  it('the audit view shows the whole chain as `vrp gate audit export` does (the EF_005 replay deny included), filterable by kind, code and actor', async () => {
    const cookie = await session(ui);
    const head = await s.person.audit.head();
    const all = await (await fetch(`${ui.url}audit`, { headers: { cookie } })).text();
    expect(all).toContain(`${head.seq} entries of ${head.seq} in the chain.`);
    expect(all.match(/<tr data-seq="/g)?.length).toBe(head.seq);
    const replay = await (await fetch(`${ui.url}audit?code=EF_005`, { headers: { cookie } })).text();
    expect(replay).toMatch(/<td>deny<\/td><td>EF_005<\/td>/);
    expect(replay.match(/<tr data-seq="/g)?.length).toBe(1);
    const bob = await (await fetch(`${ui.url}audit?kind=approve&actor=bob`, { headers: { cookie } })).text();
    expect(bob.match(/<tr data-seq="/g)?.length).toBe(1);
    expect(bob).toMatch(/<td>approve<\/td><td><\/td><td>bob<\/td>/);
  });

  it("the token redirect leads only to the page's own routes, never to a path the request names, and never fails on an odd path", async () => {
    const cases: [string, string][] = [
      ['audit', '/audit'],
      ['', '/'],
      ['%09/evil.example', '/'],
      ['%0d%0aSet-Cookie:%20injected=1', '/'],
      ['%2F%2Fevil.example', '/'],
      ['%5C%5Cevil.example', '/'],
      ['decide', '/'],
      ['audit/..%2F%2Fevil.example', '/'],
      ['%E0%A4%A', '/'],
    ];
    for (const [path, location] of cases) {
      const r = await fetch(`${ui.url}${path}?token=${ui.token}`, { redirect: 'manual' });
      expect([path, r.status, r.headers.get('location')]).toEqual([path, 303, location]);
      expect(r.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual([SESSION_COOKIE]);
    }
  });

  it('the approvals page pins a tool to exactly the definition it shows (a forged CSRF token or another digest pins nothing)', async () => {
    const login = await fetch(`${ui.url}?token=${ui.token}`, { redirect: 'manual' });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const body = await (await fetch(ui.url, { headers: { cookie } })).text();
    expect(body).toContain('data-tool="move_file"');
    expect(body).not.toContain('data-tool="write_file"'); // pinned to its current definition
    const csrf = /data-tool="move_file"[\s\S]*?name="csrf" value="([^"]+)"/.exec(body)![1]!;
    const seen = (await s.person.proxy.getPin(s.proxy.serverId, 'move_file'))!;
    expect(body).toContain(seen.seen_digest);
    const pin = (over: Record<string, string>) =>
      fetch(`${ui.url}pin`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, server: s.proxy.serverId, tool: 'move_file', digest: seen.seen_digest, ...over }),
      });
    expect((await pin({ csrf: 'forged' })).status).toBe(403);
    expect((await pin({ digest: 'a-definition-nobody-reviewed' })).status).toBe(403); // the token binds the digest shown
    expect((await pin({ tool: 'write_file' })).status).toBe(403); // and the tool
    expect((await s.person.proxy.getPin(s.proxy.serverId, 'move_file'))?.pinned_digest).toBeNull();
    expect((await pin({})).status).toBe(200);
    expect(await s.person.proxy.getPin(s.proxy.serverId, 'move_file')).toMatchObject({
      pinned_digest: seen.seen_digest,
      pinned_by: 'token:alice',
    });
    expect((await s.client.listTools()).tools.map((t) => t.name)).toContain('move_file');
  });

  it('purges the arguments of a decided act once the retention period has passed, and only then', async () => {
    const args = s.person.pendingArguments;
    const decided = (await s.person.escalations.list()).filter((r) => r.status !== 'PENDING');
    expect(decided.length).toBeGreaterThanOrEqual(3);
    const first = Math.min(...decided.map((r) => r.decided_at!));
    const last = Math.max(...decided.map((r) => r.decided_at!));
    const day = 86_400_000;
    expect(await args.purge(first + 7 * day - 1, 7 * day)).toBe(0);
    for (const r of decided) expect(await args.get(r.candidate_act_id)).toBeDefined();
    expect(await args.purge(last + 7 * day + 1, 7 * day)).toBe(decided.length);
    for (const r of decided) expect(await args.get(r.candidate_act_id)).toBeUndefined();
  });
});

describe.skipIf(!pgs)('an escalated call waiting on a PostgreSQL store', T, () => {
  let s: Setup;
  beforeAll(async () => {
    const schema = pgs!.schema('gate_wait');
    s = await setup('pg', 100_000, {}, () => openPostgresStore(pgs!.url, { schema, poolSize: 2 }));
  }, T.timeout);
  afterAll(async () => {
    await s?.close();
  });

  it('sees the approval made through another pool and runs the call once', async () => {
    const call = write(s, 'pg.txt', 'via postgres');
    const row = await pendingEscalation(s.person);
    expect(
      await decideEscalation(s.person.escalations, {
        candidateActId: row.candidate_act_id,
        status: 'APPROVED',
        approver: 'carol',
        reviewedDigest: row.binding_digest,
        now: Date.now(),
      }),
    ).toMatchObject({ ok: true, decided: true });
    const { r } = await call.result;
    expect(r.isError).toBeFalsy();
    expect(readFileSync(join(s.root, 'pg.txt'), 'utf8')).toBe('via postgres');
    // The proxy journals the outcome after it answered (deferOutcome).
    await expect.poll(async () => (await s.person.journal.get(row.candidate_act_id))?.state).toBe('EFFECTUATED');
  });
});
