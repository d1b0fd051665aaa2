/**
 * Approvals inside the client, the decision module (approvals/answer.ts) and the sealed
 * `requestState` (approvals/request-state.ts), on a real SQLite store whose escalations the real
 * Gate makes: the route each client gets (2026-07-28 `InputRequiredResult`, 2025-11-25
 * `elicitation/create` in URL mode, or today's wait), the decision read from the store alone on
 * every round (a client's `accept` grants nothing; approved runs once; rejected is refused), and a
 * state that is tampered with, foreign, expired or another gate's opens nothing.
 */
import { join } from 'node:path';
import { isInputRequiredResult } from '@modelcontextprotocol/server';
import {
  type AgentCandidateAct,
  actBindingDigest,
  approvalLinkUrl,
  decideEscalation,
  Gate,
  type GateStore,
  loadPolicy,
  openSqliteStore,
  readApprovalLink,
  requestStateKey,
  requestStateSealer,
} from '@vrpkit/gate';
import { decodeProtectedHeader } from 'jose';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  APPROVAL_INPUT_KEY,
  type ApprovalClient,
  type ApprovalDeps,
  answerAfterElicitation,
  answerEscalatedCall,
  approvalRoute,
  type EscalatedCall,
  openRetriedState,
  urlElicitationDeclared,
} from '../src/approvals/answer.js';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

afterAll(removeTmpDirs);

const T0 = Date.parse('2026-12-05T18:00:00Z');
const MIN = 60_000;
const PAGE = 'http://127.0.0.1:8932/';
const V2026: ApprovalClient = { revision: '2026-07-28', urlElicitation: true, sessionful: false };
const V2025: ApprovalClient = { revision: '2025-11-25', urlElicitation: true, sessionful: true };
const ARGS = { amount: '5.00', iban: 'PT50 0002 0123 1234 5678 9015 4' };

let store: GateStore;
let gate: Gate;
let deps: ApprovalDeps;
let t = T0;
let n = 0;
const clock = { now: () => t };

/** An escalated payout (FINANCIAL: the test policy sends it to a person) and the call it came in. */
async function escalated(ttlMs = 30 * MIN): Promise<{ act: AgentCandidateAct; call: EscalatedCall }> {
  const act = makeAct({
    id: `pay-${n++}`,
    tool: 'payout_create',
    consequence_class: 'FINANCIAL',
    args: ARGS,
    policy_state: await gate.policyState(),
    now: t,
    ttlMs,
  });
  expect((await gate.authorize(act)).status).toBe('escalated');
  const call = {
    candidate_act_id: act.candidate_act_id,
    binding_digest: actBindingDigest(act, SINK),
    tool: act.tool.tool_id,
    arguments_digest: act.arguments_digest.value,
    principal: 'alice@laptop',
  };
  return { act, call };
}

beforeEach(async () => {
  t = T0;
  store = await openSqliteStore(join(tmpDir('approval-answer'), 'gate.db'));
  gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, clock });
  deps = {
    escalations: store.escalations,
    links: store.approvalLinks,
    sealer: requestStateSealer(requestStateKey(), { clock }),
    pageUrl: PAGE,
    clock,
  };
});
afterEach(async () => {
  await store.close();
});

describe('the sealed requestState (jose compact JWE, dir + A256GCM)', () => {
  const call = { candidate_act_id: 'a1', binding_digest: 'b1', tool: 'payout_create', arguments_digest: 'd1', principal: 'alice' };
  const link = { token: 'T'.repeat(43), expires_at: T0 + 10 * MIN };

  it('opens for the very call it was sealed for, and hides what it carries', async () => {
    const sealed = await deps.sealer.seal({ ...call, round: 2, link });
    expect(decodeProtectedHeader(sealed)).toEqual({ alg: 'dir', enc: 'A256GCM' });
    expect(sealed.split('.')).toHaveLength(5);
    // Encrypted, not only signed: neither the link's token nor the act id can be read off it.
    expect(Buffer.from(sealed.replaceAll('.', ''), 'base64url').toString('latin1')).not.toContain('TTTT');
    expect(await deps.sealer.open(sealed, call)).toEqual({ ok: true, state: { ...call, round: 2, link } });
  });

  it('refuses a state for another act, binding, tool, arguments or principal (foreign)', async () => {
    const sealed = await deps.sealer.seal({ ...call, round: 1 });
    for (const k of Object.keys(call) as (keyof typeof call)[])
      expect(await deps.sealer.open(sealed, { ...call, [k]: `${call[k]}-other` }), k).toEqual({ ok: false, reason: 'foreign' });
  });

  it('refuses a tampered state, another gate key, an unsealed or oversized one (malformed), and a lapsed one (expired)', async () => {
    const sealed = await deps.sealer.seal({ ...call, round: 1 });
    const parts = sealed.split('.');
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    for (const i of [0, 2, 3, 4]) {
      const tampered = parts.map((p, j) => (j === i ? flip(p) : p)).join('.');
      expect(await deps.sealer.open(tampered, call), `part ${i}`).toEqual({ ok: false, reason: 'malformed' });
    }
    const otherGate = requestStateSealer(requestStateKey(), { clock });
    expect(await otherGate.open(sealed, call)).toEqual({ ok: false, reason: 'malformed' });
    const unsecured = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ vrp: { ...call, round: 1 } })).toString('base64url')}.`;
    expect(await deps.sealer.open(unsecured, call)).toEqual({ ok: false, reason: 'malformed' });
    expect(await deps.sealer.open('x'.repeat(5000), call)).toEqual({ ok: false, reason: 'malformed' });
    t += 10 * MIN + 1000;
    expect(await deps.sealer.open(sealed, call)).toEqual({ ok: false, reason: 'expired' });
  });

  it('a key derived from one secret is the same in every process; without a secret each gate has its own', async () => {
    expect(Buffer.from(requestStateKey('shared secret'))).toEqual(Buffer.from(requestStateKey('shared secret')));
    const a = requestStateSealer(requestStateKey('shared secret'), { clock });
    const b = requestStateSealer(requestStateKey('shared secret'), { clock });
    expect((await b.open(await a.seal({ ...call, round: 1 }), call)).ok).toBe(true);
    expect(Buffer.from(requestStateKey())).not.toEqual(Buffer.from(requestStateKey()));
    expect(() => requestStateSealer(new Uint8Array(16))).toThrow(RangeError);
  });
});

describe('which answer a client gets', () => {
  it('reads URL elicitation from the capabilities: an object under elicitation.url, nothing else', () => {
    expect(urlElicitationDeclared({ elicitation: { url: {} } })).toBe(true);
    expect(urlElicitationDeclared({ elicitation: { form: {}, url: {} } })).toBe(true);
    for (const caps of [
      { elicitation: {} },
      { elicitation: { form: {} } },
      { elicitation: { url: true } },
      { elicitation: { url: [] } },
      {},
      null,
      undefined,
    ])
      expect(urlElicitationDeclared(caps), JSON.stringify(caps)).toBe(false);
  });

  it('2026-07-28 → input_required; 2025-11-25 with a session → elicitation; anything else → today’s wait', () => {
    expect(approvalRoute(V2026, PAGE)).toBe('input_required');
    expect(approvalRoute(V2025, PAGE)).toBe('elicitation');
    expect(approvalRoute({ ...V2025, sessionful: false }, PAGE)).toBe('wait');
    expect(approvalRoute({ ...V2025, revision: '2025-06-18' }, PAGE)).toBe('wait');
    expect(approvalRoute({ ...V2026, urlElicitation: false }, PAGE)).toBe('wait');
    expect(approvalRoute(V2026, undefined)).toBe('wait');
  });
});

describe('the decision comes from the store, on every round', () => {
  it('2026: an InputRequiredResult whose URL opens this act, with a sealed state; the retry while pending asks again with the same link', async () => {
    const { call } = await escalated();
    const first = await answerEscalatedCall(deps, call, V2026);
    if (first.answer !== 'input_required') throw new Error(`expected input_required, got ${first.answer}`);
    expect(isInputRequiredResult(first.result)).toBe(true);
    const url = approvalLinkUrl(PAGE, first.link.token);
    expect(first.result.inputRequests).toEqual({
      [APPROVAL_INPUT_KEY]: {
        method: 'elicitation/create',
        params: { mode: 'url', url, message: expect.stringContaining(call.candidate_act_id) },
      },
    });
    // The message names ids and digests, never the arguments.
    expect(JSON.stringify(first.result)).not.toContain('5.00');
    expect(await readApprovalLink(store.approvalLinks, first.link.token, t)).toMatchObject({
      state: 'open',
      link: { candidate_act_id: call.candidate_act_id },
    });

    // The client says "accept" and retries: still pending in the store, so it is asked again, same link, round 2.
    t += MIN;
    const opened = await openRetriedState(deps.sealer, call, first.result.requestState);
    if (!opened.ok || !opened.state) throw new Error('the state did not open');
    expect(opened.state).toMatchObject({ round: 1, link: { token: first.link.token } });
    const second = await answerEscalatedCall(deps, call, V2026, opened.state);
    if (second.answer !== 'input_required') throw new Error(`expected input_required, got ${second.answer}`);
    expect(second.link.token).toBe(first.link.token);
    expect(
      (await deps.sealer.open(second.result.requestState!, call)).ok && (await deps.sealer.open(second.result.requestState!, call)),
    ).toMatchObject({ state: { round: 2 } });
    expect((await store.escalations.get(call.candidate_act_id))?.status).toBe('PENDING');
  });

  it('a link that expired is replaced by a new one; after the last round the answer is today’s', async () => {
    const { call } = await escalated();
    const first = await answerEscalatedCall(deps, call, V2026);
    if (first.answer !== 'input_required') throw new Error(first.answer);
    const state = (await deps.sealer.open(first.result.requestState!, call)) as {
      ok: true;
      state: { round: number; link?: { token: string; expires_at: number } };
    };
    t += 10 * MIN + 1; // the link lapsed; the escalation (30 min) has not
    const again = await answerEscalatedCall({ ...deps, sealer: requestStateSealer(requestStateKey('k'), { clock }) }, call, V2026, {
      ...call,
      ...state.state,
    });
    if (again.answer !== 'input_required') throw new Error(again.answer);
    expect(again.link.token).not.toBe(first.link.token);
    expect(await answerEscalatedCall({ ...deps, maxRounds: 3 }, call, V2026, { ...call, round: 3 })).toEqual({ answer: 'wait' });
  });

  it('2025-11-25 with a session: elicitation/create in URL mode; the client’s accept grants nothing, decline ends the wait', async () => {
    const { call } = await escalated();
    const a = await answerEscalatedCall(deps, call, V2025);
    if (a.answer !== 'elicit') throw new Error(a.answer);
    expect(a.params).toEqual({
      mode: 'url',
      url: approvalLinkUrl(PAGE, a.link.token),
      message: expect.any(String),
      elicitationId: expect.any(String),
    });
    expect(await answerAfterElicitation(deps, call, 'accept')).toEqual({ answer: 'wait' });
    expect(await answerAfterElicitation(deps, call, 'decline')).toEqual({ answer: 'refuse', code: 'EF_APPROVAL_REQUIRED' });
    expect(await answerAfterElicitation(deps, call, 'cancel')).toEqual({ answer: 'refuse', code: 'EF_APPROVAL_REQUIRED' });
    expect((await store.escalations.get(call.candidate_act_id))?.status).toBe('PENDING');
  });

  it('no URL elicitation declared, or no page: today’s answer', async () => {
    const { call } = await escalated();
    expect(await answerEscalatedCall(deps, call, { ...V2026, urlElicitation: false })).toEqual({ answer: 'wait' });
    expect(await answerEscalatedCall({ ...deps, pageUrl: undefined }, call, V2026)).toEqual({ answer: 'wait' });
  });

  it('approved on the page → run, and the call runs exactly once; rejected → EF_NOT_AUTHORIZED', async () => {
    const { act, call } = await escalated();
    const decided = await decideEscalation(store.escalations, {
      candidateActId: act.candidate_act_id,
      status: 'APPROVED',
      approver: 'alice',
      reviewedDigest: call.binding_digest,
      now: t,
    });
    expect(decided).toMatchObject({ ok: true, decided: true });
    // Whatever the client answered: the store says approved.
    expect(await answerAfterElicitation(deps, call, 'decline')).toEqual({ answer: 'run' });
    expect(await answerEscalatedCall(deps, call, V2026)).toEqual({ answer: 'run' });
    let runs = 0;
    const invoke = async () => ++runs;
    expect(await gate.dispatch(act, ARGS, invoke)).toMatchObject({ invoked: true, result: 1 });
    // A second retry of the same call is a replay: never a second invoke.
    expect(await answerEscalatedCall(deps, call, V2026)).toEqual({ answer: 'run' });
    expect(await gate.dispatch(act, ARGS, invoke)).toMatchObject({ invoked: false });
    expect(runs).toBe(1);

    const other = await escalated();
    await decideEscalation(store.escalations, {
      candidateActId: other.act.candidate_act_id,
      status: 'REJECTED',
      approver: 'alice',
      now: t,
    });
    expect(await answerEscalatedCall(deps, other.call, V2026)).toEqual({ answer: 'refuse', code: 'EF_NOT_AUTHORIZED' });
    expect(await answerAfterElicitation(deps, other.call, 'accept')).toEqual({ answer: 'refuse', code: 'EF_NOT_AUTHORIZED' });
  });

  it('another binding than the escalation’s, an expired escalation, and a state of another act grant nothing', async () => {
    const { call } = await escalated(5 * MIN);
    const other = await escalated();
    expect(await answerEscalatedCall(deps, { ...call, binding_digest: other.call.binding_digest }, V2026)).toEqual({
      answer: 'refuse',
      code: 'EF_SCOPE_MISMATCH',
    });
    const first = await answerEscalatedCall(deps, other.call, V2026);
    if (first.answer !== 'input_required') throw new Error(first.answer);
    // The state minted for `other` echoed on `call`'s retry: refused, nothing is read from it.
    expect(await openRetriedState(deps.sealer, call, first.result.requestState)).toEqual({ ok: false, reason: 'foreign' });
    expect(await openRetriedState(deps.sealer, call, undefined)).toEqual({ ok: true });
    t += 5 * MIN;
    expect(await answerEscalatedCall(deps, call, V2026)).toEqual({ answer: 'refuse', code: 'EF_APPROVAL_REQUIRED' });
  });
});
