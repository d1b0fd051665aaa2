/**
 * The gated MCP client against the official SDK `Client` — v2 (the gate's type) and v1 (which a
 * host may still hand it) — and a real MCP server over Streamable HTTP on 127.0.0.1, counting every
 * `tools/call` at the server. Every public method of the `Client` (and of v1's task API) is found
 * by walking its prototype chain, so a method a later SDK adds is exercised too.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Gate, type GateStore, gateMcpClient, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTmpDirs, SIGNING_KEY, tmpDir } from './procs/common.js';
import { hostContext } from './scenarios-gate.js';
import { type CountingMcpServer, startCountingMcpServer } from './scenarios-mcp-server.js';

const DENY_ALL = loadPolicy({ version: 1, policy_id: 'deny-all', otherwise: 'deny' });
const PARAMS = { name: 'repo_deploy', arguments: { env: 'prod', ref: 'main' } };
/** Lifecycle methods: they open or end the connection, they carry no request of their own. */
const LIFECYCLE = new Set(['constructor', 'connect', 'close']);

/** Every public method name on an object's prototype chain (own class and every base class). */
function publicMethods(obj: object): string[] {
  const names = new Set<string>();
  for (let p = Object.getPrototypeOf(obj); p && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const k of Object.getOwnPropertyNames(p))
      if (!LIFECYCLE.has(k) && !k.startsWith('_') && typeof Object.getOwnPropertyDescriptor(p, k)?.value === 'function') names.add(k);
  return [...names].sort();
}

/** The argument shapes that let a method carry a tools/call: a whole request, or tools/call params. */
const ARGUMENT_SHAPES: unknown[][] = [
  [{ method: 'tools/call', params: PARAMS }, CallToolResultSchema],
  [PARAMS, CallToolResultSchema],
  [{ method: 'tools/call', params: PARAMS }, CallToolResultSchema, { task: { ttl: 1000 } }],
];

/** Call a method with one argument shape and let it run to the end (drain a stream); errors are part of the answer. */
async function exercise(target: object, name: string, args: unknown[]): Promise<void> {
  try {
    const out = (target as Record<string, (...a: unknown[]) => unknown>)[name]!(...args);
    const settle = (async () => {
      const v = await out;
      if (v && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')
        for await (const _ of v as AsyncIterable<unknown>);
    })();
    await Promise.race([settle, new Promise((resolve) => setTimeout(resolve, 3000))]);
  } catch {}
}

/** Every public method of the client and of its task API, each with every argument shape. */
async function exerciseAll(client: Client, onEach?: (method: string) => void): Promise<void> {
  const surfaces: Array<[string, object]> = [['', client]];
  try {
    const tasks = (client as unknown as V1Client).experimental?.tasks;
    if (tasks) surfaces.push(['experimental.tasks.', tasks]);
  } catch {
    // The gated client refuses `experimental` itself; the raw client's task API is still exercised below.
  }
  for (const [prefix, target] of surfaces)
    for (const name of publicMethods(target))
      for (const args of ARGUMENT_SHAPES) {
        await exercise(target, name, args);
        onEach?.(prefix + name);
      }
}

/** Each SDK's client, and the methods that send a tools/call when nothing guards them (the control). */
const SDKS = {
  v2: {
    client: (name: string) => new Client({ name, version: '1.0.0' }),
    transport: (url: string) => new StreamableHTTPClientTransport(new URL(url)),
    reaching: ['callTool', 'request'],
  },
  v1: {
    client: (name: string) => new V1Client({ name, version: '1.0.0' }) as unknown as Client,
    transport: (url: string) => new V1Transport(new URL(url)) as unknown as StreamableHTTPClientTransport,
    reaching: ['callTool', 'request', 'requestStream', 'experimental.tasks.callToolStream'],
  },
} as const;

let server: CountingMcpServer;
let store: GateStore;
let gate: Gate;
const clients: Client[] = [];

beforeEach(async () => {
  server = await startCountingMcpServer('git.example');
  store = await openSqliteStore(join(tmpDir('mcp-client'), 'gate.db'));
  gate = new Gate({ store, policy: DENY_ALL, sinkId: 'host-dispatch-1', signingKey: SIGNING_KEY });
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await server.close();
  await store.close();
});
afterAll(removeTmpDirs);

describe.each(['v2', 'v1'] as const)('the gated MCP client can be bypassed (SDK %s Client)', (sdk) => {
  const { client: newClient, transport, reaching } = SDKS[sdk];
  async function connected(): Promise<Client> {
    const client = newClient('bypass-test');
    await client.connect(transport(server.url));
    clients.push(client);
    return client;
  }

  it('ungated, the enumeration reaches the server through every method that can send tools/call', async () => {
    // The control: without the gate these methods do send tools/call, so the test below can fail.
    const client = await connected();
    const reached: string[] = [];
    let seen = 0;
    await exerciseAll(client, (method) => {
      if (server.toolsCallRequests > seen) reached.push(method);
      seen = server.toolsCallRequests;
    });
    expect(reached).toEqual(expect.arrayContaining([...reaching]));
  });

  it('under a deny-all policy no public method of the SDK Client sends tools/call: not the gated client, not the wrapped raw client', async () => {
    const raw = await connected();
    const gated = gateMcpClient(raw, { serverUrl: server.url, context: hostContext(gate) });
    await exerciseAll(gated);
    await exerciseAll(raw);
    // A client connected after wrapping is guarded too (the transport of a later connect).
    const late = newClient('bypass-test-late');
    const lateGated = gateMcpClient(late, { serverUrl: server.url, context: hostContext(gate) });
    await late.connect(transport(server.url));
    clients.push(late);
    await exerciseAll(lateGated);
    await exerciseAll(late);
    expect(server.toolsCallRequests).toBe(0);
    expect(server.deploys).toBe(0);
    // Nothing ran, so nothing was consumed or journaled; the gated calls were denied by policy.
    expect(await store.journal.list()).toEqual([]);
    expect(gated.gateOutcomes.length).toBeGreaterThan(0);
    expect(gated.gateOutcomes.filter((o) => o.invoked)).toEqual([]);
    // The tools/call params shape is denied by policy; the request-object shape is no tools/call act at all.
    expect(new Set(gated.gateOutcomes.map((o) => o.decision.code))).toEqual(new Set(['EF_NOT_AUTHORIZED', 'EF_MALFORMED_ACT']));
    // Discovery still passes through.
    expect((await gated.listTools()).tools.map((t) => t.name)).toEqual(['repo_deploy']);
    await expect(raw.request({ method: 'tools/call', params: PARAMS }, CallToolResultSchema)).rejects.toMatchObject({
      code: 'EF_NOT_AUTHORIZED',
    });
  });
});
