/**
 * The direct path of a plain `tools/call` on the proxy's stdio side (proxy/stdio-call.ts) against
 * the SDK's own path, on both agent revisions, with a real proxy, a real SQLite store and
 * server-everything as the downstream (over stdio): the same call is sent plain (the direct path)
 * and with one more `_meta` key (the SDK's path: the proxy forwards no agent-chosen `_meta` key, so
 * the downstream sees the same call), and the two answers must be the same bytes — for a text
 * result, structured content, a string id, an image and an annotated text (both answered by the
 * SDK from the direct run's outcome, the call run once), a deny, and an unknown tool (a thrown
 * error). A progress token and a malformed envelope never take the direct path, a call before the
 * connection is serving neither, and a cancelled direct call is never answered.
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { type GateStore, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningProxy, startProxy } from '../src/proxy/index.js';
import { GateProxy } from '../src/proxy/proxy.js';
import { directPathPolicy, modernEnvelope, removeTmpDirs, tmpDir } from './procs/common.js';

const everythingServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const POLICY = directPathPolicy('proxy-stdio-call');
const ENVELOPE = modernEnvelope('stdio-call-test');

/** The direct path's runs (each call it takes runs the pipeline through one of these). */
const directLegacy = vi.spyOn(GateProxy.prototype, 'callPlainLegacy');
const directModern = vi.spyOn(GateProxy.prototype, 'callPlainModern');
/** Every run of the pipeline, on either path. */
const pipeline = vi.spyOn(GateProxy.prototype, 'callTool');

/** An agent on the proxy's stdio: lines written, answers read by id. */
class Agent {
  readonly input = new PassThrough();
  readonly output = new PassThrough();
  readonly lines: string[] = [];
  private buffered = '';
  private waiters: Array<() => void> = [];

  constructor() {
    this.output.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      for (let i = this.buffered.indexOf('\n'); i >= 0; i = this.buffered.indexOf('\n')) {
        this.lines.push(this.buffered.slice(0, i));
        this.buffered = this.buffered.slice(i + 1);
      }
      for (const w of this.waiters.splice(0)) w();
    });
  }

  send(message: unknown): void {
    this.input.write(`${JSON.stringify(message)}\n`);
  }

  /** The answer line to request `id` (taken: a later request may reuse the id). */
  async answer(id: string | number, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.lines.findIndex((l) => {
        const m = JSON.parse(l) as { id?: unknown; method?: unknown };
        return m.id === id && m.method === undefined;
      });
      if (i >= 0) return this.lines.splice(i, 1)[0] as string;
      if (Date.now() > deadline) throw new Error(`no answer to ${id}: ${this.lines.join('\n')}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  async request(id: string | number, method: string, params: Record<string, unknown>): Promise<string> {
    this.send({ jsonrpc: '2.0', id, method, params });
    return this.answer(id);
  }
}

interface Connection {
  era: 'legacy' | 'modern';
  agent: Agent;
  proxy: RunningProxy;
  store: GateStore;
  /** The call's params on this revision: plain, or with one agent-chosen `_meta` key (the SDK's path). */
  params(name: string, args: Record<string, unknown>, sdkPath?: boolean): Record<string, unknown>;
}

async function connect(era: 'legacy' | 'modern'): Promise<Connection> {
  const store = await openSqliteStore(join(tmpDir(`proxy-stdio-call-${era}`), 'gate.db'));
  const agent = new Agent();
  const proxy = await startProxy({
    policy: loadPolicy(POLICY),
    store,
    name: `stdio-${era}`,
    downstream: { kind: 'stdio', command: process.execPath, args: [everythingServer, 'stdio'] },
    stdio: { input: agent.input, output: agent.output },
    approvalTimeoutMs: 500,
    pinOnFirstUse: true,
    log: () => {},
  });
  const meta = era === 'modern' ? ENVELOPE : {};
  const c: Connection = {
    era,
    agent,
    proxy,
    store,
    params: (name, args, sdkPath = false) => {
      const _meta = sdkPath ? { ...meta, 'vrpkit.test/sdk-path': true } : meta;
      return { name, arguments: args, ...(Object.keys(_meta).length ? { _meta } : {}) };
    },
  };
  return c;
}

/** The connection's opening: `initialize` (2025-11-25), then the first `tools/list` (which pins every tool: test only). */
async function open(c: Connection): Promise<void> {
  if (c.era === 'legacy') {
    const init = await c.agent.request(0, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'stdio-call-test', version: '1.0.0' },
    });
    expect(JSON.parse(init).result.protocolVersion).toBe('2025-11-25');
    c.agent.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }
  const listed = JSON.parse(await c.agent.request('list', 'tools/list', c.era === 'modern' ? { _meta: ENVELOPE } : {}));
  expect(listed.result.tools.length).toBeGreaterThan(3);
}

const connections: Connection[] = [];

beforeAll(async () => {
  for (const era of ['legacy', 'modern'] as const) connections.push(await connect(era));
}, 120_000);

afterEach(() => {
  directLegacy.mockClear();
  directModern.mockClear();
  pipeline.mockClear();
});

afterAll(async () => {
  for (const c of connections) {
    await c.proxy.stop();
    await c.store.close();
  }
  removeTmpDirs();
});

describe.each(['legacy', 'modern'] as const)('a plain tools/call on a %s stdio connection', (era) => {
  const c = () => connections.find((x) => x.era === era) as Connection;
  const direct = () => (era === 'legacy' ? directLegacy : directModern).mock.calls.length;

  /** The same call on both paths: the direct answer, the SDK's, and how many runs the direct path made. */
  async function both(id: string | number, name: string, args: Record<string, unknown>) {
    const before = direct();
    const plain = await c().agent.request(id, 'tools/call', c().params(name, args));
    const taken = direct() - before;
    const sdk = await c().agent.request(id, 'tools/call', c().params(name, args, true));
    expect(direct() - before, 'the SDK path never runs the direct path').toBe(taken);
    return { plain, sdk, taken };
  }

  it('before the connection is serving: the SDK’s (a plain call as the opening message is the SDK’s, and pins the era)', {
    timeout: 60_000,
  }, async () => {
    if (era === 'modern') {
      const first = JSON.parse(await c().agent.request('first', 'tools/call', c().params('echo', { message: 'first' })));
      expect(first.id).toBe('first');
    }
    await open(c());
    // The SDK served every request so far; from here on, plain calls are taken.
    expect(direct()).toBe(0);
    expect(pipeline.mock.calls.length).toBe(era === 'modern' ? 1 : 0);
  });

  it('a text result, structured content, a string id: written directly, byte for byte the SDK’s, each run once', {
    timeout: 60_000,
  }, async () => {
    for (const [id, name, args] of [
      [7, 'echo', { message: 'hello' }],
      [8, 'get-structured-content', { location: 'Chicago' }],
      ['s-1', 'echo', { message: 'id' }],
    ] as const) {
      pipeline.mockClear();
      const { plain, sdk, taken } = await both(id, name, args);
      expect(taken).toBe(1);
      expect(pipeline.mock.calls.length).toBe(2);
      expect(plain).toBe(sdk);
    }
    const echo = JSON.parse((await both(9, 'echo', { message: 'hello' })).plain);
    expect(echo).toMatchObject({ id: 9, result: { content: [{ type: 'text', text: 'Echo: hello' }] } });
    if (era === 'modern') expect(echo.result.resultType).toBe('complete');
  });

  it('an image and an annotated text: the SDK answers the direct run’s outcome (one run, the same bytes)', {
    timeout: 60_000,
  }, async () => {
    for (const [name, args] of [
      ['get-tiny-image', {}],
      ['get-annotated-message', { messageType: 'error', includeImage: false }],
    ] as const) {
      pipeline.mockClear();
      const { plain, sdk, taken } = await both(10, name, args);
      expect(taken).toBe(1);
      // One run per path: the SDK answered the direct run's outcome without running the call again.
      expect(pipeline.mock.calls.length).toBe(2);
      expect(plain).toBe(sdk);
    }
  });

  it('a deny (an act no person approved within the wait): the same bytes on both paths', { timeout: 60_000 }, async () => {
    const { plain, sdk, taken } = await both(11, 'get-sum', { a: 1, b: 2 });
    expect(taken).toBe(1);
    expect(JSON.parse(plain).result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('EF_APPROVAL_REQUIRED') }, {}],
    });
    expect(plain).toBe(sdk);
  });

  it('an unknown tool (a thrown error): the SDK’s error answer on both paths', { timeout: 60_000 }, async () => {
    const { plain, sdk, taken } = await both(12, 'no-such-tool', {});
    expect(taken).toBe(1);
    expect(JSON.parse(plain)).toMatchObject({ id: 12, error: { code: -32602 } });
    expect(plain).toBe(sdk);
  });

  it('a progress token: the SDK’s path (progress, then the result)', { timeout: 60_000 }, async () => {
    const params = c().params('trigger-long-running-operation', { duration: 1, steps: 2 });
    const before = direct();
    const lines = c().agent.lines.length;
    const answer = await c().agent.request(20, 'tools/call', { ...params, _meta: { ...(params._meta as object), progressToken: 'p1' } });
    expect(direct()).toBe(before);
    expect(JSON.parse(answer).result.content[0].text).toContain('Long running operation completed');
    if (era === 'legacy') expect(c().agent.lines.slice(lines).join('\n')).toContain('notifications/progress');
  });

  it('a cancelled direct call is never answered, and the next call is served at once', { timeout: 60_000 }, async () => {
    const before = direct();
    const started = Date.now();
    c().agent.send({
      jsonrpc: '2.0',
      id: 23,
      method: 'tools/call',
      params: c().params('trigger-long-running-operation', { duration: 5, steps: 5 }),
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(direct()).toBe(before + 1);
    const meta = era === 'modern' ? { _meta: ENVELOPE } : {};
    c().agent.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 23, reason: 'test', ...meta } });
    const next = JSON.parse(await c().agent.request(24, 'tools/call', c().params('echo', { message: 'after' })));
    expect(next.result.content[0].text).toBe('Echo: after');
    expect(Date.now() - started).toBeLessThan(4000);
    await new Promise((r) => setTimeout(r, 300));
    expect(c().agent.lines.some((l) => JSON.parse(l).id === 23)).toBe(false);
  });
});

describe('what never takes the direct path on 2026-07-28', () => {
  it('an envelope the SDK finds malformed: its refusal, nothing run', { timeout: 60_000 }, async () => {
    const c = connections.find((x) => x.era === 'modern') as Connection;
    const _meta = { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 5 } };
    const answer = JSON.parse(await c.agent.request(25, 'tools/call', { name: 'echo', arguments: { message: 'x' }, _meta }));
    expect(directModern).not.toHaveBeenCalled();
    expect(pipeline).not.toHaveBeenCalled();
    expect(answer).toMatchObject({ id: 25, error: { code: -32602 } });
  });
});
