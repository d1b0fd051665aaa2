/**
 * The direct path of a plain 2026-07-28 `tools/call` on the proxy's HTTP listener
 * (proxy/direct-call.ts) against the SDK's own path, over real HTTP with a real proxy, a real
 * SQLite store and server-everything as the downstream (over stdio): the same call is sent
 * plain (the direct path) and with one more `_meta` key (the SDK's path: the proxy forwards no
 * agent-chosen `_meta` key, so the downstream sees the same call), and the two answers must be
 * the same bytes — for a plain result, structured content, an image and an annotated text (both
 * answered by the SDK from the direct run's outcome), a deny (an act no person approved), and an unknown
 * tool (a thrown error). Progress, a header mismatch and a wrong token never take the direct
 * path, and every direct call still goes through the gate (its act journaled).
 */
import { join } from 'node:path';
import { type GateStore, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningProxy, startProxy } from '../src/proxy/index.js';
import { GateProxy } from '../src/proxy/proxy.js';
import { directPathPolicy, modernEnvelope, removeTmpDirs, tmpDir } from './procs/common.js';

const everythingServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const POLICY = directPathPolicy('proxy-direct-call');
const ENVELOPE = modernEnvelope('direct-call-test');

let store: GateStore;
let proxy: RunningProxy;
let logs: Array<{ event: string } & Record<string, unknown>>;
/** Agent `Server`s the SDK's path made: one per request it served. */
const sdkServed = vi.spyOn(GateProxy.prototype, 'createAgentServer');

beforeAll(async () => {
  store = await openSqliteStore(join(tmpDir('proxy-direct-call'), 'gate.db'));
  logs = [];
  proxy = await startProxy({
    policy: loadPolicy(POLICY),
    store,
    name: 'direct',
    downstream: { kind: 'stdio', command: process.execPath, args: [everythingServer, 'stdio'] },
    listen: { host: '127.0.0.1', port: 0 },
    approvalTimeoutMs: 2000,
    pinOnFirstUse: true,
    log: (event, fields = {}) => void logs.push({ event, ...fields }),
  });
  // The first list pins every tool (test only: pinOnFirstUse).
  const listed = await post({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: { _meta: ENVELOPE } }, 'tools/list');
  expect(listed.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await proxy?.stop();
  await store?.close();
  removeTmpDirs();
});

interface Answer {
  status: number;
  type: string | null;
  text: string;
}

async function post(
  body: unknown,
  method: string,
  name?: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Answer> {
  const res = await fetch(proxy.listener!.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${proxy.listener!.token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** One call on the direct path (a plain call) and the SDK's path count of agent `Server`s it made. */
async function plainCall(id: number, name: string, args: Record<string, unknown>): Promise<Answer & { sdk: number }> {
  const before = sdkServed.mock.calls.length;
  const a = await post(
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: ENVELOPE } },
    'tools/call',
    name,
  );
  return { ...a, sdk: sdkServed.mock.calls.length - before };
}

/** The same call on the SDK's path: one more `_meta` key (dropped by the proxy, never forwarded). */
async function sdkCall(id: number, name: string, args: Record<string, unknown>): Promise<Answer & { sdk: number }> {
  const before = sdkServed.mock.calls.length;
  const params = { name, arguments: args, _meta: { ...ENVELOPE, 'vrpkit.test/sdk-path': true } };
  const a = await post({ jsonrpc: '2.0', id, method: 'tools/call', params }, 'tools/call', name);
  return { ...a, sdk: sdkServed.mock.calls.length - before };
}

describe('a plain 2026-07-28 tools/call: the direct path answers with the SDK path’s bytes', () => {
  it('a text result: written directly, byte for byte the SDK’s, and the call went through the gate', { timeout: 60_000 }, async () => {
    const direct = await plainCall(7, 'echo', { message: 'hello' });
    const sdk = await sdkCall(7, 'echo', { message: 'hello' });
    expect(direct.sdk).toBe(0);
    expect(sdk.sdk).toBe(1);
    expect(direct).toMatchObject({ status: 200, type: 'application/json' });
    expect(direct.text).toBe(sdk.text);
    expect(JSON.parse(direct.text)).toMatchObject({
      id: 7,
      result: { content: [{ type: 'text', text: 'Echo: hello' }], resultType: 'complete' },
    });
    // Both calls were dispatched and allowed by the gate (an authority consumed for each).
    const calls = logs.filter((l) => l.event === 'tools/call' && l.allow === true && l.invoked === true);
    expect(
      calls.map((l) => typeof l.authority_id),
      JSON.stringify(calls),
    ).toEqual(['string', 'string']);
  });

  it('a string id, structured content: the same bytes', { timeout: 60_000 }, async () => {
    const direct = await plainCall(8, 'get-structured-content', { location: 'Chicago' });
    const sdk = await sdkCall(8, 'get-structured-content', { location: 'Chicago' });
    expect(direct.text).toBe(sdk.text);
    const s1 = await plainCall('s-1' as unknown as number, 'echo', { message: 'id' });
    const s2 = await sdkCall('s-1' as unknown as number, 'echo', { message: 'id' });
    expect(s1.text).toBe(s2.text);
    expect(s1.sdk).toBe(0);
  });

  it('an image and an annotated text: the SDK answers the direct run’s outcome (one run, the same bytes)', {
    timeout: 60_000,
  }, async () => {
    for (const [name, args] of [
      ['get-tiny-image', {}],
      ['get-annotated-message', { messageType: 'error', includeImage: false }],
    ] as const) {
      const direct = await plainCall(9, name, args);
      const sdk = await sdkCall(9, name, args);
      expect(direct.sdk).toBe(1);
      expect(direct.text).toBe(sdk.text);
    }
  });

  it('a deny (an act that needs a person, none approved it within the wait): the same bytes on both paths', {
    timeout: 60_000,
  }, async () => {
    const direct = await plainCall(11, 'get-sum', { a: 1, b: 2 });
    const sdk = await sdkCall(11, 'get-sum', { a: 1, b: 2 });
    expect(direct.sdk).toBe(0);
    expect(JSON.parse(direct.text).result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('EF_APPROVAL_REQUIRED') }, {}],
    });
    expect(direct.text).toBe(sdk.text);
  });

  it('an unknown tool (a thrown error): the SDK’s error answer on both paths', { timeout: 60_000 }, async () => {
    const direct = await plainCall(12, 'no-such-tool', {});
    const sdk = await sdkCall(12, 'no-such-tool', {});
    expect(direct).toMatchObject({ status: sdk.status, type: sdk.type, text: sdk.text });
    expect(JSON.parse(direct.text)).toMatchObject({ id: 12, error: { code: -32602 } });
  });
});

describe('what never takes the direct path', () => {
  it('a progress token: the SDK streams the progress and the result (SSE)', { timeout: 60_000 }, async () => {
    const before = sdkServed.mock.calls.length;
    const params = {
      name: 'trigger-long-running-operation',
      arguments: { duration: 1, steps: 2 },
      _meta: { ...ENVELOPE, progressToken: 'p1' },
    };
    const a = await post({ jsonrpc: '2.0', id: 20, method: 'tools/call', params }, 'tools/call', params.name);
    expect(sdkServed.mock.calls.length - before).toBe(1);
    expect(a.type).toBe('text/event-stream');
    expect(a.text).toContain('notifications/progress');
    expect(a.text).toContain('"id":20');
  });

  it('an Mcp-Name header naming another tool: the SDK’s -32020 answer, nothing run', { timeout: 60_000 }, async () => {
    const before = logs.length;
    const body = { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' }, _meta: ENVELOPE } };
    const a = await post(body, 'tools/call', 'get-sum');
    expect(a.status).toBe(400);
    expect(JSON.parse(a.text)).toMatchObject({ error: { code: -32020 } });
    expect(logs.slice(before).filter((l) => l.event === 'tools/call')).toHaveLength(0);
  });

  it('an envelope the SDK finds malformed: its refusal, nothing run', { timeout: 60_000 }, async () => {
    const before = logs.length;
    const _meta = { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 5 } };
    const a = await post(
      { jsonrpc: '2.0', id: 25, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' }, _meta } },
      'tools/call',
      'echo',
    );
    expect(a.status).toBeGreaterThanOrEqual(400);
    expect(JSON.parse(a.text)).toMatchObject({ error: { code: -32602 } });
    expect(logs.slice(before).filter((l) => l.event === 'tools/call')).toHaveLength(0);
  });

  it('a wrong bearer token: 401 before anything is read or run', { timeout: 60_000 }, async () => {
    const before = logs.length;
    const body = { jsonrpc: '2.0', id: 22, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' }, _meta: ENVELOPE } };
    const a = await post(body, 'tools/call', 'echo', { authorization: 'Bearer wrong' });
    expect(a.status).toBe(401);
    expect(logs.slice(before).filter((l) => l.event === 'tools/call')).toHaveLength(0);
  });

  it('a cancelled call (the agent closes its request mid-call): the proxy stops waiting for it and serves the next call at once', {
    timeout: 60_000,
  }, async () => {
    const abort = new AbortController();
    const params = { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 }, _meta: ENVELOPE };
    const started = Date.now();
    const pending = post({ jsonrpc: '2.0', id: 23, method: 'tools/call', params }, 'tools/call', params.name, {}, abort.signal);
    setTimeout(() => abort.abort(), 500);
    await expect(pending).rejects.toThrow();
    const next = await plainCall(24, 'echo', { message: 'after' });
    expect(JSON.parse(next.text).result.content[0].text).toBe('Echo: after');
    // The proxy did not wait out the 5 s operation to serve the next call.
    expect(Date.now() - started).toBeLessThan(4000);
  });
});
