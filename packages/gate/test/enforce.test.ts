/**
 * enforce / authorize / dispatch against the real Gate on a real SQLite file: T-C (replay),
 * expiry, epoch bump, revocation, sink mismatch, digest substitution, timeout → deny,
 * malformed arguments, escalation and approval, the retry rule and restart recovery.
 */
import { join } from 'node:path';
import {
  type AgentCandidateAct,
  Gate,
  type GateEvent,
  type GateOptions,
  type GateStore,
  hostErrorObject,
  loadPolicy,
  openSqliteStore,
  verifyAuthority,
} from '@vrpkit/gate';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ActSpec, makeAct, PUBLIC_JWK, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

const policy = loadPolicy(TEST_POLICY);
let file: string;
let store: GateStore;
let t: number;
let gate: Gate;
let n = 0;

function newGate(over: Partial<GateOptions> = {}): Gate {
  return new Gate({ store, policy, sinkId: SINK, signingKey: SIGNING_KEY, clock: { now: () => t }, ...over });
}

async function act(spec: Partial<ActSpec> = {}, g: Gate = gate): Promise<AgentCandidateAct> {
  return makeAct({ id: `act-${n++}`, policy_state: await g.policyState(), now: t, ...spec });
}

beforeEach(async () => {
  file = join(tmpDir('enforce'), 'gate.db');
  store = await openSqliteStore(file);
  t = Date.parse('2026-11-29T20:00:00Z');
  gate = newGate();
});
afterEach(async () => {
  await store.close();
});

describe('enforce: the five MUSTs', () => {
  it('allows a hot-envelope act once and consumes its authority before returning allow', async () => {
    const a = await act();
    const issued = await gate.authorize(a);
    expect(issued.status).toBe('issued');
    const d = await gate.enforce(a, { q: 'lisbon' });
    expect(d).toEqual({ allow: true, authority_id: issued.authority_id });
    expect(await store.ledger.getAuthority(a.candidate_act_id)).toMatchObject({ state: 'CONSUMED' });
  });

  it('T-C: replaying the same authority on a second invoke is denied (EF_005)', async () => {
    const a = await act();
    await gate.authorize(a);
    expect((await gate.enforce(a, { q: 'lisbon' })).allow).toBe(true);
    const replay = await gate.enforce(a, { q: 'lisbon' });
    expect(replay).toMatchObject({ allow: false, code: 'EF_005' });
    expect(replay.retryable).toBeUndefined();
    // and through dispatch: the tool is not invoked again
    let calls = 0;
    const r = await gate.dispatch(a, { q: 'lisbon' }, async () => ++calls);
    expect(r.invoked).toBe(false);
    expect(calls).toBe(0);
  });

  it('denies an act without authority (EF_002)', async () => {
    expect(await gate.enforce(await act(), { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_002' });
  });

  it('denies after the authority expired, and never consumes it', async () => {
    const a = await act();
    const issued = await gate.authorize(a);
    t += 61_000; // the reads envelope issues for 60 s
    expect(await gate.enforce(a, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_002' });
    expect((await store.ledger.getAuthorityById(issued.authority_id!))?.state).toBe('ISSUED');
  });

  it('denies after a policy epoch bump (EF_EPOCH_STALE) and after a revocation epoch bump (EF_REVOKED)', async () => {
    const a = await act();
    const b = await act();
    await gate.authorize(a);
    await gate.authorize(b);
    await gate.bumpEpoch('policy_epoch');
    expect(await gate.enforce(a, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_EPOCH_STALE' });
    await gate.bumpEpoch('revocation_epoch');
    expect(await gate.enforce(b, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_REVOKED' });
    // a new act under the new epochs goes through
    const c = await act();
    await gate.authorize(c);
    expect((await gate.enforce(c, { q: 'lisbon' })).allow).toBe(true);
  });

  it('a changed policy document bumps the policy epoch and invalidates outstanding authority', async () => {
    const a = await act();
    await gate.authorize(a);
    const changed = newGate({ policy: loadPolicy({ ...TEST_POLICY, policy_id: 'gate-tests-v2' }) });
    expect(await changed.enforce(a, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_EPOCH_STALE' });
  });

  it('denies a revoked authority (EF_REVOKED)', async () => {
    const a = await act();
    const issued = await gate.authorize(a);
    expect(await gate.revoke(issued.authority_id!)).toBe(true);
    expect(await gate.enforce(a, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_REVOKED' });
  });

  it('uses only its own sink id: an act for another sink, or authority bound to another sink, is EF_040', async () => {
    const a = await act();
    await gate.authorize(a);
    const otherSink = newGate({ sinkId: 'host-dispatch-2' });
    // The act names sink 1; enforcer 2 refuses it.
    expect(await otherSink.enforce(a, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_040' });
    // A caller that rewrites the act's sink to enforcer 2 still meets the authority bound to sink 1.
    const rewritten = { ...a, finality_sink: { sink_id: 'host-dispatch-2', sink_type: 'TOOL_DISPATCH' as const } };
    expect(await otherSink.enforce(rewritten, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_040' });
    expect((await gate.enforce(a, { q: 'lisbon' })).allow).toBe(true);
  });

  it('digest substitution: live arguments other than the act digest, or an act re-mapped to new arguments, are EF_SCOPE_MISMATCH', async () => {
    const a = await act({ args: { q: 'lisbon' } });
    await gate.authorize(a);
    expect(await gate.enforce(a, { q: 'lisbon', limit: 1000 })).toMatchObject({ allow: false, code: 'EF_SCOPE_MISMATCH' });
    const remapped = makeAct({ id: a.candidate_act_id, args: { q: 'porto' }, policy_state: a.policy_state, now: t });
    expect(await gate.enforce(remapped, { q: 'porto' })).toMatchObject({ allow: false, code: 'EF_SCOPE_MISMATCH' });
    // An approved search cannot become a send: same id, same arguments, another tool.
    const send = makeAct({
      id: a.candidate_act_id,
      tool: 'email_send',
      consequence_class: 'COMMUNICATION',
      policy_state: a.policy_state,
      now: t,
    });
    expect(await gate.enforce(send, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_SCOPE_MISMATCH' });
    // Key order and whitespace are not a difference (JCS).
    expect((await gate.enforce(a, JSON.parse(' { "q" : "lisbon" } '))).allow).toBe(true);
  });

  it('a swapped destination or endpoint is EF_DESTINATION_MISMATCH', async () => {
    const a = await act({ destination: 'maps.example', endpoint: 'mcp://maps.example/mcp' });
    await gate.authorize(a);
    const swapped = {
      ...a,
      tool: { ...a.tool, tool_endpoint: 'mcp://maps.attacker/mcp' },
      destination: { destination_id: 'maps.attacker' },
    };
    expect(await gate.enforce(swapped, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_DESTINATION_MISMATCH' });
  });

  it('malformed live arguments (lone surrogate, unsafe integer) are denied without touching the store', async () => {
    const a = await act();
    await gate.authorize(a);
    expect(await gate.enforce(a, { q: '\ud800' })).toMatchObject({ allow: false, code: 'EF_MALFORMED_ARGUMENTS' });
    expect(await gate.enforce(a, { n: 2 ** 53 })).toMatchObject({ allow: false, code: 'EF_MALFORMED_ARGUMENTS' });
    expect(await gate.enforce({ ...a, version: '2.0' } as unknown as AgentCandidateAct, { q: 'lisbon' })).toMatchObject({
      allow: false,
      code: 'EF_MALFORMED_ACT',
    });
    expect((await store.ledger.getAuthority(a.candidate_act_id))?.state).toBe('ISSUED');
  });

  it('MUST 5: a consume that cannot get the store in time denies with EF-060 (retryable) and consumes nothing', async () => {
    const g = newGate({ policyTimeoutMs: 150 });
    const a = await act({}, g);
    await g.authorize(a);
    const blocker = new Database(file);
    blocker.exec('BEGIN IMMEDIATE');
    let d: Awaited<ReturnType<Gate['enforce']>>;
    try {
      d = await g.enforce(a, { q: 'lisbon' });
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    expect(d).toMatchObject({ allow: false, code: 'EF-060', retryable: true });
    expect(hostErrorObject(d).error).toMatchObject({ code: 'EF-060', retryable: true, invoked: false });
    expect((await store.ledger.getAuthority(a.candidate_act_id))?.state).toBe('ISSUED');
    // the bounded retry of validation then succeeds
    expect((await g.enforce(a, { q: 'lisbon' })).allow).toBe(true);
  });

  it('authorize() and dispatch() time out into EF-060 too, and dispatch does not invoke; the epoch read is not held up', async () => {
    const g = newGate({ policyTimeoutMs: 100 });
    const a = await act({}, g);
    const blocker = new Database(file);
    blocker.exec('BEGIN IMMEDIATE');
    let calls = 0;
    try {
      // A plain read of the committed epochs (WAL: a reader never waits for a writer); the writes
      // that depend on them read them again under the write lock, and those time out.
      expect(await g.policyState()).toEqual(a.policy_state);
      expect(await g.authorize(a)).toMatchObject({ status: 'denied', code: 'EF-060' });
      expect(await g.dispatch(a, { q: 'lisbon' }, async () => ++calls)).toMatchObject({
        invoked: false,
        decision: { allow: false, code: 'EF-060', retryable: true },
      });
      expect(calls).toBe(0);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    expect(await store.ledger.getAuthority(a.candidate_act_id)).toBeUndefined();
  });

  it('a closed store fails closed (EF_STORE_UNAVAILABLE), never allow', async () => {
    const a = await act();
    await gate.authorize(a);
    await store.close();
    expect(await gate.enforce(a, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_STORE_UNAVAILABLE' });
    store = await openSqliteStore(file);
  });
});

describe('authorize: policy, evidence, signed authority', () => {
  it('records the validation evidence before the authority exists and signs the authority for cooperating sinks', async () => {
    const a = await act();
    const issued = await gate.authorize(a);
    const row = (await store.ledger.getAuthority(a.candidate_act_id))!;
    const ev = await store.ledger.getEvidence(row.evidence_id);
    expect(ev).toMatchObject({ decision: 'ISSUED', candidate_act_id: a.candidate_act_id, arguments_digest: a.arguments_digest.value });
    expect(ev!.recorded_at).toBeLessThanOrEqual(row.issued_at);
    const v = verifyAuthority(row.jws, { keys: [PUBLIC_JWK], sinkId: SINK, now: t, act: a, liveArgs: { q: 'lisbon' } });
    expect(v).toMatchObject({
      ok: true,
      authority: { authority_id: issued.authority_id, evidence_id: row.evidence_id, reuse_policy: 'SINGLE_USE' },
    });
    // authorize is idempotent for the same act
    expect(await gate.authorize(a)).toEqual({ status: 'issued', authority_id: issued.authority_id });
  });

  it('T-A shape: retrieval provenance + COMMUNICATION is denied with EF_INSTRUCTION_PROVENANCE_FAILURE, evidence recorded, no authority', async () => {
    const a = await act({
      tool: 'email_send',
      consequence_class: 'COMMUNICATION',
      provenance: 'retrieval',
      args: { to: 'attacker@ex.com' },
    });
    let invoked = false;
    const r = await gate.dispatch(a, { to: 'attacker@ex.com' }, async () => {
      invoked = true;
    });
    expect(r).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_INSTRUCTION_PROVENANCE_FAILURE' } });
    expect(invoked).toBe(false);
    expect(await store.ledger.getAuthority(a.candidate_act_id)).toBeUndefined();
  });

  it('refuses an act whose consequence class is not the policy assignment, and an act built under other epochs', async () => {
    const mis = await act({ tool: 'payout_create', consequence_class: 'INFORMATIONAL' });
    expect(await gate.authorize(mis)).toMatchObject({ status: 'denied', code: 'EF_SCOPE_MISMATCH' });
    const stale = await act();
    await gate.bumpEpoch('authority_epoch');
    expect(await gate.authorize(stale)).toMatchObject({ status: 'denied', code: 'EF_EPOCH_STALE' });
  });

  it('escalates a payout; a person approves through approve(); then dispatch invokes exactly once', async () => {
    const a = await act({ tool: 'payout_create', consequence_class: 'FINANCIAL', args: { amount: '150.00' } });
    let calls = 0;
    const invoke = async () => ({ payout: ++calls });
    const first = await gate.dispatch(a, { amount: '150.00' }, invoke);
    expect(first).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_APPROVAL_REQUIRED' } });
    expect((await store.escalations.list('PENDING')).map((e) => e.candidate_act_id)).toEqual([a.candidate_act_id]);
    const approved = await gate.approve(a.candidate_act_id, 'alice');
    expect(approved.status).toBe('issued');
    const row = await store.ledger.getAuthority(a.candidate_act_id);
    expect(verifyAuthority(row!.jws, { keys: [PUBLIC_JWK], sinkId: SINK, now: t })).toMatchObject({
      ok: true,
      authority: { approver: 'alice' },
    });
    expect(await gate.dispatch(a, { amount: '150.00' }, invoke)).toMatchObject({ invoked: true, result: { payout: 1 } });
    expect(calls).toBe(1);
  });

  it('an approval recorded out of process (the store, as `vrp gate approve` does) lets the held act run', async () => {
    const a = await act({ tool: 'payout_create', consequence_class: 'FINANCIAL', args: { amount: '9.00' } });
    expect((await gate.dispatch(a, { amount: '9.00' }, async () => 'paid')).decision.code).toBe('EF_APPROVAL_REQUIRED');
    const cli = await openSqliteStore(file);
    // The operator decides the binding `vrp gate pending` showed them.
    const [reviewed] = await cli.escalations.list('PENDING');
    await cli.escalations.decide(a.candidate_act_id, reviewed!.binding_digest, 'APPROVED', 'ops@example', t);
    await cli.close();
    expect(await gate.dispatch(a, { amount: '9.00' }, async () => 'paid')).toMatchObject({ invoked: true, result: 'paid' });
  });

  it('a re-escalation of the same act id with other arguments is refused: the approval issues only what the person reviewed', async () => {
    const shownArgs = { to: 'alice', amount: '10.00' };
    const swappedArgs = { to: 'mallory', amount: '10000.00' };
    const shown = await act({ id: 'act-swap', tool: 'payout_create', consequence_class: 'FINANCIAL', args: shownArgs });
    const swapped = await act({ id: 'act-swap', tool: 'payout_create', consequence_class: 'FINANCIAL', args: swappedArgs });
    const received: unknown[] = [];
    const tool = (args: unknown) => async () => {
      received.push(args);
      return 'sent';
    };
    expect((await gate.dispatch(shown, shownArgs, tool(shownArgs))).decision.code).toBe('EF_APPROVAL_REQUIRED');
    const [reviewed] = await store.escalations.list('PENDING');
    expect(reviewed).toMatchObject({ candidate_act_id: 'act-swap', status: 'PENDING' });
    // The swap is refused, and the escalation the person is reviewing stays exactly as it was.
    expect(await gate.authorize(swapped)).toMatchObject({ status: 'denied', code: 'EF_SCOPE_MISMATCH' });
    expect(await gate.dispatch(swapped, swappedArgs, tool(swappedArgs))).toMatchObject({
      invoked: false,
      decision: { allow: false, code: 'EF_SCOPE_MISMATCH' },
    });
    expect(await store.escalations.get('act-swap')).toEqual(reviewed);
    // The person approves what they reviewed; authority is issued for exactly that.
    expect((await gate.approve('act-swap', 'alice', reviewed!.binding_digest)).status).toBe('issued');
    expect(await gate.dispatch(swapped, swappedArgs, tool(swappedArgs))).toMatchObject({
      invoked: false,
      decision: { allow: false, code: 'EF_SCOPE_MISMATCH' },
    });
    expect(await gate.dispatch(shown, shownArgs, tool(shownArgs))).toMatchObject({ invoked: true, result: 'sent' });
    expect(received).toEqual([shownArgs]);
  });

  it('a re-escalation with other arguments while approved is refused too, and approve() without a digest approves the recorded binding', async () => {
    const shown = await act({ id: 'act-swap2', tool: 'payout_create', consequence_class: 'FINANCIAL', args: { amount: '1.00' } });
    const swapped = await act({ id: 'act-swap2', tool: 'payout_create', consequence_class: 'FINANCIAL', args: { amount: '999.00' } });
    expect((await gate.authorize(shown)).status).toBe('escalated');
    expect(await gate.authorize(swapped)).toMatchObject({ status: 'denied', code: 'EF_SCOPE_MISMATCH' });
    expect((await gate.approve('act-swap2', 'alice')).status).toBe('issued');
    expect(await store.ledger.getAuthority('act-swap2')).toMatchObject({ arguments_digest: shown.arguments_digest.value });
    let calls = 0;
    expect(await gate.dispatch(swapped, { amount: '999.00' }, async () => ++calls)).toMatchObject({ invoked: false });
    expect(calls).toBe(0);
  });

  it('approving (or refusing) with a digest the person did not review for this act decides nothing', async () => {
    const a = await act({ tool: 'payout_create', consequence_class: 'FINANCIAL', args: { amount: '5.00' } });
    const b = await act({ tool: 'payout_create', consequence_class: 'FINANCIAL', args: { amount: '5000.00' } });
    expect((await gate.authorize(a)).status).toBe('escalated');
    expect((await gate.authorize(b)).status).toBe('escalated');
    const rowA = await store.escalations.get(a.candidate_act_id);
    const stale = (await store.escalations.get(b.candidate_act_id))!.binding_digest;
    expect(stale).not.toBe(rowA!.binding_digest);
    expect(await gate.approve(a.candidate_act_id, 'alice', stale)).toMatchObject({ status: 'denied', code: 'EF_SCOPE_MISMATCH' });
    expect(await gate.reject(a.candidate_act_id, 'alice', stale)).toMatchObject({ status: 'denied', code: 'EF_SCOPE_MISMATCH' });
    expect(await store.escalations.decide(a.candidate_act_id, stale, 'APPROVED', 'alice', t)).toBeUndefined();
    expect(await store.escalations.get(a.candidate_act_id)).toEqual(rowA);
    expect(await store.ledger.getAuthority(a.candidate_act_id)).toBeUndefined();
    expect((await gate.approve(a.candidate_act_id, 'alice', rowA!.binding_digest)).status).toBe('issued');
    expect(await gate.approve('no-such-act', 'alice')).toMatchObject({ status: 'denied', code: 'EF_002' });
  });

  it('the approve callback decides inline; a refusal or a throwing approver denies', async () => {
    const yes = newGate({ approve: async () => true });
    const a = await act({ tool: 'payout_create', consequence_class: 'FINANCIAL' }, yes);
    expect((await yes.authorize(a)).status).toBe('issued');
    const no = newGate({ approve: async () => false });
    const b = await act({ tool: 'payout_create', consequence_class: 'FINANCIAL' }, no);
    expect(await no.authorize(b)).toMatchObject({ status: 'denied', code: 'EF_NOT_AUTHORIZED' });
    expect(await gate.approve(b.candidate_act_id, 'late')).toMatchObject({ status: 'denied', code: 'EF_NOT_AUTHORIZED' });
    const broken = newGate({
      approve: async () => {
        throw new Error('approver offline');
      },
    });
    const c = await act({ tool: 'payout_create', consequence_class: 'FINANCIAL' }, broken);
    expect(await broken.authorize(c)).toMatchObject({ status: 'denied', code: 'EF_NOT_AUTHORIZED' });
  });

  it('unknown provenance + FINANCIAL escalates even with an approver-less gate, and never issues', async () => {
    const a = await act({ tool: 'payout_create', consequence_class: 'FINANCIAL' });
    const { instruction_provenance: _, ...noProvenance } = a;
    expect(await gate.authorize(noProvenance as AgentCandidateAct)).toMatchObject({ status: 'escalated', code: 'EF_APPROVAL_REQUIRED' });
    expect(await store.ledger.getAuthority(a.candidate_act_id)).toBeUndefined();
  });
});

describe('dispatch: journal and the retry rule', () => {
  it('a retry of a finished act returns the recorded result, never a second invoke', async () => {
    const a = await act();
    let calls = 0;
    const invoke = async () => ({ hits: ++calls });
    expect(await gate.dispatch(a, { q: 'lisbon' }, invoke)).toMatchObject({ invoked: true, result: { hits: 1 } });
    const retry = await gate.dispatch(a, { q: 'lisbon' }, invoke);
    expect(retry).toMatchObject({ invoked: false, replayed: true, result: { hits: 1 }, decision: { allow: false, code: 'EF_005' } });
    expect(calls).toBe(1);
    expect(await store.journal.get(a.candidate_act_id)).toMatchObject({ state: 'EFFECTUATED', result_json: '{"hits":1}' });
  });

  it('a tool that throws is journaled FAILED, the error is rethrown, and a retry does not invoke again', async () => {
    const a = await act();
    let calls = 0;
    const boom = async () => {
      calls++;
      throw Object.assign(new Error('backend down'), { code: 'ECONNRESET' });
    };
    await expect(gate.dispatch(a, { q: 'lisbon' }, boom)).rejects.toThrow('backend down');
    expect(await store.journal.get(a.candidate_act_id)).toMatchObject({ state: 'FAILED', error_code: 'ECONNRESET' });
    expect(await gate.dispatch(a, { q: 'lisbon' }, boom)).toMatchObject({ invoked: false, decision: { code: 'EF_005' } });
    expect(calls).toBe(1);
  });

  it('after a restart a consumed act without a result is EFFECT_RESULT_UNKNOWN and is never invoked', async () => {
    const a = await act();
    await gate.authorize(a);
    expect((await gate.enforce(a, { q: 'lisbon' })).allow).toBe(true); // consumed, then the "process" dies
    await store.close();
    store = await openSqliteStore(file);
    const restarted = newGate();
    let calls = 0;
    const r = await restarted.dispatch(a, { q: 'lisbon' }, async () => ++calls);
    expect(r).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_EFFECT_RESULT_UNKNOWN' } });
    expect(calls).toBe(0);
    expect(await store.journal.get(a.candidate_act_id)).toMatchObject({ state: 'EFFECT_RESULT_UNKNOWN' });
  });

  it('parallel dispatches of one act invoke once; siblings are separate acts', async () => {
    const a = await act();
    const sibling = await act({ args: { q: 'porto' } });
    let calls = 0;
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => gate.dispatch(a, { q: 'lisbon' }, async () => ++calls)),
      gate.dispatch(sibling, { q: 'porto' }, async () => ++calls),
    ]);
    expect(results.filter((r) => r.invoked)).toHaveLength(2);
    expect(calls).toBe(2);
  });

  it('events carry ids, codes and digests, never the raw arguments', async () => {
    const events: GateEvent[] = [];
    const g = newGate({ onEvent: (e) => events.push(e) });
    const secret = 'alice-private@example.com';
    const a = await act({ args: { q: secret } }, g);
    await g.dispatch(a, { q: secret }, async () => 'ok');
    await g.dispatch(
      await act({ tool: 'email_send', consequence_class: 'COMMUNICATION', provenance: 'retrieval', args: { to: secret } }, g),
      { to: secret },
      async () => 'x',
    );
    expect(events.map((e) => `${e.type}:${'state' in e ? e.state : 'status' in e ? e.status : e.allow}`)).toEqual([
      'authorize:issued',
      'journal:CONSUMED',
      'enforce:true',
      'journal:INVOKED',
      'journal:EFFECTUATED',
      'authorize:denied',
    ]);
    expect(JSON.stringify(events)).not.toContain(secret);
    const journal = JSON.stringify(await store.journal.list());
    expect(journal).not.toContain(secret);
  });
});

afterAll(removeTmpDirs);
