/**
 * The gate proxy on MCP SDK v2 and both protocol revisions (issue 32 items 3, 6 and 7), with the
 * proxy in this process (`startProxy`), real downstream servers (children over stdio, servers on
 * 127.0.0.1 over Streamable HTTP), a real SQLite store and the official SDK clients as agents:
 *
 * - each downstream's revision is negotiated (2026-07-28 first, 2025-11-25 after it) with a
 *   2026-only, a dual and a 2025-only server, over stdio and HTTP; a stdio child is started once
 *   (the probe runs on it, not on a second one) and a reconnect reuses the verdict (no probe);
 * - the HTTP listener refuses a foreign `Host`/`Origin` even with the valid token (DNS rebinding);
 * - a downstream's tool-list change (`notifications/tools/list_changed` on 2025, `subscriptions/listen`
 *   on 2026) makes the proxy list again at once, and the agents hear of it; `ttlMs` is honoured;
 * - one log line names `vrp gate tools pin` when the agent is listed zero tools; error messages
 *   reach a v1 agent with one "MCP error -32602:" label, not two.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  Client,
  type JSONRPCMessage,
  type Notification,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type GateStore, loadPolicy, openSqliteStore, type PolicyDocument } from '@vrpkit/gate';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { connectDownstream, type DownstreamSpec } from '../src/proxy/downstream.js';
import { type RunningProxy, startProxy } from '../src/proxy/index.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { type FixtureEra, startV2HttpServer } from './procs/mcp-v2-server.js';

const fixture = fileURLToPath(new URL('./procs/mcp-v2-server.ts', import.meta.url));
const everythingServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const POLICY: PolicyDocument = {
  version: 1,
  policy_id: 'proxy-revisions',
  informative_defaults: false,
  tools: [
    { tool: 'read_*', consequence_class: 'INFORMATIONAL' },
    { tool: 'echo', consequence_class: 'INFORMATIONAL' },
  ],
  hot_envelopes: [{ name: 'reads', consequence_classes: ['INFORMATIONAL'] }],
};

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {});
});
afterAll(removeTmpDirs);

/** The fixture as a stdio child on one era, counting its starts in a file. */
function stdioFixture(era: FixtureEra, extra: { ttlMs?: number } = {}): { spec: DownstreamSpec; starts(): number } {
  const spawnLog = join(tmpDir('proxy-revisions-spawn'), 'starts');
  return {
    spec: {
      kind: 'stdio',
      command: process.execPath,
      args: ['--import', 'tsx', '--conditions=vrpkit-source', fixture, JSON.stringify({ era, spawnLog, ...extra })],
    },
    starts: () => {
      try {
        return readFileSync(spawnLog, 'utf8').trim().split('\n').length;
      } catch {
        return 0;
      }
    },
  };
}

interface Started {
  proxy: RunningProxy;
  logs: Array<{ event: string } & Record<string, unknown>>;
  store: GateStore;
}

async function proxyFor(downstream: DownstreamSpec, o: { pinOnFirstUse?: boolean; toolsRelistMs?: number } = {}): Promise<Started> {
  const store = await openSqliteStore(join(tmpDir('proxy-revisions'), 'gate.db'));
  closers.push(() => store.close());
  const logs: Started['logs'] = [];
  const proxy = await startProxy({
    policy: loadPolicy(POLICY),
    store,
    name: 'revisions',
    downstream,
    listen: { host: '127.0.0.1', port: 0 },
    pinOnFirstUse: o.pinOnFirstUse ?? true,
    log: (event, fields = {}) => void logs.push({ event, ...fields }),
    ...(o.toolsRelistMs !== undefined ? { toolsRelistMs: o.toolsRelistMs } : {}),
  });
  closers.push(() => proxy.stop());
  return { proxy, logs, store };
}

/** An SDK v2 agent pinned to 2026-07-28 on the proxy's HTTP listener. */
async function modernAgent(proxy: RunningProxy): Promise<Client> {
  const client = new Client({ name: 'v2-agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(proxy.listener!.url), {
      requestInit: { headers: { authorization: `Bearer ${proxy.listener!.token}` } },
    }),
  );
  closers.push(() => client.close());
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  return client;
}

/** An SDK v1 agent on 2025-11-25 (a session) on the proxy's HTTP listener. */
async function legacyAgent(proxy: RunningProxy): Promise<V1Client> {
  const client = new V1Client({ name: 'v1-agent', version: '1.0.0' });
  await client.connect(
    new V1Transport(new URL(proxy.listener!.url), { requestInit: { headers: { authorization: `Bearer ${proxy.listener!.token}` } } }),
  );
  closers.push(() => client.close());
  return client;
}

function revisionOf(logs: Started['logs']): unknown {
  return logs.find((l) => l.event === 'downstream_connected')?.protocol_version;
}

async function echoThrough(client: Client): Promise<string> {
  const r = await client.callTool({ name: 'read_echo', arguments: { text: 'hi' } });
  expect(r.isError, JSON.stringify(r)).toBeFalsy();
  return (r.content[0] as { text: string }).text;
}

describe('downstream negotiation: 2026-07-28 first, 2025-11-25 after it, per server identity', () => {
  it.each([
    ['modern', '2026-07-28'],
    ['dual', '2026-07-28'],
    ['legacy', '2025-11-25'],
  ] as const)('a %s stdio downstream speaks %s, started once (the probe runs on it)', { timeout: 120_000 }, async (era, revision) => {
    const child = stdioFixture(era);
    const { proxy, logs } = await proxyFor(child.spec);
    expect(revisionOf(logs)).toBe(revision);
    const agent = await modernAgent(proxy);
    expect((await agent.listTools()).tools.map((t) => t.name).sort()).toEqual(['read_echo', 'read_grow']);
    expect(await echoThrough(agent)).toBe('echo: hi');
    expect(child.starts()).toBe(1);
  });

  it('a stdio downstream that exits on the probe is a 2025 server, started again for initialize', { timeout: 120_000 }, async () => {
    const child = stdioFixture('exits-on-probe');
    const { proxy, logs } = await proxyFor(child.spec);
    expect(revisionOf(logs)).toBe('2025-11-25');
    expect(await echoThrough(await modernAgent(proxy))).toBe('echo: hi');
    // Started twice only because the first one exited on the probe.
    expect(child.starts()).toBe(2);
  });

  it.each([
    ['modern', '2026-07-28'],
    ['dual', '2026-07-28'],
  ] as const)(
    'a %s HTTP downstream speaks %s; a reconnect reuses the verdict without probing',
    { timeout: 60_000 },
    async (era, revision) => {
      const server = await startV2HttpServer(era);
      closers.push(() => server.close());
      const spec: DownstreamSpec = { kind: 'http', url: server.url, headers: {} };
      const { proxy, logs } = await proxyFor(spec);
      expect(revisionOf(logs)).toBe(revision);
      expect(await echoThrough(await modernAgent(proxy))).toBe('echo: hi');
      expect(server.methods.filter((m) => m === 'server/discover')).toHaveLength(1);
      // The same identity again (as a respawn or reconnect does): the remembered verdict, no probe.
      const again = await connectDownstream(spec);
      closers.push(() => again.close());
      expect(again.getNegotiatedProtocolVersion()).toBe(revision);
      expect(server.methods.filter((m) => m === 'server/discover')).toHaveLength(1);
    },
  );

  it('server-everything (SDK v1, 2025 only) over stdio: 2025-11-25, and a 2026 agent is served through the proxy', {
    timeout: 120_000,
  }, async () => {
    const { proxy, logs } = await proxyFor({ kind: 'stdio', command: process.execPath, args: [everythingServer, 'stdio'] });
    expect(revisionOf(logs)).toBe('2025-11-25');
    const agent = await modernAgent(proxy);
    const r = await agent.callTool({ name: 'echo', arguments: { message: 'hello' } });
    expect((r.content[0] as { text: string }).text).toBe('Echo: hello');
    // The proxy's list depends on pins a person may change at any moment: immediately stale, this gateway's own.
    expect(await agent.listTools()).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
  });

  it("the 2026-07-28 leg checks the Mcp-Method header against the body (the SDK's strict per-request serving)", {
    timeout: 60_000,
  }, async () => {
    const server = await startV2HttpServer('dual');
    closers.push(() => server.close());
    const { proxy } = await proxyFor({ kind: 'http', url: server.url, headers: {} });
    const { url, token } = proxy.listener!;
    const post = (method: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
    const ok = await post('tools/list');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ id: 1, result: { resultType: 'complete', ttlMs: 0, cacheScope: 'private' } });
    const mismatched = await post('tools/call');
    expect(mismatched.status).toBe(400);
    expect(await mismatched.json()).toMatchObject({ error: { code: expect.any(Number) } });
  });
});

/** One raw POST to the listener with these headers; its status and body. */
function rawPost(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

describe('the HTTP listener: Host and Origin checked, token or not (DNS rebinding)', () => {
  it('refuses a foreign Host or Origin with the valid token (403), serves loopback ones', { timeout: 60_000 }, async () => {
    const server = await startV2HttpServer('dual');
    closers.push(() => server.close());
    const { proxy } = await proxyFor({ kind: 'http', url: server.url, headers: {} });
    const { url, token } = proxy.listener!;
    const auth = { authorization: `Bearer ${token}` };
    const evil = await rawPost(url, { ...auth, host: 'evil.example.com', origin: 'http://evil.example.com' });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) } });
    // The right host, a foreign page's origin: refused too.
    const port = new URL(url).port;
    expect((await rawPost(url, { ...auth, host: `127.0.0.1:${port}`, origin: 'http://evil.example.com' })).status).toBe(403);
    // Without the token, the foreign host is still refused before the token is read (403, not 401).
    expect((await rawPost(url, { host: 'evil.example.com' })).status).toBe(403);
    // Loopback host and origin: served.
    expect((await rawPost(url, { ...auth, host: `localhost:${port}`, origin: `http://localhost:${port}` })).status).toBe(200);
  });

  it('accepts a configured allowed host', { timeout: 60_000 }, async () => {
    const server = await startV2HttpServer('dual');
    closers.push(() => server.close());
    const store = await openSqliteStore(join(tmpDir('proxy-revisions'), 'gate.db'));
    closers.push(() => store.close());
    const proxy = await startProxy({
      policy: loadPolicy(POLICY),
      store,
      name: 'hosts',
      downstream: { kind: 'http', url: server.url, headers: {} },
      listen: { host: '127.0.0.1', port: 0, allowedHosts: ['gate.internal'] },
      log: () => {},
    });
    closers.push(() => proxy.stop());
    const auth = { authorization: `Bearer ${proxy.listener!.token}` };
    expect((await rawPost(proxy.listener!.url, { ...auth, host: 'gate.internal', origin: 'http://gate.internal' })).status).toBe(200);
    expect((await rawPost(proxy.listener!.url, { ...auth, host: 'evil.example.com' })).status).toBe(403);
  });
});

describe('2025-11-25 sessions on the HTTP listener (Streamable HTTP, session management)', () => {
  it('a request on a terminated or unknown session is answered 404, so the client starts a new one; initialize still starts one', {
    timeout: 60_000,
  }, async () => {
    const server = await startV2HttpServer('dual');
    closers.push(() => server.close());
    const { proxy } = await proxyFor({ kind: 'http', url: server.url, headers: {} });
    const { url, token } = proxy.listener!;
    const transport = new V1Transport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new V1Client({ name: 'v1-agent', version: '1.0.0' });
    await client.connect(transport);
    closers.push(() => client.close());
    const sid = transport.sessionId as string;
    expect(sid).toEqual(expect.any(String));
    const send = (method: 'GET' | 'POST' | 'DELETE', session: string, message?: object) =>
      fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': '2025-11-25',
          'mcp-session-id': session,
        },
        ...(message ? { body: JSON.stringify(message) } : {}),
      });
    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
    // Live: served.
    const live = await send('POST', sid, list);
    expect(live.status).toBe(200);
    await live.body?.cancel();
    // The client ends it (DELETE), then a request carrying its id: 404 with the SDK's JSON-RPC wording.
    await transport.terminateSession();
    for (const [method, message] of [['POST', list], ['GET'], ['DELETE']] as const) {
      const gone = await send(method, sid, message);
      expect(gone.status, `${method} on a terminated session`).toBe(404);
      expect(await gone.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
    }
    // An id this listener never issued: the same.
    expect((await send('POST', 'never-issued', list)).status).toBe(404);
    // initialize with the stale id starts a new session (the client's recovery).
    const again = await send('POST', sid, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(again.status).toBe(200);
    const fresh = again.headers.get('mcp-session-id');
    await again.body?.cancel();
    expect(fresh).toEqual(expect.any(String));
    expect(fresh).not.toBe(sid);
  });
});

describe('tool-list changes: the proxy lists again at once and re-compares the pins', () => {
  /** Whether the proxy recorded (and, pinning on first use, pinned) read_extra: it listed the downstream again. */
  const relisted = (logs: Started['logs']) => logs.some((l) => l.event === 'tool_pinned_on_first_use' && l.tool === 'read_extra');

  it('2025-11-25 downstream: notifications/tools/list_changed; a v1 agent hears it', { timeout: 120_000 }, async () => {
    const { proxy, logs } = await proxyFor(stdioFixture('legacy').spec, { toolsRelistMs: 600_000 });
    expect(revisionOf(logs)).toBe('2025-11-25');
    const agent = await legacyAgent(proxy);
    const heard: Notification[] = [];
    agent.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void heard.push(n));
    await agent.listTools();
    // The v1 agent's session needs its GET stream open to hear unasked notifications.
    await expect.poll(() => agent.transport !== undefined).toBe(true);
    const grown = await agent.callTool({ name: 'read_grow', arguments: {} });
    expect(grown.isError).toBeFalsy();
    // No agent request in between: the notification alone made the proxy list again.
    await expect.poll(() => relisted(logs), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain('read_extra');
  });

  it('2026-07-28 downstream: its subscriptions/listen stream; a 2026 agent listening hears it', { timeout: 60_000 }, async () => {
    const server = await startV2HttpServer('modern');
    closers.push(() => server.close());
    const { proxy, logs } = await proxyFor({ kind: 'http', url: server.url, headers: {} }, { toolsRelistMs: 600_000 });
    expect(revisionOf(logs)).toBe('2026-07-28');
    await expect.poll(() => server.methods.includes('subscriptions/listen')).toBe(true);
    const agent = await modernAgent(proxy);
    const heard: unknown[] = [];
    agent.setNotificationHandler('notifications/tools/list_changed', (n) => void heard.push(n));
    const subscription = await agent.listen({ toolsListChanged: true });
    closers.push(() => subscription.close());
    await agent.listTools();
    server.grow();
    await expect.poll(() => relisted(logs), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain('read_extra');
  });

  it("honours a downstream's ttlMs: a call after it expired lists again, one within it does not", { timeout: 60_000 }, async () => {
    const server = await startV2HttpServer('modern', { ttlMs: 1500, cacheScope: 'private' });
    closers.push(() => server.close());
    const { proxy } = await proxyFor({ kind: 'http', url: server.url, headers: {} }, { toolsRelistMs: 600_000 });
    const agent = await modernAgent(proxy);
    await echoThrough(agent);
    const lists = () => server.methods.filter((m) => m === 'tools/list').length;
    const before = lists();
    await echoThrough(agent);
    expect(lists()).toBe(before);
    await new Promise((r) => setTimeout(r, 1700));
    await echoThrough(agent);
    expect(lists()).toBe(before + 1);
  });
});

describe('interop (issue 32 item 7)', () => {
  it('logs one line naming `vrp gate tools pin` while the agent is listed zero tools', { timeout: 60_000 }, async () => {
    const server = await startV2HttpServer('dual');
    closers.push(() => server.close());
    const { proxy, logs } = await proxyFor({ kind: 'http', url: server.url, headers: {} }, { pinOnFirstUse: false });
    const agent = await modernAgent(proxy);
    expect((await agent.listTools()).tools).toEqual([]);
    expect((await agent.listTools()).tools).toEqual([]);
    const hints = logs.filter((l) => l.event === 'tools_held_until_pinned');
    expect(hints).toHaveLength(1);
    expect(hints[0]!.message).toContain('vrp gate tools pin');
  });

  it('an error reaches a v1 agent with one "MCP error -32602:" label, from the proxy and from a v1 downstream', {
    timeout: 120_000,
  }, async () => {
    const { proxy } = await proxyFor({ kind: 'stdio', command: process.execPath, args: [everythingServer, 'stdio'] });
    const agent = await legacyAgent(proxy);
    const unknownTool = await agent.callTool({ name: 'no_such_tool', arguments: {} }).then(
      (r) => JSON.stringify(r),
      (e: Error) => e.message,
    );
    expect(unknownTool).toContain('no_such_tool');
    expect(unknownTool).not.toMatch(/MCP error -?\d+: MCP error/);
    const unknownPrompt = await agent.getPrompt({ name: 'no_such_prompt' }).then(
      (r) => JSON.stringify(r),
      (e: Error) => e.message,
    );
    expect(unknownPrompt).toMatch(/^MCP error -?\d+: /);
    expect(unknownPrompt).not.toMatch(/MCP error -?\d+: MCP error/);
  });
});

/** The agent's end of an in-process stdio pair: newline-delimited JSON-RPC, as the MCP stdio transport frames it. */
class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffered = '';
  constructor(
    private readonly input: PassThrough,
    private readonly output: PassThrough,
  ) {}
  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      for (let i = this.buffered.indexOf('\n'); i >= 0; i = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, i);
        this.buffered = this.buffered.slice(i + 1);
        if (line.trim()) this.onmessage?.(JSON.parse(line) as JSONRPCMessage);
      }
    });
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.output.write(`${JSON.stringify(message)}\n`);
  }
  async close(): Promise<void> {
    this.output.end();
    this.onclose?.();
  }
}

describe("the stdio agent side on 2026-07-28 (serveStdio on the proxy's own stdio transport)", () => {
  it('a pinned 2026 agent lists and calls, and hears a downstream list change on its subscription', { timeout: 60_000 }, async () => {
    const server = await startV2HttpServer('modern');
    closers.push(() => server.close());
    const store = await openSqliteStore(join(tmpDir('proxy-revisions'), 'gate.db'));
    closers.push(() => store.close());
    const toProxy = new PassThrough();
    const fromProxy = new PassThrough();
    const logs: Started['logs'] = [];
    const proxy = await startProxy({
      policy: loadPolicy(POLICY),
      store,
      name: 'stdio-modern',
      downstream: { kind: 'http', url: server.url, headers: {} },
      stdio: { input: toProxy, output: fromProxy },
      pinOnFirstUse: true,
      toolsRelistMs: 600_000,
      log: (event, fields = {}) => void logs.push({ event, ...fields }),
    });
    closers.push(() => proxy.stop());
    const agent = new Client({ name: 'v2-stdio-agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await agent.connect(new LineTransport(fromProxy, toProxy));
    closers.push(() => agent.close());
    expect(agent.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect((await agent.listTools()).tools.map((t) => t.name).sort()).toEqual(['read_echo', 'read_grow']);
    expect(await echoThrough(agent)).toBe('echo: hi');
    const heard: unknown[] = [];
    agent.setNotificationHandler('notifications/tools/list_changed', (n) => void heard.push(n));
    const subscription = await agent.listen({ toolsListChanged: true });
    closers.push(() => subscription.close());
    server.grow();
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain('read_extra');
  });
});
