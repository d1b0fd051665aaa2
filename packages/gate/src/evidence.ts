/**
 * The validation evidence of an authorize() decision: committed before (or with) the authority
 * or escalation it justifies, never after ([I-D.das-agentic]: the Protected Enforcement Domain
 * commits its evidence, then issues authority).
 */

import { type AgentCandidateAct, actDigest, type PolicyState } from './act.js';
import type { AuditEvent, AuditKind } from './audit/chain.js';
import { EF_CODES, type EfCode } from './errors.js';
import type { AuthorizeOutcome, GateContext } from './gate-context.js';
import { randomId } from './random-id.js';
import type { EvidenceDecision } from './store/ledger-schema.js';
import type { EvidenceRow } from './store/ports.js';

/** A refused authorize() with the registry's fixed message. */
export function denied(code: EfCode): AuthorizeOutcome {
  return { status: 'denied', code, message: EF_CODES[code].message };
}

export function evidenceRow(
  ctx: GateContext,
  act: AgentCandidateAct,
  epochs: PolicyState,
  now: number,
  decision: EvidenceDecision,
  code: EfCode | null,
  reason: string,
  approver: string | null,
): EvidenceRow {
  return {
    evidence_id: `ev-${randomId(12, 'base64url')}`,
    candidate_act_id: act.candidate_act_id,
    act_digest: actDigest(act),
    arguments_digest: act.arguments_digest.value,
    decision,
    code,
    reason,
    policy_id: ctx.policy.policyId,
    ...epochs,
    approver,
    recorded_at: now,
  };
}

/**
 * The audit entry of a decision on an act: ids, tool, server identity and the arguments digest,
 * never the arguments. Its `actor` is who caused it: the person who approved, the enforcer that
 * refused, else the act's initiating principal — so a team gateway's log names each user (issue 33).
 */
export function actAudit(act: AgentCandidateAct, kind: AuditKind, code: string | null = null, actor: string | null = null): AuditEvent {
  return {
    kind,
    act_id: act.candidate_act_id,
    tool: act.tool.tool_id,
    server: act.tool.tool_endpoint ?? null,
    digest: act.arguments_digest.value,
    code,
    actor: actor ?? act.initiating_principal.principal_id,
  };
}

/** Record a refusal as evidence, and refuse. */
export async function recordDenial(
  ctx: GateContext,
  act: AgentCandidateAct,
  epochs: PolicyState,
  now: number,
  code: EfCode,
  reason: string,
): Promise<AuthorizeOutcome> {
  await ctx.store.ledger.recordDecision(
    { evidence: evidenceRow(ctx, act, epochs, now, 'DENIED', code, reason, null), audit: [actAudit(act, 'deny', code)] },
    { timeoutMs: ctx.timeoutMs },
  );
  ctx.emit({
    type: 'authorize',
    candidate_act_id: act.candidate_act_id,
    status: 'denied',
    code,
    arguments_digest: act.arguments_digest.value,
  });
  return denied(code);
}

/** The act was built under epochs that moved on: record that, and refuse. */
export function recordStale(ctx: GateContext, act: AgentCandidateAct, current: PolicyState, now: number): Promise<AuthorizeOutcome> {
  return recordDenial(ctx, act, current, now, 'EF_EPOCH_STALE', 'act built under other epochs');
}

/** The act id is escalated under another binding: record the refusal, leave the escalation as it was. */
export function recordBindingConflict(ctx: GateContext, act: AgentCandidateAct, now: number): Promise<AuthorizeOutcome> {
  return recordDenial(ctx, act, act.policy_state, now, 'EF_SCOPE_MISMATCH', 'act id already escalated with another binding');
}
