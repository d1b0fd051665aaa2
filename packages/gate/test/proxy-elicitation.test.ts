/**
 * A downstream's elicitation passes through the gate proxy, bound to the act (issue 32 item 5):
 * `startProxy` in this process, in front of a real SDK v2 downstream whose tools elicit
 * (procs/mcp-elicit-server.ts) — 2026-07-28 only over Streamable HTTP, 2025-11-25 only as a stdio
 * child — on a real SQLite store, with the official clients as agents: SDK v2 pinned to 2026-07-28
 * and SDK v1 on 2025-11-25 (a session).
 *
 * - a form round-trips over several rounds and the tool's result arrives; the gate consumed one
 *   authority for the call (one dispatch, one journal row); later rounds continue that act;
 * - a continuation with other arguments, a tampered state or a spent one is refused, nothing sent;
 * - a URL whose origin the policy does not allow is declined to the server (the agent never sees
 *   it); an allowed one reaches the agent;
 * - an agent that did not declare elicitation: the server gets a decline (2025) or the agent a clear
 *   error (2026); sampling is never forwarded;
 * - a 2025-11-25 server asking a 2026-07-28 agent: the call is held open across the agent's retries;
 * - what reaches the agent says it is the server's text (`vrp/untrusted`, the server named).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type CallToolResult,
  Client,
  type ElicitRequestParams,
  type InputRequiredResult,
  ProtocolError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type GateStore, loadPolicy, openSqliteStore, type PolicyDocument } from '@vrpkit/gate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DownstreamSpec } from '../src/proxy/downstream.js';
import { type RunningProxy, startProxy } from '../src/proxy/index.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { startElicitHttpServer } from './procs/mcp-elicit-server.js';
import { startV1ElicitHttpServer } from './procs/mcp-v1-elicit-http.js';

const fixture = fileURLToPath(new URL('./procs/mcp-elicit-server.ts', import.meta.url));
const T = { timeout: 120_000 };
const ALLOWED = 'https://forms.example.com';

const POLICY: PolicyDocument = {
  version: 1,
  policy_id: 'proxy-elicitation',
  informative_defaults: false,
  tools: [
    { tool: 'ask_note', consequence_class: 'PERSISTENT_STATE_CHANGE' },
    { tool: 'open_link', consequence_class: 'INFORMATIONAL' },
    { tool: 'ask_model', consequence_class: 'INFORMATIONAL' },
    { tool: 'ask_topic', consequence_class: 'INFORMATIONAL' },
  ],
  hot_envelopes: [{ name: 'all', consequence_classes: ['INFORMATIONAL', 'PERSISTENT_STATE_CHANGE'] }],
  // No person in these tests: every act is issued by the envelope, whatever its provenance.
  provenance_rules: [],
  elicitation_url_origins: [ALLOWED],
};

type Log = { event: string } & Record<string, unknown>;

interface Started {
  proxy: RunningProxy;
  logs: Log[];
  store: GateStore;
}

async function proxyFor(downstream: DownstreamSpec, name: string): Promise<Started> {
  const store = await openSqliteStore(join(tmpDir('proxy-elicitation'), 'gate.db'));
  const logs: Log[] = [];
  const proxy = await startProxy({
    policy: loadPolicy(POLICY),
    store,
    name,
    downstream,
    listen: { host: '127.0.0.1', port: 0 },
    pinOnFirstUse: true,
    log: (event, fields = {}) => void logs.push({ event, ...fields }),
  });
  return { proxy, logs, store };
}

/** What an agent's person answers, by the form's first property; every request it is shown is kept. */
type Person = (params: ElicitRequestParams) => {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
};
const shown: ElicitRequestParams[] = [];
const person: Person = (params) => {
  shown.push(params);
  if (params.mode === 'url') return { action: 'accept' };
  const field = Object.keys(params.requestedSchema.properties)[0];
  const content: Record<string, string | boolean> = field === 'name' ? { name: 'Ada' } : { ok: true };
  return { action: 'accept', content };
};

const ELICITATION = { elicitation: { form: {}, url: {} } };
const auth = (p: RunningProxy) => ({ requestInit: { headers: { authorization: `Bearer ${p.listener!.token}` } } });

/** An SDK v2 agent pinned to 2026-07-28 (auto-fulfilling input requests through its handler unless `manual`). */
async function modernAgent(p: RunningProxy, o: { elicitation?: boolean; manual?: boolean } = {}): Promise<Client> {
  const c = new Client(
    { name: 'v2-agent', version: '1.0.0' },
    {
      capabilities: o.elicitation === false ? {} : ELICITATION,
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      ...(o.manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  if (o.elicitation !== false) c.setRequestHandler('elicitation/create', (req) => person(req.params as ElicitRequestParams));
  await c.connect(new StreamableHTTPClientTransport(new URL(p.listener!.url), auth(p)));
  expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  return c;
}

/** An SDK v1 agent on 2025-11-25 (a session), declaring elicitation unless told not to. */
async function legacyAgent(p: RunningProxy, o: { elicitation?: boolean } = {}): Promise<V1Client> {
  const c = new V1Client({ name: 'v1-agent', version: '1.0.0' }, { capabilities: o.elicitation === false ? {} : ELICITATION });
  if (o.elicitation !== false) c.setRequestHandler(ElicitRequestSchema, (req) => person(req.params as ElicitRequestParams) as never);
  await c.connect(new V1Transport(new URL(p.listener!.url), auth(p)));
  return c;
}

type AnyAgent = Client | V1Client;

/** A `tools/call` in manual mode: an `input_required` answer comes back instead of being fulfilled. */
function manualCall(agent: Client, params: Record<string, unknown>): Promise<CallToolResult | InputRequiredResult> {
  return agent.request({ method: 'tools/call', params: params as never }, { allowInputRequired: true }) as Promise<never>;
}
const call = (agent: AnyAgent, name: string, args: Record<string, unknown>) =>
  (agent as Client).callTool({ name, arguments: args }) as Promise<CallToolResult>;

function textOf(r: CallToolResult): string {
  return (r.content[0] as { text: string }).text;
}

function codeOf(r: CallToolResult): string {
  expect(r.isError, JSON.stringify(r)).toBe(true);
  return (JSON.parse(textOf(r)) as { error: { code: string } }).error.code;
}

/**
 * What the agent was shown is the server's text, never the gate's: named and prefixed, and marked in
 * `_meta` — except a 2026-07-28 URL-mode request, whose embedded params have no `_meta` on that
 * revision (the SDK's decoder drops it), so there the prefix alone says it.
 */
function expectUntrusted(params: ElicitRequestParams, proxyName: string, meta = true): void {
  expect(params.message.startsWith(`[MCP server "${proxyName}", not the gate] `)).toBe(true);
  if (!meta) return;
  expect(params._meta?.['vrp/untrusted']).toBe(true);
  expect(typeof params._meta?.['vrp/server']).toBe('string');
}

/** The act of the last `tools/call` of `tool`, and every log line of it. */
function actLines(logs: Log[], tool: string): { act: string; lines: Log[] } {
  const act = logs.filter((l) => l.event === 'tools/call' && l.tool === tool).at(-1)!.candidate_act_id as string;
  return { act, lines: logs.filter((l) => l.event === 'tools/call' && l.candidate_act_id === act) };
}

/**
 * A URL to an origin the policy does not allow is declined to the server (the agent never sees it;
 * the log has the origin only), an allowed one reaches the agent marked; returns the declined call's result.
 */
async function urlOriginCase(agent: AnyAgent, logs: Log[], proxyName: string, meta: boolean): Promise<CallToolResult> {
  const before = shown.length;
  const denied = await call(agent, 'open_link', { url: 'https://evil.example/login?token=secret' });
  expect(textOf(denied)).toBe('link: decline');
  expect(shown.length).toBe(before);
  const declined = logs.filter((l) => l.event === 'downstream_elicitation_declined').at(-1)!;
  expect(declined).toMatchObject({ code: 'elicitation_url_origin_not_allowed', origin: 'https://evil.example' });
  expect(JSON.stringify(declined)).not.toContain('secret');
  expect(textOf(await call(agent, 'open_link', { url: `${ALLOWED}/consent` }))).toBe('link: accept');
  const url = shown.at(-1)!;
  expect(url).toMatchObject({ mode: 'url', url: `${ALLOWED}/consent` });
  expectUntrusted(url, proxyName, meta);
  return denied;
}

/** A proxy in front of an in-process HTTP downstream, for the enclosing describe: started before its tests, stopped after. */
function proxiedHttp<D extends { url: string; close(): Promise<void> }>(start: () => Promise<D>, name: string): { down: D; s: Started } {
  const h = {} as { down: D; s: Started };
  beforeAll(async () => {
    h.down = await start();
    h.s = await proxyFor({ kind: 'http', url: h.down.url, headers: {} }, name);
  }, T.timeout);
  afterAll(async () => {
    await h.s?.proxy.stop();
    await h.s?.store.close();
    await h.down?.close();
  });
  return h;
}

afterAll(removeTmpDirs);

describe('a 2026-07-28 downstream whose tools answer with InputRequiredResult', T, () => {
  const h = proxiedHttp(startElicitHttpServer, 'elicit-modern');

  for (const era of ['2026-07-28', '2025-11-25'] as const) {
    it(`an agent on ${era}: the form round-trips twice, the result arrives, one act and one consume for every round`, async () => {
      const agent: AnyAgent = era === '2026-07-28' ? await modernAgent(h.s.proxy) : await legacyAgent(h.s.proxy);
      try {
        const before = { shown: shown.length, effects: h.down.state.effects.length };
        const r = await call(agent, 'ask_note', { topic: `groceries-${era}` });
        expect(r.isError, JSON.stringify(r)).toBeFalsy();
        expect(textOf(r)).toBe(`saved: groceries-${era} for Ada`);
        expect(h.down.state.effects.slice(before.effects)).toEqual([`groceries-${era} for Ada`]);
        // Both forms reached the agent's person, as the server's text.
        const forms = shown.slice(before.shown);
        expect(forms).toHaveLength(2);
        for (const f of forms) expectUntrusted(f, 'elicit-modern');
        // One act: dispatched (and its authority consumed) once; rounds 2 and 3 continue it.
        const { act, lines } = actLines(h.s.logs, 'ask_note');
        expect(lines.filter((l) => l.authority_id !== undefined)).toHaveLength(1);
        expect(lines.map((l) => l.round)).toEqual([1, 2, 3]);
        expect(lines.filter((l) => l.continued === true)).toHaveLength(2);
        expect((await h.s.store.journal.get(act))?.state).toBe('EFFECTUATED');
      } finally {
        await agent.close();
      }
    });
  }

  it('a continuation with other arguments, a tampered or a spent requestState is refused, and nothing reaches the server', async () => {
    const agent = await modernAgent(h.s.proxy, { manual: true });
    try {
      const params = { name: 'ask_note', arguments: { topic: 'manual' } };
      const first = (await manualCall(agent, params)) as InputRequiredResult;
      expect(first.resultType).toBe('input_required');
      const request = first.inputRequests!.name as { method: string; params: ElicitRequestParams };
      expectUntrusted(request.params, 'elicit-modern');
      const state = first.requestState!;
      const name = { action: 'accept', content: { name: 'Eve' } };
      const rounds = h.down.state.rounds;
      const retry = (p: Record<string, unknown>) => manualCall(agent, p);
      const refused = async (p: Record<string, unknown>) => {
        const e = await retry(p).then(
          () => undefined,
          (x: unknown) => x,
        );
        expect(e).toBeInstanceOf(ProtocolError);
        return (e as ProtocolError).data as { code: string; reason: string };
      };
      // Other arguments with this call's state: another call's binding.
      expect(await refused({ name: 'ask_note', arguments: { topic: 'other' }, inputResponses: { name }, requestState: state })).toEqual({
        code: 'input_state_refused',
        reason: 'foreign',
      });
      // One character changed: the gate's seal fails.
      const tampered = `${state.slice(0, -3)}${state.at(-3) === 'A' ? 'B' : 'A'}${state.slice(-2)}`;
      expect(await refused({ ...params, inputResponses: { name }, requestState: tampered })).toMatchObject({ reason: 'malformed' });
      expect(h.down.state.rounds).toBe(rounds);
      // The right continuation goes on (round 2 asks to confirm) ...
      const second = (await retry({ ...params, inputResponses: { name }, requestState: state })) as InputRequiredResult;
      expect(second.resultType).toBe('input_required');
      expect(h.down.state.rounds).toBe(rounds + 1);
      // ... and its state is spent: the same retry again is refused, nothing sent.
      expect(await refused({ ...params, inputResponses: { name }, requestState: state })).toMatchObject({ reason: 'spent' });
      expect(h.down.state.rounds).toBe(rounds + 1);
      const done = (await retry({
        ...params,
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
        requestState: second.requestState,
      })) as CallToolResult;
      expect(textOf(done)).toBe('saved: manual for Eve');
      // A retry of the whole call afterwards is the same act, already run: a replay, refused by the gate.
      const again = (await manualCall(agent, params)) as CallToolResult;
      expect(codeOf(again)).toBe('EF_005');
      expect(h.down.state.effects.filter((e) => e === 'manual for Eve')).toHaveLength(1);
    } finally {
      await agent.close();
    }
  });

  it('a URL to an origin the policy does not allow is declined to the server, the agent never sees it; an allowed one reaches the agent', async () => {
    const agent = await modernAgent(h.s.proxy);
    try {
      const denied = await urlOriginCase(agent, h.s.logs, 'elicit-modern', false);
      expect(denied._meta?.['vrp/elicitation_declined']).toBeUndefined();
    } finally {
      await agent.close();
    }
  });

  it('an agent that declared no elicitation gets a clear error; sampling is never forwarded', async () => {
    const agent = await modernAgent(h.s.proxy, { elicitation: false });
    try {
      expect(codeOf(await call(agent, 'ask_note', { topic: 'undeclared' }))).toBe('elicitation_not_declared');
      expect(h.down.state.effects).not.toContain('undeclared for Ada');
    } finally {
      await agent.close();
    }
    // The proxy's client declares no sampling, so the server's SDK refuses to ask for it (-32021);
    // had it asked, the proxy would end the call (downstream_input_refused): nothing reaches the agent.
    const asking = await modernAgent(h.s.proxy);
    try {
      const before = shown.length;
      const r = await call(asking, 'ask_model', {});
      expect(['downstream_error', 'downstream_input_refused']).toContain(codeOf(r));
      expect(shown.length).toBe(before);
      expect(h.s.logs.filter((l) => l.event === 'downstream_input_required' && l.tool === 'ask_model')).toHaveLength(0);
    } finally {
      await asking.close();
    }
  });
});

describe('a 2025-11-25 downstream that sends elicitation/create during the call (stdio child)', T, () => {
  let s: Started;
  const effectsLog = join(tmpDir('proxy-elicitation-effects'), 'effects');
  const effects = () => {
    try {
      return readFileSync(effectsLog, 'utf8').trim().split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  beforeAll(async () => {
    s = await proxyFor(
      {
        kind: 'stdio',
        command: process.execPath,
        args: ['--import', 'tsx', '--conditions=vrpkit-source', fixture, JSON.stringify({ effectsLog })],
      },
      'elicit-legacy',
    );
    expect(s.logs.find((l) => l.event === 'downstream_connected')?.protocol_version).toBe('2025-11-25');
  }, T.timeout);
  afterAll(async () => {
    await s?.proxy.stop();
    await s?.store.close();
  });

  it('a 2025-11-25 agent: both forms reach it as the server’s text, the result arrives, one act', async () => {
    const agent = await legacyAgent(s.proxy);
    try {
      const before = shown.length;
      const r = await call(agent, 'ask_note', { topic: 'legacy' });
      expect(textOf(r)).toBe('saved: legacy for Ada');
      expect(effects()).toEqual(['legacy for Ada']);
      const forms = shown.slice(before);
      expect(forms).toHaveLength(2);
      for (const f of forms) expectUntrusted(f, 'elicit-legacy');
      const { lines } = actLines(s.logs, 'ask_note');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.authority_id).toBeDefined();
      expect(s.logs.filter((l) => l.event === 'downstream_elicitation_forwarded')).toHaveLength(2);
    } finally {
      await agent.close();
    }
  });

  it('a URL to an origin the policy does not allow is declined; an allowed one reaches the agent', async () => {
    const agent = await legacyAgent(s.proxy);
    try {
      const denied = await urlOriginCase(agent, s.logs, 'elicit-legacy', true);
      expect(denied._meta?.['vrp/elicitation_declined']).toEqual(['elicitation_url_origin_not_allowed']);
    } finally {
      await agent.close();
    }
  });

  it('an agent without elicitation: the server gets a decline, the result says why', async () => {
    const undeclared = await legacyAgent(s.proxy, { elicitation: false });
    try {
      const r = await call(undeclared, 'ask_note', { topic: 'no-elicitation' });
      expect(textOf(r)).toBe('no name given (decline)');
      expect(r._meta?.['vrp/elicitation_declined']).toEqual(['elicitation_not_declared']);
    } finally {
      await undeclared.close();
    }
  });

  it('a 2026-07-28 agent: the call is held open across its retries; both forms, the result, one act', async () => {
    const modern = await modernAgent(s.proxy);
    try {
      const before = shown.length;
      const r = await call(modern, 'ask_note', { topic: 'held' });
      expect(textOf(r)).toBe('saved: held for Ada');
      const forms = shown.slice(before);
      expect(forms).toHaveLength(2);
      for (const f of forms) expectUntrusted(f, 'elicit-legacy');
      expect(effects().filter((e) => e === 'held for Ada')).toHaveLength(1);
      const { lines } = actLines(s.logs, 'ask_note');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.authority_id).toBeDefined();
    } finally {
      await modern.close();
    }
  });

  it('a held call is continued once: the same state again finds nothing, other arguments are refused', async () => {
    const agent = await modernAgent(s.proxy, { manual: true });
    try {
      const params = { name: 'ask_note', arguments: { topic: 'held-manual' } };
      const retry = (p: Record<string, unknown>) => manualCall(agent, p);
      const first = (await retry(params)) as InputRequiredResult;
      expect(first.resultType).toBe('input_required');
      const [key] = Object.keys(first.inputRequests!);
      const name = { action: 'accept', content: { name: 'Bo' } };
      const foreign = await retry({
        ...params,
        arguments: { topic: 'other' },
        inputResponses: { [key!]: name },
        requestState: first.requestState,
      }).catch((e: unknown) => e);
      expect((foreign as ProtocolError).data).toEqual({ code: 'input_state_refused', reason: 'foreign' });
      const second = (await retry({
        ...params,
        inputResponses: { [key!]: name },
        requestState: first.requestState,
      })) as InputRequiredResult;
      expect(second.resultType).toBe('input_required');
      const again = await retry({ ...params, inputResponses: { [key!]: name }, requestState: first.requestState }).catch((e: unknown) => e);
      expect((again as ProtocolError).data).toMatchObject({ code: 'input_state_refused' });
      const [confirm] = Object.keys(second.inputRequests!);
      const done = (await retry({
        ...params,
        inputResponses: { [confirm!]: { action: 'accept', content: { ok: true } } },
        requestState: second.requestState,
      })) as CallToolResult;
      expect(textOf(done)).toBe('saved: held-manual for Bo');
      expect(effects().filter((e) => e === 'held-manual for Bo')).toHaveLength(1);
    } finally {
      await agent.close();
    }
  });
});

describe('a 2025-11-25 downstream over Streamable HTTP (SDK v1, one session shared by every agent)', T, () => {
  const h = proxiedHttp(startV1ElicitHttpServer, 'elicit-v1-http');

  it("two calls in flight at once: each elicitation reaches its own call's agent, never the other's", async () => {
    /** An agent whose person answers with its own name, after a pause (so both questions are open together). */
    const agentNamed = async (who: string, asked: string[]) => {
      const c = new V1Client({ name: who, version: '1.0.0' }, { capabilities: ELICITATION });
      c.setRequestHandler(ElicitRequestSchema, async (req) => {
        asked.push(req.params.message);
        await new Promise((ok) => setTimeout(ok, 300));
        return { action: 'accept', content: { name: who } };
      });
      await c.connect(new V1Transport(new URL(h.s.proxy.listener!.url), auth(h.s.proxy)));
      return c;
    };
    const askedA: string[] = [];
    const askedB: string[] = [];
    const a = await agentNamed('ann', askedA);
    const b = await agentNamed('bob', askedB);
    try {
      const [ra, rb] = await Promise.all([call(a, 'ask_topic', { topic: 'apples' }), call(b, 'ask_topic', { topic: 'bees' })]);
      expect(textOf(ra)).toBe('apples: accept ann');
      expect(textOf(rb)).toBe('bees: accept bob');
      expect(askedA).toEqual(['[MCP server "elicit-v1-http", not the gate] Who writes about apples?']);
      expect(askedB).toEqual(['[MCP server "elicit-v1-http", not the gate] Who writes about bees?']);
      expect(h.s.logs.filter((l) => l.event === 'downstream_elicitation_unrouted')).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
