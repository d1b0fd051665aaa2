/**
 * The proxy's per-call hop: what it keeps between calls and what it must still read each time.
 *
 * - pins: the proxy keeps the pins it read while the server's pin version stays the same; a pin
 *   added or removed by `vrp gate tools pin/unpin` in another process bumps it, so the very next
 *   call is let through or refused (no grace period for an unpin). The proxy runs in this process
 *   (`startProxy`, agent over Streamable HTTP with the official SDK `Client`), the downstream is
 *   the real `@modelcontextprotocol/server-filesystem` child, the store a real SQLite file.
 * - the agent's HTTP side: an answer that is not ready when the transport answers the POST still
 *   leaves in one write with its headers (a raw HTTP/1.1 request reads both in its first chunk),
 *   and an answer that takes long (an approval wait sending no event) gets its headers within the bound.
 * - the downstream's HTTP transport: an abort listener on the transport's signal only for a request
 *   still in flight however many it sent, one keep-alive connection for sequential requests, and
 *   closing still aborts a response in flight (real HTTP on 127.0.0.1); a body cancelled unread,
 *   a 204 and a status outside 200–599 raise no uncaught error (each one ended the proxy).
 * - the agent's stdio: a line in pieces, a CRLF line and two lines in one chunk are each one message.
 * - the downstream's `tools/call` results: checked by the SDK's own result schema for the revision
 *   (made once per client, downstream.ts), so a malformed one is refused and a plain one comes back as sent.
 */

import { getEventListeners } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, type JSONRPCMessage, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { loadPolicy, openSqliteStore, type PolicyDocument } from '@vrpkit/gate';
import { repoRoot, runVrp } from '@vrpkit/testkit/cli';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { connectDownstream } from '../src/proxy/downstream.js';
import { DownstreamLink } from '../src/proxy/downstream-link.js';
import { AgentStdioTransport, downstreamFetch, serverIdentity, startProxy } from '../src/proxy/index.js';
import { HEADERS_HOLD_MS } from '../src/proxy/listen.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';

const filesystemServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

const POLICY: PolicyDocument = {
  version: 1,
  policy_id: 'hop',
  informative_defaults: false,
  tools: [{ tool: 'read_*', consequence_class: 'INFORMATIONAL' }],
  hot_envelopes: [{ name: 'reads', consequence_classes: ['INFORMATIONAL'] }],
};

afterAll(removeTmpDirs);

function errorCode(r: CallToolResult): string | undefined {
  if (!r.isError) return undefined;
  const text = (r.content[0] as { type: 'text'; text: string }).text;
  return (JSON.parse(text) as { error: { code: string } }).error.code;
}

describe('pins between calls', () => {
  it('honours a pin and an unpin made by another process on the very next call', { timeout: 180_000 }, async () => {
    const dir = tmpDir('proxy-hop-pins');
    const file = join(dir, 'a.txt');
    writeFileSync(file, 'hello');
    const dbFile = join(dir, 'gate.db');
    const store = await openSqliteStore(dbFile);
    const proxy = await startProxy({
      policy: loadPolicy(POLICY),
      store,
      name: 'hop',
      downstream: { kind: 'stdio', command: process.execPath, args: [filesystemServer, dir] },
      listen: { host: '127.0.0.1', port: 0 },
      log: () => {},
    });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    // `vrp gate tools pin|unpin` as a person runs it: another process, its own store handle.
    const tools = async (verb: 'pin' | 'unpin') => {
      const r = await runVrp(['gate', 'tools', verb, 'read_text_file', '--store', dbFile, '--server', proxy.serverId]);
      expect(r.code, r.stderr).toBe(0);
    };
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(proxy.listener!.url), {
          requestInit: { headers: { authorization: `Bearer ${proxy.listener!.token}` } },
        }),
      );
      await client.listTools();
      const read = async () => (await client.callTool({ name: 'read_text_file', arguments: { path: file } })) as CallToolResult;
      // Not pinned: refused, twice on the same pins (the second call reads only the pin version).
      expect(errorCode(await read())).toBe('EF_TOOL_NOT_PINNED');
      expect(errorCode(await read())).toBe('EF_TOOL_NOT_PINNED');
      await tools('pin');
      const ok = await read();
      expect(ok.isError).toBeFalsy();
      expect(JSON.stringify(ok.content)).toContain('hello');
      expect((await read()).isError).toBeFalsy();
      // Unpinned by another process: the very next call is refused, with no time bound to wait out.
      await tools('unpin');
      expect(errorCode(await read())).toBe('EF_TOOL_NOT_PINNED');
      await tools('pin');
      expect((await read()).isError).toBeFalsy();
    } finally {
      await client.close().catch(() => {});
      await proxy.stop();
      await store.close();
    }
  });
});

/** A raw Streamable HTTP session on the proxy's agent side: `initialize` sent, the headers every later request carries. */
async function rawSession(listener: { url: string; token?: string }): Promise<Record<string, string>> {
  const headers = {
    authorization: `Bearer ${listener.token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
  };
  const init = await fetch(listener.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  await init.text();
  return { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id')! };
}

describe('the agent side over HTTP', () => {
  /** The first bytes the proxy sends back for one raw HTTP/1.1 POST on a connection of its own, and the ms they took. */
  function firstRead(url: string, headers: Record<string, string>, body: string): Promise<{ text: string; ms: number }> {
    const { hostname, port, pathname } = new URL(url);
    return new Promise((resolve, reject) => {
      let sent = 0;
      const socket = connect(Number(port), hostname, () => {
        const head = Object.entries({ ...headers, host: `${hostname}:${port}`, 'content-length': String(Buffer.byteLength(body)) })
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('');
        sent = performance.now();
        socket.write(`POST ${pathname} HTTP/1.1\r\n${head}\r\n${body}`);
      });
      socket.once('data', (d) => {
        socket.destroy();
        resolve({ text: d.toString('utf8'), ms: performance.now() - sent });
      });
      socket.once('error', reject);
    });
  }

  it('sends an answer that is not ready at once in one write with its headers, not after them', { timeout: 60_000 }, async () => {
    const dir = tmpDir('proxy-hop-write');
    const store = await openSqliteStore(join(dir, 'gate.db'));
    const proxy = await startProxy({
      policy: loadPolicy(POLICY),
      store,
      name: 'hop',
      downstream: { kind: 'stdio', command: process.execPath, args: [filesystemServer, dir] },
      listen: { host: '127.0.0.1', port: 0 },
      log: () => {},
    });
    try {
      const session = await rawSession(proxy.listener!);
      // tools/list waits for the downstream child's answer, so the transport's stream has no event yet when it answers.
      const { text: first, ms } = await firstRead(
        proxy.listener!.url,
        session,
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      );
      expect(first).toMatch(/^HTTP\/1\.1 200 /);
      // Header names are case-insensitive (RFC 9110 §5.1).
      expect(first.toLowerCase()).toContain('content-type: text/event-stream');
      if (first.includes('event: message')) {
        expect(first).toContain('"id":2');
      } else {
        // Headers alone only once the hold bound ran out: a downstream slower than it (a loaded
        // machine) gets its headers first by design; headers sent sooner than that are the defect.
        expect(ms).toBeGreaterThanOrEqual(HEADERS_HOLD_MS - 1);
      }
    } finally {
      await proxy.stop();
      await store.close();
    }
  });
});

describe('the agent side over HTTP: a long call', () => {
  it('still sends its headers within the hold bound while an answer takes long (an approval wait with no progress)', {
    timeout: 60_000,
  }, async () => {
    const dir = tmpDir('proxy-hop-hold');
    const store = await openSqliteStore(join(dir, 'gate.db'));
    const proxy = await startProxy({
      // write_file is outside every envelope: the call escalates and waits for a person, sending no event meanwhile.
      policy: loadPolicy({ ...POLICY, tools: [...POLICY.tools!, { tool: 'write_file', consequence_class: 'PERSISTENT_STATE_CHANGE' }] }),
      store,
      name: 'hold',
      downstream: { kind: 'stdio', command: process.execPath, args: [filesystemServer, dir] },
      listen: { host: '127.0.0.1', port: 0 },
      pinOnFirstUse: true,
      approvalTimeoutMs: 3_000,
      log: () => {},
    });
    try {
      const session = await rawSession(proxy.listener!);
      await (
        await fetch(proxy.listener!.url, {
          method: 'POST',
          headers: session,
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        })
      ).text();
      const started = Date.now();
      const res = await fetch(proxy.listener!.url, {
        method: 'POST',
        headers: session,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'write_file', arguments: { path: join(dir, 'w.txt'), content: 'x' } },
        }),
      });
      // The headers came before the wait ended (well before its 3 s), and the answer still follows them.
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const text = await res.text();
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
      expect(text).toContain('"id":3');
      expect(text).toContain('EF_APPROVAL_REQUIRED');
    } finally {
      await proxy.stop();
      await store.close();
    }
  });
});

describe('a downstream that cannot be reached at start', () => {
  it('fails with downstream_unavailable, a stable code, not internal_error (stdio and HTTP)', async () => {
    const dir = tmpDir('proxy-hop-unreachable');
    const store = await openSqliteStore(join(dir, 'gate.db'));
    // A port nothing listens on: one opened and closed again.
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const port = (free.address() as AddressInfo).port;
    await new Promise<void>((r) => free.close(() => r()));
    const start = (downstream: Parameters<typeof startProxy>[0]['downstream']) =>
      startProxy({ policy: loadPolicy(POLICY), store, name: 'gone', downstream, log: () => {} });
    try {
      await expect(start({ kind: 'stdio', command: join(dir, 'no-such-server'), args: ['--secret=s3cret'] })).rejects.toMatchObject({
        code: 'downstream_unavailable',
        message: expect.not.stringContaining('s3cret'),
      });
      await expect(
        start({ kind: 'http', url: `http://127.0.0.1:${port}/mcp?key=k3y`, headers: { authorization: 'Bearer s3cret' } }),
      ).rejects.toMatchObject({ code: 'downstream_unavailable', message: expect.not.stringMatching(/s3cret|k3y/) });
    } finally {
      await store.close();
    }
  });
});

describe('serverIdentity', () => {
  const http = (url: string) => serverIdentity({ kind: 'http', url, headers: {} }, 'ignored');
  it('an HTTP server is its URL without credentials or fragment, its query (an API key, often) a digest', () => {
    expect(http('https://h.example/mcp')).toBe('https://h.example/mcp');
    const id = http('https://user:pw@h.example/mcp?api_key=s3cret#frag');
    expect(id).toMatch(/^https:\/\/h\.example\/mcp#[A-Za-z0-9_-]{43}$/);
    expect(id).not.toMatch(/s3cret|user|pw|frag/);
    // The same query is the same server; another query is another server (its pins apart).
    expect(http('https://h.example/mcp?api_key=s3cret')).toBe(id);
    expect(http('https://h.example/mcp?api_key=other')).not.toBe(id);
  });
  it('a child process is the proxy name and a digest of its command line', () => {
    const id = serverIdentity({ kind: 'stdio', command: 'server', args: ['--token=s3cret'] }, 'files');
    expect(id).toMatch(/^stdio:files#[A-Za-z0-9_-]{43}$/);
  });
});

describe('downstreamFetch', () => {
  let server: Server | undefined;
  const dispatcher = new Agent();
  afterAll(async () => {
    server?.closeAllConnections();
    await dispatcher.destroy();
  });

  /** A server that answers `/ok` at once and holds `/hold` open after its first chunk; it counts connections. */
  async function serve(): Promise<{ url: string; closed: Promise<void>; connections: () => number }> {
    let onClosed!: () => void;
    const closed = new Promise<void>((r) => {
      onClosed = r;
    });
    let connections = 0;
    server = createServer((req, res) => {
      if (req.url === '/ok') return void res.end('ok');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      res.on('close', onClosed);
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, closed, connections: () => connections };
  }

  it('leaves no listener on the long-lived signal once a request is done, reuses its connection, and aborting still aborts a response in flight', async () => {
    const { url, closed, connections } = await serve();
    const f = downstreamFetch(dispatcher);
    const outer = new AbortController();
    const ok = async () => expect(await (await f(`${url}/ok`, { signal: outer.signal })).text()).toBe('ok');
    // undici may open a second connection during the first few requests; from there on, none.
    for (let i = 0; i < 5; i++) await ok();
    const opened = connections();
    for (let i = 0; i < 50; i++) await ok();
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);
    expect(connections()).toBe(opened);

    const held = await f(`${url}/hold`, { signal: outer.signal });
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(1);
    const reader = held.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    outer.abort(new Error('transport closed'));
    await expect(reader.read()).rejects.toThrow();
    await closed; // the connection was torn down, not left streaming
    // An aborted signal is refused before anything is sent, as fetch itself does.
    await expect(f(`${url}/ok`, { signal: outer.signal })).rejects.toThrow();
  });

  it('holds more requests in flight on the long-lived signal than Node warns about by default, without a warning', async () => {
    const { url } = await serve();
    const f = downstreamFetch(dispatcher);
    const outer = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      // Twelve calls still running downstream (Node's default bound is ten listeners per signal).
      const held = await Promise.all(Array.from({ length: 12 }, () => f(`${url}/hold`, { signal: outer.signal })));
      expect(getEventListeners(outer.signal, 'abort')).toHaveLength(12);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      outer.abort(new Error('transport closed'));
      await Promise.all(held.map((r) => r.body!.cancel()));
    } finally {
      process.off('warning', onWarning);
      server!.closeAllConnections();
      server!.close();
    }
  });

  it('cancels a body it never read (the SDK does for an unexpected content type) without an uncaught error', async () => {
    // A POST answered once its body is read: the answer's bytes are buffered when the SDK cancels.
    const html = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url !== '/') return void res.writeHead(Number(req.url!.slice(1)), { 'content-type': 'application/json' }).end();
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>not MCP</html>');
      });
    });
    await new Promise<void>((r) => html.listen(0, '127.0.0.1', r));
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => void uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const url = `http://127.0.0.1:${(html.address() as AddressInfo).port}/`;
      const f = downstreamFetch(dispatcher);
      const outer = new AbortController();
      for (let i = 0; i < 20; i++) {
        const res = await f(url, {
          method: 'POST',
          body: '{}',
          headers: new Headers({ 'content-type': 'application/json' }),
          signal: outer.signal,
        });
        expect(res.headers.get('content-type')).toBe('text/html');
        await res.body?.cancel();
      }
      await new Promise((r) => setTimeout(r, 100));
      expect(uncaught).toEqual([]);
      expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);
      // A body read to its end still arrives whole.
      expect(await (await f(url, { method: 'POST', body: '{}', signal: outer.signal })).text()).toBe('<html>not MCP</html>');
      // A null-body status answers with no body; a status fetch would not take fails as fetch does.
      expect((await f(`${url}204`, { method: 'POST', body: '{}', signal: outer.signal })).status).toBe(204);
      await expect(f(`${url}600`, { method: 'POST', body: '{}', signal: outer.signal })).rejects.toThrow(/status 600/);
      await new Promise((r) => setTimeout(r, 100));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      html.closeAllConnections();
      html.close();
    }
  });
});

describe('AgentStdioTransport lines', () => {
  it('reads a line in pieces, a CRLF line and two lines in one chunk as one message each', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const t = new AgentStdioTransport(input, output);
    const got: JSONRPCMessage[] = [];
    t.onmessage = (m) => got.push(m);
    await t.start();
    const a = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    input.write(a.slice(0, 5));
    input.write(a.slice(5, 12));
    input.write(`${a.slice(12)}\n`);
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\r\n`);
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' })}\n`,
    );
    await new Promise((r) => setImmediate(r));
    expect(got.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3, 4]);
    expect(output.read()).toBeNull(); // no error replies
    await t.close();
  });
});

/**
 * A 2025-11-25 server over stdio in a few lines: `initialize`, one tool `answer`, whose result is
 * the call's `result` argument as it came (any other request: -32601, as a 2025-only server answers the probe).
 */
const RAW_SERVER = `
const rl = require('node:readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize')
    return send({ id: m.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } } });
  if (m.method === 'tools/list') return send({ id: m.id, result: { tools: [{ name: 'answer', inputSchema: { type: 'object' } }] } });
  if (m.method === 'tools/call') return send({ id: m.id, result: m.params.arguments.result });
  send({ id: m.id, error: { code: -32601, message: 'Method not found' } });
});`;

describe("the downstream's tools/call results", () => {
  it('a malformed result is refused by the SDK’s result check, a plain one comes back as sent, call after call', async () => {
    const script = join(tmpDir('proxy-hop-raw'), 'raw-server.cjs');
    writeFileSync(script, RAW_SERVER);
    const client = await connectDownstream({ kind: 'stdio', command: process.execPath, args: [script] });
    const link = new DownstreamLink(client, {
      serverId: 'raw',
      log: () => {},
      clock: { now: () => Date.now() },
      onNotification: async () => {},
      onRespawned: () => {},
    });
    const extra = { signal: new AbortController().signal, sendNotification: async () => {} };
    const call = (result: unknown) => link.callTool({ name: 'answer', arguments: { result } }, extra);
    try {
      for (let i = 0; i < 2; i++) {
        await expect(call({ content: 'not an array' })).rejects.toThrow(/Invalid result for tools\/call/);
        await expect(call({ content: [{ type: 'text', text: 7 }] })).rejects.toThrow(/Invalid result for tools\/call/);
        expect(await call({ content: [{ type: 'text', text: `ok ${i}` }] })).toEqual({ content: [{ type: 'text', text: `ok ${i}` }] });
      }
    } finally {
      await link.close();
    }
  });
});
