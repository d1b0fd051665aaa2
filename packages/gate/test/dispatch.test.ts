/**
 * Gate.dispatch on a real SQLite file: one dispatch validates the act once, digests the live
 * arguments once and reads nothing before its one transaction when the act is new in a hot
 * envelope (a retry still gets the recorded result), and the tool runs with the frozen copy of the
 * arguments whose digest was enforced (never the caller's object).
 */
import { join } from 'node:path';
import * as core from '@vrpkit/core';
import {
  agentCandidateActSchema,
  Gate,
  type GateStore,
  handleAnthropicMessage,
  handleOpenAIMessage,
  loadPolicy,
  openSqliteStore,
} from '@vrpkit/gate';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as ijson from '../src/ijson.js';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

// Count every canonicalization the gate performs (the first step of an arguments digest): the
// reference's, and the I-JSON walks that the arguments digest uses (ijson.ts `canonicalIJson`, and
// `snapshotIJson` for a LiveArguments snapshot).
vi.mock('@vrpkit/core', async (importOriginal) => {
  const orig = await importOriginal<typeof import('@vrpkit/core')>();
  return {
    ...orig,
    canonicalJson: vi.fn(orig.canonicalJson),
    canonicalSha256Base64url: vi.fn(orig.canonicalSha256Base64url),
    canonicalSha256Hex: vi.fn(orig.canonicalSha256Hex),
  };
});
vi.mock('../src/ijson.js', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../src/ijson.js')>();
  return { ...orig, canonicalIJson: vi.fn(orig.canonicalIJson), snapshotIJson: vi.fn(orig.snapshotIJson) };
});

let store: GateStore;
let gate: Gate;

beforeEach(async () => {
  store = await openSqliteStore(join(tmpDir('dispatch'), 'gate.db'));
  gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY });
});
afterEach(async () => {
  await store.close();
  vi.restoreAllMocks();
});
afterAll(removeTmpDirs);

/** How many times the gate canonicalized (i.e. digested) this value: the object itself or the gate's frozen copy of it. */
function digestsOf(value: unknown): number {
  const fns = [
    core.canonicalJson,
    core.canonicalSha256Base64url,
    core.canonicalSha256Hex,
    ijson.canonicalIJson,
    ijson.snapshotIJson,
  ] as unknown as Array<{
    mock: { calls: unknown[][] };
  }>;
  const text = JSON.stringify(value);
  return fns.reduce(
    (n, f) => n + f.mock.calls.filter((c) => c[0] === value || (Object.isFrozen(c[0]) && JSON.stringify(c[0]) === text)).length,
    0,
  );
}

describe('one dispatch does each step once', () => {
  it('a first dispatch validates the act once, digests the live arguments once and reads no row before its transaction', async () => {
    const act = makeAct({ id: 'once-1', policy_state: await gate.policyState(), args: { q: 'lisbon', page: 2 } });
    const liveArgs = { q: 'lisbon', page: 2 };
    const validations = vi.spyOn(agentCandidateActSchema, 'safeParse');
    const authorityReads = vi.spyOn(store.ledger, 'getAuthority');
    const journalReads = vi.spyOn(store.journal, 'get');
    const r = await gate.dispatch(act, liveArgs, async (args) => args.page);
    expect(r).toMatchObject({ invoked: true, result: 2, decision: { allow: true } });
    expect(validations.mock.calls.filter((c) => c[0] === act)).toHaveLength(1);
    expect(digestsOf(liveArgs)).toBe(1);
    expect(authorityReads).not.toHaveBeenCalled();
    expect(journalReads).not.toHaveBeenCalled();
    // The retry's issuance meets the act's authority in its transaction, writes nothing, and the
    // general path answers with the recorded result — never a second invoke.
    const invoke = vi.fn(async (args: { page: number }) => args.page);
    const again = await gate.dispatch(act, { q: 'lisbon', page: 2 }, invoke);
    expect(again).toMatchObject({ invoked: false, replayed: true, result: 2, decision: { allow: false, code: 'EF_005' } });
    expect(invoke).not.toHaveBeenCalled();
    expect((await store.journal.list()).filter((j) => j.candidate_act_id === act.candidate_act_id)).toHaveLength(1);
  });

  it('a retry after an epoch bump still gets the recorded result (the act has authority: not stale, never a second invoke)', async () => {
    const act = makeAct({ id: 'once-2', policy_state: await gate.policyState(), args: { q: 'porto' } });
    expect(await gate.dispatch(act, { q: 'porto' }, async () => 'first')).toMatchObject({ invoked: true, result: 'first' });
    await gate.bumpEpoch('authority_epoch');
    const invoke = vi.fn(async () => 'second');
    const again = await gate.dispatch(act, { q: 'porto' }, invoke);
    expect(again).toMatchObject({ invoked: false, replayed: true, result: 'first', decision: { allow: false, code: 'EF_005' } });
    expect(invoke).not.toHaveBeenCalled();
  });
});

describe('gate.dispatch(act, liveArgs, () => tool(liveArgs)) races', () => {
  it('invoke receives the frozen, digested snapshot: mutating the caller’s object after the consume changes nothing', async () => {
    const ps = await gate.policyState();
    const args = { to: 'alice@example.com', memo: { cc: ['bob@example.com'], amount: 10 } };
    const act = makeAct({ id: 'race-1', tool: 'side_effect', args, policy_state: ps });
    const liveArgs = structuredClone(args);
    const ran: unknown[] = [];
    const r = await gate.dispatch(act, liveArgs, async (snapshot) => {
      // The host (or a concurrent task holding the same object) changes it after enforce allowed.
      liveArgs.to = 'mallory@example.com';
      liveArgs.memo.cc.push('eve@example.com');
      liveArgs.memo.amount = 10_000;
      ran.push(structuredClone(snapshot));
      expect(snapshot).not.toBe(liveArgs);
      expect(Object.isFrozen(snapshot)).toBe(true);
      expect(Object.isFrozen(snapshot.memo)).toBe(true);
      expect(Object.isFrozen(snapshot.memo.cc)).toBe(true);
      expect(() => {
        (snapshot as { to: string }).to = 'mallory@example.com';
      }).toThrow(TypeError);
      return snapshot.to;
    });
    expect(r).toMatchObject({ invoked: true, result: 'alice@example.com' });
    // The tool ran with exactly the arguments the authority was bound to.
    expect(ran).toEqual([args]);
    expect(core.canonicalSha256Base64url(ran[0])).toBe(act.arguments_digest.value);
  });
});

describe('an approval resumes the pending act (issue 31 item 5)', () => {
  it('escalated → approved → resume(): enforced and invoked once, with no second validation or digest', async () => {
    const args = { to: 'acct_1', amount: 5 };
    const act = makeAct({ id: 'resume-1', tool: 'payout', consequence_class: 'FINANCIAL', args, policy_state: await gate.policyState() });
    const liveArgs = structuredClone(args);
    const validations = vi.spyOn(agentCandidateActSchema, 'safeParse');
    const invoke = vi.fn(async (a: { amount: number }) => a.amount);
    const first = await gate.dispatch(act, liveArgs, invoke);
    expect(first).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_APPROVAL_REQUIRED' } });
    expect(first.resume).toBeTypeOf('function');
    expect(await gate.approve('resume-1', 'alice')).toMatchObject({ status: 'issued' });
    const resumed = await first.resume!();
    expect(resumed).toMatchObject({ invoked: true, result: 5, decision: { allow: true } });
    expect(invoke).toHaveBeenCalledTimes(1);
    expect(validations.mock.calls.filter((c) => c[0] === act)).toHaveLength(1);
    expect(digestsOf(liveArgs)).toBe(1);
  });

  it('escalated → rejected → resume(): refused (EF_NOT_AUTHORIZED), never invoked', async () => {
    const act = makeAct({
      id: 'resume-2',
      tool: 'payout',
      consequence_class: 'FINANCIAL',
      args: { amount: 7 },
      policy_state: await gate.policyState(),
    });
    const invoke = vi.fn(async () => 'ran');
    const first = await gate.dispatch(act, { amount: 7 }, invoke);
    expect(first.decision.code).toBe('EF_APPROVAL_REQUIRED');
    await gate.reject('resume-2', 'alice');
    expect(await first.resume!()).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_NOT_AUTHORIZED' } });
    expect(invoke).not.toHaveBeenCalled();
  });
});

describe('a vendor handler maps and dispatches over one snapshot (issue 31 item 5: no module-level memo)', () => {
  const context = () => ({
    gate,
    session_id: 'sess-one-pass',
    principal: { principal_id: 'org-1' },
    agent: { agent_id: 'agent-1' },
    purpose: { purpose_id: 'user-turn' },
  });

  it('Anthropic: the block input is digested once; the act and the tool see that digest and that snapshot', async () => {
    const input = { q: 'faro', page: 1 };
    const seen: unknown[] = [];
    const { outcomes } = await handleAnthropicMessage(
      { content: [{ type: 'tool_use', id: 'toolu_once', name: 'search', input }] },
      { search: async (a: unknown) => seen.push(a) },
      context(),
    );
    expect(outcomes[0]).toMatchObject({ invoked: true, arguments_digest: core.canonicalSha256Base64url({ q: 'faro', page: 1 }) });
    expect(digestsOf(input)).toBe(1);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(seen[0]).not.toBe(input);
  });

  it('OpenAI: the parsed arguments are digested once', async () => {
    const { outcomes } = await handleOpenAIMessage(
      { tool_calls: [{ id: 'call_once', type: 'function', function: { name: 'search', arguments: '{"q":"braga"}' } }] },
      { search: async () => 'ok' },
      context(),
    );
    expect(outcomes[0]).toMatchObject({ invoked: true });
    const canonicalized = [core.canonicalJson, ijson.canonicalIJson, ijson.snapshotIJson]
      .flatMap((f) => (f as unknown as { mock: { calls: unknown[][] } }).mock.calls)
      .filter((c) => JSON.stringify(c[0]) === '{"q":"braga"}');
    expect(canonicalized).toHaveLength(1);
  });
});
