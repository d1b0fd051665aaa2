/**
 * Escalation: an act policy sends to a person, and the one rule that makes a person's decision
 * safe: an approval binds the digest the person reviewed (the act's load-bearing fields), never
 * whatever an act id maps to later ([I-D.das-agentic] EF-070 ESCALATION_REQUIRED; Tool-Use
 * Binding draft, enforce() contract: "an approved search cannot become a send").
 *
 * This module is the only place an approval is bound: the Gate (`approve`, `reject`, the
 * `approve` callback) and `vrp gate approve` all decide through `decideEscalation`, and a
 * binding that differs is refused with one code, EF_SCOPE_MISMATCH.
 */
import { canonicalSha256Base64url } from '@vrpkit/core';
import type { AgentCandidateAct } from './act.js';
import { EF_CODES, type EfCode } from './errors.js';
import { actAudit, evidenceRow, recordBindingConflict, recordStale } from './evidence.js';
import type { AuthorizeOutcome, GateContext } from './gate-context.js';
import type { AuthorityRow, EscalationRow, Escalations } from './store/ports.js';

/** The load-bearing fields an authority and an approval are bound to (authority row columns). */
const BINDING_FIELDS = [
  'candidate_act_id',
  'arguments_digest',
  'tool_id',
  'function_id',
  'tool_endpoint',
  'destination_id',
  'consequence_class',
  'sink_id',
] as const;
export type Binding = Pick<AuthorityRow, (typeof BINDING_FIELDS)[number]>;

export function bindingOf(act: AgentCandidateAct, sinkId: string): Binding {
  return {
    candidate_act_id: act.candidate_act_id,
    arguments_digest: act.arguments_digest.value,
    tool_id: act.tool.tool_id,
    function_id: act.tool.function_id,
    tool_endpoint: act.tool.tool_endpoint ?? null,
    destination_id: act.destination?.destination_id ?? null,
    consequence_class: act.consequence_class,
    sink_id: sinkId,
  };
}

/** Digest over exactly the binding fields of an act or of a stored authority row (its other columns never enter). */
export function bindingDigest(binding: Binding): string {
  return canonicalSha256Base64url(Object.fromEntries(BINDING_FIELDS.map((k) => [k, binding[k]])));
}

/** The binding digest of an act as a gate with this sink binds it (what an escalation and an approval are bound to). */
export function actBindingDigest(act: AgentCandidateAct, sinkId: string): string {
  return bindingDigest(bindingOf(act, sinkId));
}

/** A person's decision on one escalated act. */
export interface EscalationDecisionRequest {
  candidateActId: string;
  status: 'APPROVED' | 'REJECTED';
  approver: string;
  /**
   * The escalation's `binding_digest` the person reviewed (`vrp gate pending` shows it). Without
   * it, the binding of the escalation row as read now is decided (a row never changes its binding).
   */
  reviewedDigest?: string;
  now: number;
}

export type EscalationDecision =
  /** `decided` is false when the row was already decided (or expired while pending): nothing changed. */
  | { ok: true; escalation: EscalationRow; decided: boolean }
  /** EF_002: no such escalation. EF_SCOPE_MISMATCH: it is bound to another digest than the reviewed one; nothing was decided. */
  | { ok: false; code: 'EF_002' | 'EF_SCOPE_MISMATCH'; escalation?: EscalationRow };

/** Decide a pending escalation, bound to exactly the digest the person reviewed. Store errors propagate. */
export async function decideEscalation(escalations: Escalations, req: EscalationDecisionRequest): Promise<EscalationDecision> {
  let digest = req.reviewedDigest;
  if (digest === undefined) {
    const row = await escalations.get(req.candidateActId);
    if (!row) return { ok: false, code: 'EF_002' };
    digest = row.binding_digest;
  }
  // The store decides only a PENDING, unexpired row bound to exactly `digest`.
  const decided = await escalations.decide(req.candidateActId, digest, req.status, req.approver, req.now);
  if (decided) return { ok: true, escalation: decided, decided: true };
  const current = await escalations.get(req.candidateActId);
  if (!current) return { ok: false, code: 'EF_002' };
  // The person reviewed another binding than the one recorded: nothing was decided.
  if (current.binding_digest !== digest) return { ok: false, code: 'EF_SCOPE_MISMATCH', escalation: current };
  return { ok: true, escalation: current, decided: false };
}

/**
 * The held act an approval issues authority for, or the refusal: a rejected or expired
 * escalation issues nothing, and the held act must be bound to exactly the reviewed digest.
 */
export function approvedAct(d: EscalationDecision, sinkId: string): { act: AgentCandidateAct } | { code: EfCode } {
  if (!d.ok) return { code: d.code };
  const row = d.escalation;
  if (row.status === 'REJECTED') return { code: 'EF_NOT_AUTHORIZED' };
  if (row.status !== 'APPROVED') return { code: 'EF_002' }; // expired while pending
  const act = JSON.parse(row.act_json) as AgentCandidateAct;
  // Defense in depth: the act issued for is bound to exactly the reviewed digest.
  if (row.binding_digest !== actBindingDigest(act, sinkId)) return { code: 'EF_SCOPE_MISMATCH' };
  return { act };
}

/**
 * What escalating an act leads to: a final outcome (pending, refused), an earlier approval of
 * exactly this binding (issue now), or the `approve` callback's decision (issue if approved).
 */
export type EscalationStep = { outcome: AuthorizeOutcome } | { approvedBy: string | null } | { decision: EscalationDecision };

/** Escalate an act policy sends to a person: record the evidence and the pending escalation, then ask the callback if there is one. */
export async function escalate(ctx: GateContext, act: AgentCandidateAct, now: number, reason: string): Promise<EscalationStep> {
  const binding = actBindingDigest(act, ctx.sinkId);
  const prior = await ctx.store.escalations.get(act.candidate_act_id);
  // An escalation is immutable in what it binds: the same act id with other arguments (or
  // tool, destination, …) is refused, and the recorded escalation stays as it was.
  if (prior && prior.binding_digest !== binding) return { outcome: await recordBindingConflict(ctx, act, now) };
  if (prior?.status === 'APPROVED' && prior.expires_at > now) return { approvedBy: prior.approver };
  if (prior?.status === 'REJECTED')
    return { outcome: { status: 'denied', code: 'EF_NOT_AUTHORIZED', message: EF_CODES.EF_NOT_AUTHORIZED.message } };
  const evidence = evidenceRow(ctx, act, act.policy_state, now, 'ESCALATED', 'EF_APPROVAL_REQUIRED', reason, null);
  const written = await ctx.store.ledger.recordDecision(
    {
      expectEpochs: act.policy_state,
      evidence,
      escalation: {
        candidate_act_id: act.candidate_act_id,
        evidence_id: evidence.evidence_id,
        binding_digest: binding,
        act_json: JSON.stringify(act),
        status: 'PENDING',
        approver: null,
        requested_at: now,
        decided_at: null,
        expires_at: Date.parse(act.expires_at),
      },
      audit: [actAudit(act, 'escalate', 'EF_APPROVAL_REQUIRED')],
    },
    { timeoutMs: ctx.timeoutMs },
  );
  if (!written.recorded)
    return { outcome: await ('conflict' in written ? recordBindingConflict(ctx, act, now) : recordStale(ctx, act, written.current, now)) };
  ctx.emit({
    type: 'authorize',
    candidate_act_id: act.candidate_act_id,
    status: 'escalated',
    code: 'EF_APPROVAL_REQUIRED',
    arguments_digest: act.arguments_digest.value,
  });
  const escalated: AuthorizeOutcome = { status: 'escalated', code: 'EF_APPROVAL_REQUIRED', message: EF_CODES.EF_APPROVAL_REQUIRED.message };
  if (!ctx.approve) return { outcome: escalated };
  let approved = false;
  try {
    approved = (await ctx.approve(act)) === true;
  } catch {
    approved = false; // an approver that fails has not approved
  }
  // The callback reviewed exactly `act`: the decision binds to its binding digest.
  const decision = await decideEscalation(ctx.store.escalations, {
    candidateActId: act.candidate_act_id,
    status: approved ? 'APPROVED' : 'REJECTED',
    approver: 'approve-callback',
    reviewedDigest: binding,
    now: ctx.clock.now(),
  });
  return { decision };
}

/** How often a waiting act re-reads its escalation: a decision made by another process (`vrp gate ui`) is seen within this. */
export const ESCALATION_POLL_MS = 250;

export interface EscalationWait {
  /** Give up after this long; the escalation stays pending (a later identical call may still run once approved). */
  timeoutMs: number;
  pollMs?: number;
  /** The waiting request was cancelled. */
  signal?: AbortSignal;
  /** Called about once a second while waiting (progress for the agent). */
  onWaiting?: (elapsedMs: number) => void;
  clock?: { now(): number };
}

/**
 * Wait for a person's decision on an escalated act by polling the store, so a decision from
 * any process on the same store (the approvals page, `vrp gate approve`) is seen. Returns the
 * decided row, or undefined when the wait ended undecided (timeout, cancellation, expiry).
 * The decision itself is only ever made through `decideEscalation`.
 */
export async function waitForEscalationDecision(
  escalations: Pick<Escalations, 'get'>,
  candidateActId: string,
  w: EscalationWait,
): Promise<EscalationRow | undefined> {
  const clock = w.clock ?? Date;
  const started = clock.now();
  const pollMs = Math.min(w.pollMs ?? ESCALATION_POLL_MS, 500);
  let lastTick = started;
  for (;;) {
    const row = await escalations.get(candidateActId);
    const now = clock.now();
    if (row?.status !== 'PENDING') return row;
    if (row.expires_at <= now || now - started >= w.timeoutMs || w.signal?.aborted) return undefined;
    if (now - lastTick >= 1000) {
      lastTick = now;
      w.onWaiting?.(now - started);
    }
    const left = w.timeoutMs - (now - started);
    await sleep(Math.max(1, Math.min(pollMs, left)), w.signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * What `--notify-url` receives when an act waits for a person: ids, digests and a link to the
 * approvals page, never the raw arguments (Tool-Use Binding draft, security considerations).
 */
export interface EscalationNotice {
  event: 'escalation_waiting';
  candidate_act_id: string;
  tool: string;
  server_id: string | null;
  consequence_class: string;
  arguments_digest: string;
  binding_digest: string;
  requested_at: string;
  /** The approvals page, when one is served (its token is never included). */
  link: string | null;
}

export function escalationNotice(act: AgentCandidateAct, sinkId: string, at: number, link: string | null): EscalationNotice {
  return {
    event: 'escalation_waiting',
    candidate_act_id: act.candidate_act_id,
    tool: act.tool.tool_id,
    server_id: act.tool.tool_endpoint ?? null,
    consequence_class: act.consequence_class,
    arguments_digest: act.arguments_digest.value,
    binding_digest: actBindingDigest(act, sinkId),
    requested_at: new Date(at).toISOString(),
    link,
  };
}

/**
 * POST the notice as JSON to `url` (bounded by `timeoutMs`). Never throws: a failed notification
 * is reported to `onFailure` and the wait goes on without it.
 */
export async function sendEscalationNotice(
  url: string,
  notice: EscalationNotice,
  onFailure: (reason: string) => void,
  timeoutMs = 5000,
): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(notice),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
    await res.body?.cancel();
    if (!res.ok) onFailure(`HTTP ${res.status}`);
    return res.ok;
  } catch (e) {
    onFailure(e instanceof Error ? `${e.name}: ${(e.cause as Error | undefined)?.message ?? e.message}` : 'failed');
    return false;
  }
}
