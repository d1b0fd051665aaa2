/**
 * authorize: policy → evidence → authority ([I-D.das-agentic]: the Protected Enforcement Domain
 * "issues scoped non-bearer authority"). A hot envelope issues authority, a person decides an
 * escalated act (escalation.ts), the rest is denied. The validation evidence is committed
 * before (with) the authority and never after; authority is written only under the act's
 * epochs, read in the same transaction and within the timeout (enforce() contract, MUST 5
 * applies to issuance too).
 */

import { type AgentCandidateAct, validateAct } from './act.js';
import { type AgentFinalityAuthority, signAuthority } from './authority.js';
import { GATE_PROFILE } from './errors.js';
import { approvedAct, bindingDigest, bindingOf, type EscalationDecision, escalate } from './escalation.js';
import { actAudit, denied, evidenceRow, recordBindingConflict, recordDenial, recordStale } from './evidence.js';
import { type AuthorizeOutcome, asGateError, type GateContext } from './gate-context.js';
import type { PolicyDecision } from './policy.js';
import { randomId } from './random-id.js';
import type { AuthorityRow, ConsumeOutcome, ConsumeRequest } from './store/ports.js';

/**
 * An authorize() outcome inside dispatch: `consumed` when the issuance and the consume committed
 * together; `exists` when that issuance found the act already had authority (nothing was written).
 */
export type DispatchAuthorizeOutcome = AuthorizeOutcome & { consumed?: ConsumeOutcome; exists?: true };

/** Decide an act that is not validated yet (the public `Gate.authorize`). Never throws. */
export async function authorize(ctx: GateContext, act: unknown): Promise<AuthorizeOutcome> {
  const v = validateAct(act);
  if (!v.ok) return denied(v.code);
  try {
    await ctx.ready();
    return await authorizeValidated(ctx, v.act, ctx.clock.now());
  } catch (e) {
    return denied(asGateError(e).code);
  }
}

/**
 * Decide a validated act. `known` is the act's authority row when the caller read it already
 * (`null`: it has none), so one dispatch reads it once; a concurrent issuer for the same act id
 * is still caught by the store's one-authority-per-act rule. With `consume` (dispatch's hot
 * path), authority the policy issues from a hot envelope is consumed in the issuance's own
 * transaction: one durable commit before invoke. Approvals keep the general path. `decided` is
 * the policy's decision for this act when the caller evaluated it already (the policy is pure
 * over the act, so it is not evaluated twice). Throws on store errors.
 */
export async function authorizeValidated(
  ctx: GateContext,
  a: AgentCandidateAct,
  now: number,
  known?: AuthorityRow | null,
  consume?: ConsumeRequest,
  decided?: PolicyDecision,
): Promise<DispatchAuthorizeOutcome> {
  if (a.finality_sink.sink_id !== ctx.sinkId) return denied('EF_040');
  if (Date.parse(a.expires_at) <= now) return denied('EF_002');
  const existing = known === undefined ? await ctx.store.ledger.getAuthority(a.candidate_act_id) : known;
  if (existing) return existingOutcome(ctx, existing, a, now);
  const d = decided ?? ctx.policy.evaluate(a);
  if (d.decision === 'issue') return issue(ctx, a, now, d.ttlMs, d.reason, null, consume);
  if (d.decision === 'deny') return recordDenial(ctx, a, a.policy_state, now, d.code, d.reason);
  const step = await escalate(ctx, a, now, d.reason);
  if ('outcome' in step) return step.outcome;
  if ('approvedBy' in step) return issue(ctx, a, now, ctx.policy.approvalTtlMs, `approved by ${step.approvedBy}`, step.approvedBy);
  return issueApproved(ctx, step.decision);
}

/**
 * After a person's decision (escalation.ts `decideEscalation`): issue authority for the held act
 * it approved. Issuance re-runs authorize, so policy, epochs and expiry are checked again now.
 */
export async function issueApproved(ctx: GateContext, decision: EscalationDecision): Promise<AuthorizeOutcome> {
  const held = approvedAct(decision, ctx.sinkId);
  if ('code' in held) return denied(held.code);
  return authorize(ctx, held.act);
}

function existingOutcome(ctx: GateContext, row: AuthorityRow, act: AgentCandidateAct, now: number): AuthorizeOutcome {
  if (row.state === 'CONSUMED') return denied('EF_005');
  if (row.state === 'REVOKED') return denied('EF_REVOKED');
  if (row.expires_at <= now) return denied('EF_002');
  if (bindingDigest(bindingOf(act, ctx.sinkId)) !== bindingDigest(row)) return denied('EF_SCOPE_MISMATCH');
  return { status: 'issued', authority_id: row.authority_id };
}

async function issue(
  ctx: GateContext,
  act: AgentCandidateAct,
  now: number,
  ttlMs: number,
  reason: string,
  approver: string | null,
  consume?: ConsumeRequest,
): Promise<DispatchAuthorizeOutcome> {
  const epochs = act.policy_state;
  const evidence = evidenceRow(ctx, act, epochs, now, 'ISSUED', null, reason, approver);
  const expiresAt = Math.min(now + ttlMs, Date.parse(act.expires_at));
  const authority: AgentFinalityAuthority = {
    version: '1.0',
    object_type: 'agent_finality_authority',
    profile: GATE_PROFILE,
    authority_id: `afa-${randomId(12, 'base64url')}`,
    candidate_act_id: act.candidate_act_id,
    evidence_id: evidence.evidence_id,
    arguments_digest: act.arguments_digest,
    tool: {
      tool_id: act.tool.tool_id,
      function_id: act.tool.function_id,
      ...(act.tool.tool_endpoint ? { tool_endpoint: act.tool.tool_endpoint } : {}),
    },
    ...(act.destination ? { destination_id: act.destination.destination_id } : {}),
    sink_id: ctx.sinkId,
    consequence_class: act.consequence_class,
    issued_at: new Date(now).toISOString(),
    expires_at: new Date(expiresAt).toISOString(),
    policy_state: epochs,
    reuse_policy: 'SINGLE_USE',
    ...(approver ? { approver } : {}),
  };
  const row: AuthorityRow = {
    authority_id: authority.authority_id,
    ...bindingOf(act, ctx.sinkId),
    evidence_id: evidence.evidence_id,
    issued_at: now,
    expires_at: expiresAt,
    ...epochs,
    jws: signAuthority(authority, ctx.signer),
    state: 'ISSUED',
    consumed_at: null,
    consumed_by: null,
    revoked_at: null,
  };
  const audit = [actAudit(act, 'allow', null, approver), actAudit(act, 'issued', null, approver)];
  const opts = { timeoutMs: ctx.timeoutMs };
  let consumed: ConsumeOutcome | undefined;
  try {
    if (consume) {
      const written = await ctx.store.ledger.issueAndConsume({ expectEpochs: epochs, evidence, authority: row, audit }, consume, opts);
      if (!written.recorded) return recordStale(ctx, act, written.current, now);
      consumed = written.outcome;
    } else {
      const written = await ctx.store.ledger.recordDecision({ expectEpochs: epochs, evidence, authority: row, audit }, opts);
      if (!written.recorded) {
        return 'conflict' in written ? recordBindingConflict(ctx, act, now) : recordStale(ctx, act, written.current, now);
      }
    }
  } catch (e) {
    // Another process issued for the same act first (one authority per act id): report that one.
    // dispatch's issue-and-consume (which read nothing before) takes its general path for it instead.
    const raced = await ctx.store.ledger.getAuthority(act.candidate_act_id);
    if (raced) return consume ? { ...existingOutcome(ctx, raced, act, now), exists: true } : existingOutcome(ctx, raced, act, now);
    throw e;
  }
  ctx.emit({ type: 'authorize', candidate_act_id: act.candidate_act_id, status: 'issued', arguments_digest: act.arguments_digest.value });
  return { status: 'issued', authority_id: row.authority_id, ...(consumed ? { consumed } : {}) };
}
