/**
 * Acts produced by other implementations: the gate is as strict as the candidate act schema the
 * Tool-Use Binding draft repeats (required members, enums, additionalProperties false) and no
 * stricter. The schema does not enumerate `finality_sink.sink_type` nor fix the digest's length,
 * so acts that differ there validate; they still run only with authority bound to their live digest.
 */
import { type AgentCandidateAct, digestArguments, validateAct } from '@vrpkit/gate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestGate, type TestGate } from './scenarios-gate.js';

/** The draft's mapped Anthropic example, exactly as printed (placeholder digest included). */
const DRAFT_EXAMPLE = {
  version: '1.0',
  object_type: 'agent_candidate_act',
  candidate_act_id: 'act-toolu-01A-sess55',
  act_type: 'TOOL_CALL',
  agent: { agent_id: 'claude-work-seat-12', runtime_id: 'anthropic-host-loop', model_id: 'claude-family', delegation_depth: 0 },
  tool: { tool_id: 'email_send', function_id: 'email_send', tool_protocol: 'LOCAL_FUNCTION' },
  purpose: { purpose_id: 'user-turn', declared_purpose: 'send invoice email' },
  arguments_digest: { algorithm: 'SHA-256', value: 'base64url-args', canonicalization: 'JCS' },
  destination: { destination_id: 'smtp-gw-1' },
  consequence_class: 'COMMUNICATION',
  policy_state: { policy_epoch: 9, authority_epoch: 3, revocation_epoch: 1 },
  freshness: { nonce: 'C0FFEE11DEADBEEF' },
  instruction_provenance: { source_type: 'user' },
  finality_sink: { sink_id: 'host-dispatch-1', sink_type: 'TOOL_DISPATCH' },
} as const;

/** The three members the draft's example leaves out although its own schema requires them. */
const COMPLETION = {
  created_at: '2026-11-29T12:00:00Z',
  expires_at: '2026-11-29T12:10:00Z',
  initiating_principal: { principal_id: 'org-acme' },
};

describe('acts produced by hand from the draft', () => {
  it('the printed example is refused only for what the schema requires: created_at, expires_at, initiating_principal', () => {
    const r = validateAct(DRAFT_EXAMPLE);
    expect(r).toMatchObject({ ok: false, code: 'EF_MALFORMED_ACT' });
    if (!r.ok) expect(r.message).toMatch(/created_at|expires_at|initiating_principal/);
    // Adding exactly those three makes it valid, placeholder digest included.
    expect(validateAct({ ...DRAFT_EXAMPLE, ...COMPLETION }).ok).toBe(true);
  });

  it.each([
    ['a sink type this gate does not name', { finality_sink: { sink_id: 'host-dispatch-1', sink_type: 'HTTP_CLIENT' } }],
    ['a hex digest value', { arguments_digest: { algorithm: 'SHA-256', value: 'ab'.repeat(32), canonicalization: 'JCS' } }],
    [
      'extra members inside tool and agent',
      { tool: { ...DRAFT_EXAMPLE.tool, vendor_ref: 'x' }, agent: { ...DRAFT_EXAMPLE.agent, seat: 12 } },
    ],
  ])('accepts %s', (_name, patch) => {
    expect(validateAct({ ...DRAFT_EXAMPLE, ...COMPLETION, ...patch }).ok).toBe(true);
  });
});

describe('such acts still run only with authority bound to their live digest', () => {
  let t: TestGate;
  const now = Date.now();
  const fresh = { created_at: new Date(now).toISOString(), expires_at: new Date(now + 60_000).toISOString() };
  beforeEach(async () => {
    t = await openTestGate();
  });
  afterEach(async () => {
    await t.close();
  });

  async function handMade(patch: Partial<Record<keyof AgentCandidateAct, unknown>>): Promise<AgentCandidateAct> {
    return {
      ...DRAFT_EXAMPLE,
      ...COMPLETION,
      ...fresh,
      policy_state: await t.gate.policyState(),
      tool: { tool_id: 'search', function_id: 'search' },
      consequence_class: 'INFORMATIONAL',
      ...patch,
    } as AgentCandidateAct;
  }

  it('the placeholder digest never matches live arguments: EF_SCOPE_MISMATCH, nothing runs', async () => {
    const act = await handMade({});
    let ran = 0;
    const r = await t.gate.dispatch(act, { q: 'lisbon' }, async () => ++ran);
    expect(r).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_SCOPE_MISMATCH' } });
    expect(ran).toBe(0);
  });

  it('a foreign sink type with the real digest is dispatched like a tool call, once', async () => {
    const act = await handMade({
      candidate_act_id: 'act-foreign-sink-1',
      arguments_digest: digestArguments({ q: 'lisbon' }),
      finality_sink: { sink_id: 'host-dispatch-1', sink_type: 'HTTP_CLIENT' },
    });
    let ran = 0;
    expect(await t.gate.dispatch(act, { q: 'lisbon' }, async () => ++ran)).toMatchObject({ invoked: true, result: 1 });
    expect(await t.gate.dispatch(act, { q: 'lisbon' }, async () => ++ran)).toMatchObject({ invoked: false });
    expect(ran).toBe(1);
  });
});
