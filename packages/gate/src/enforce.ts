/**
 * enforce(act, live_args) (Tool-Use Binding draft, enforce() contract):
 *   1. hash live_args with the same canonicalization as act.arguments_digest
 *   2. refuse if hashes differ
 *   3. refuse if authority missing, expired, consumed, or sink-mismatched
 *   4. consume single-use authority before returning allow=true
 *   5. never return allow=true on timeout or uncertain epoch
 * MUSTs 3–5 run in one transaction of the store (store/ledger.ts `consume`).
 */
import { asRecord } from '@vrpkit/core';
import { type AgentCandidateAct, digestArguments, validateAct } from './act.js';
import type { AuditEvent } from './audit/chain.js';
import { EF_CODES, type EfCode, type EnforceDecision } from './errors.js';
import { actAudit } from './evidence.js';
import { asGateError, type GateContext, type GateEvent } from './gate-context.js';
import type { ConsumeOutcome, ConsumeRequest } from './store/ports.js';

/**
 * A deny with the registry's fixed message. `retryable` is set only for the registry's
 * retryable code (EF-060, a validation timeout: nothing was consumed, the validation may be retried).
 */
export function denyDecision(code: EfCode): EnforceDecision {
  const d: EnforceDecision = { allow: false, code, message: EF_CODES[code].message };
  if (EF_CODES[code].retryable) d.retryable = true;
  return d;
}

/** enforce for an act and live arguments as given (the public `Gate.enforce`). Never throws. */
export async function enforce(ctx: GateContext, act: unknown, liveArgs: unknown): Promise<EnforceDecision> {
  const v = validateAct(act);
  if (!v.ok) return observed(ctx, act, await auditedDeny(ctx, act, v.code));
  // MUST 1: the live digest, by the same JCS + SHA-256 as the act's.
  let live: string;
  try {
    live = digestArguments(liveArgs).value;
  } catch (e) {
    return observed(ctx, v.act, await auditedDeny(ctx, v.act, asGateError(e).code));
  }
  return enforceValidated(ctx, v.act, live, liveArgs);
}

/**
 * enforce for an act already validated and live arguments already digested (dispatch does each
 * once); `liveArgs` are the arguments `liveDigest` covers. `invoke`: the consume journals the act
 * INVOKED (dispatch). Never throws.
 */
export async function enforceValidated(
  ctx: GateContext,
  a: AgentCandidateAct,
  liveDigest: string,
  liveArgs: unknown,
  invoke = false,
): Promise<EnforceDecision> {
  return observed(ctx, a, await decide(ctx, a, liveDigest, liveArgs, invoke));
}

/**
 * enforce's checks before the store (MUST 2, the sink, the value limits) and the consume request
 * they lead to, or the code to deny with. The request's `now` is set by the caller when it reads
 * the clock (after start-up); until then it is +∞, so a request sent without it is refused as
 * expired (fails closed).
 */
export function consumeRequest(
  ctx: GateContext,
  a: AgentCandidateAct,
  live: string,
  liveArgs: unknown,
  invoke: boolean,
): ConsumeRequest | EfCode {
  // Computer use: the live arguments carry the origin the controller read right before the
  // action. "Origin change MUST invalidate prior authority" (Tool-Use Binding draft, computer
  // use): an act whose live origin is not its own goes to the store as that destination
  // change, which spends the authority, even when its digest differs as well.
  const browser = a.finality_sink.sink_type === 'BROWSER_CONTROLLER';
  const origin = browser ? liveOrigin(liveArgs) : undefined;
  const originChanged = origin !== undefined && origin !== a.destination?.destination_id;
  // MUST 2: "an approved search cannot become a send".
  if (live !== a.arguments_digest.value && !originChanged) return 'EF_SCOPE_MISMATCH';
  // The sink is this enforcer; an act addressed to another sink is not ours to run.
  if (a.finality_sink.sink_id !== ctx.sinkId) return 'EF_040';
  // T-B ("payout denied when above envelope"): the policy's value limits hold for the live arguments
  // whatever authority the act holds, so an approval can never carry an act past them.
  const over = ctx.policy.checkArguments(a, liveArgs);
  if (over) return over.code;
  return {
    candidate_act_id: a.candidate_act_id,
    arguments_digest: live,
    tool_id: a.tool.tool_id,
    function_id: a.tool.function_id,
    tool_endpoint: originChanged ? origin : (a.tool.tool_endpoint ?? null),
    destination_id: originChanged ? origin : (a.destination?.destination_id ?? null),
    consequence_class: a.consequence_class,
    act_policy_state: a.policy_state,
    sink_id: ctx.sinkId,
    owner: ctx.instanceId,
    now: Number.POSITIVE_INFINITY,
    invalidate_on_origin_change: browser,
    invoke,
  };
}

async function decide(ctx: GateContext, a: AgentCandidateAct, live: string, liveArgs: unknown, invoke: boolean): Promise<EnforceDecision> {
  const req = consumeRequest(ctx, a, live, liveArgs, invoke);
  if (typeof req === 'string') return auditedDeny(ctx, a, req, live);
  try {
    await ctx.ready();
    req.now = ctx.clock.now();
    if (Date.parse(a.expires_at) <= req.now) return auditedDeny(ctx, a, 'EF_002', live);
    return consumed(ctx, a.candidate_act_id, await ctx.store.ledger.consume(req, { timeoutMs: ctx.timeoutMs }));
  } catch (e) {
    return denyDecision(asGateError(e).code);
  }
}

/** The decision a consume led to, with its journal event. */
function consumed(ctx: GateContext, id: string, r: ConsumeOutcome): EnforceDecision {
  if (!r.ok) {
    if (r.invalidated) ctx.emit({ type: 'journal', candidate_act_id: id, state: 'REFUSED', authority_id: r.invalidated });
    return denyDecision(r.code);
  }
  ctx.emit({ type: 'journal', candidate_act_id: id, state: 'CONSUMED', authority_id: r.authority_id });
  return { allow: true, authority_id: r.authority_id };
}

/** enforce's decision for a consume already done by the store with the issuance (dispatch's hot path), observed like any other. */
export function consumedDecision(ctx: GateContext, a: AgentCandidateAct, r: ConsumeOutcome): EnforceDecision {
  return observed(ctx, a, consumed(ctx, a.candidate_act_id, r));
}

/**
 * A deny decided before the store: append its audit entry in a transaction of its own (the
 * store's refusals are appended with the consume). A store that cannot take the entry denies
 * anyway; such a deny (a store timeout) is reported to the observer only.
 */
export async function auditedDeny(ctx: GateContext, act: unknown, code: EfCode, liveDigest?: string): Promise<EnforceDecision> {
  const a = act as AgentCandidateAct;
  const valid = typeof asRecord(a?.tool)?.tool_id === 'string' && typeof asRecord(a?.arguments_digest)?.value === 'string';
  const id = asRecord(act)?.candidate_act_id;
  let event: AuditEvent;
  if (valid) {
    event = actAudit(a, 'deny', code, ctx.instanceId);
    if (liveDigest) event.digest = liveDigest;
  } else event = { kind: 'deny', act_id: typeof id === 'string' && id.length <= 256 ? id : null, code, actor: ctx.instanceId };
  try {
    await ctx.store.audit.append([event], ctx.clock.now(), { timeoutMs: ctx.timeoutMs });
  } catch {}
  return denyDecision(code);
}

/** The origin in computer-use live arguments (`computerUseLiveArgs`), if they carry one. */
function liveOrigin(liveArgs: unknown): string | undefined {
  const origin = asRecord(liveArgs)?.origin;
  return typeof origin === 'string' ? origin : undefined;
}

/** Report the decision to the gate's observer (ids and codes only), and return it. */
function observed(ctx: GateContext, act: unknown, decision: EnforceDecision): EnforceDecision {
  const id = asRecord(act)?.candidate_act_id;
  const event: GateEvent = { type: 'enforce', candidate_act_id: typeof id === 'string' ? id : '', allow: decision.allow };
  if (decision.code) event.code = decision.code;
  if (decision.authority_id) event.authority_id = decision.authority_id;
  ctx.emit(event);
  return decision;
}
