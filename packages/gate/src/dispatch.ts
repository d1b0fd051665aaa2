/**
 * dispatch: authorize (if the act has no authority yet) → enforce → journal INVOKED → invoke
 * exactly once → journal the result (consume strictly before invoke, durably). The act is validated once and
 * the live arguments are digested once; invoke receives the frozen copy that digest covers.
 * A retry of an act whose authority was consumed gets the recorded result or a deny, never a
 * second invoke (Tool-Use Binding draft, Retries: "a new act or a fetch of the original
 * tool_result, never a second invoke").
 */
import { asRecord } from '@vrpkit/core';
import { type LiveArguments, snapshotLiveArguments, validateAct } from './act.js';
import { authorizeValidated } from './authorize.js';
import { auditedDeny, denyDecision, enforceValidated } from './enforce.js';
import type { EfCode, EnforceDecision } from './errors.js';
import { recordDenial } from './evidence.js';
import { asGateError, type GateContext } from './gate-context.js';
import { retryOutcome } from './journal.js';

/**
 * What invoke is handed with the arguments: the authority it runs under, for a cooperating sink
 * that checks it again (Tool-Use Binding draft, MCP mapping: "a server that is itself a cooperating
 * sink"). The signed authority is read from the store only when asked for.
 */
export interface DispatchGrant {
  authority_id: string;
  /** The compact JWS of the consumed authority. */
  authorityJws(): Promise<string>;
}

export interface DispatchOutcome<T> {
  decision: EnforceDecision;
  /** True only when invoke() was called by this dispatch. */
  invoked: boolean;
  /** The tool result: from this invoke, or — on a retry of a finished act — the recorded one. */
  result?: T;
  /** True when `result` is the recorded result of an earlier run of the same act (no invoke happened). */
  replayed?: boolean;
}

/**
 * The tool is invoked with `args`, a deep, frozen copy of `liveArgs` taken when they were
 * digested: never with the caller's object, which the caller may change after the consume.
 * If invoke throws, the failure is journaled and the error is rethrown.
 */
export async function dispatch<A, T>(
  ctx: GateContext,
  act: unknown,
  liveArgs: A,
  invoke: (args: A, grant: DispatchGrant) => Promise<T>,
): Promise<DispatchOutcome<T>> {
  const v = validateAct(act);
  if (!v.ok) return denied(v.code);
  const a = v.act;
  let live: LiveArguments<A>;
  try {
    live = snapshotLiveArguments(liveArgs);
    await ctx.ready();
    const prior = await ctx.store.getJournal(a.candidate_act_id);
    if (prior) {
      const r = retryOutcome(prior, live.digest.value);
      await auditedDeny(ctx, a, r.decision.code as EfCode, live.digest.value);
      return { decision: r.decision, invoked: false, ...(r.replayed ? { result: r.result as T, replayed: true } : {}) };
    }
    const authority = await ctx.store.getAuthority(a.candidate_act_id);
    // Value limits are known before anyone is asked: an act above them is denied, not escalated.
    const over = ctx.policy.checkArguments(a, live.args);
    if (over) {
      await recordDenial(ctx, a, a.policy_state, ctx.clock.now(), over.code, over.reason);
      return denied(over.code);
    }
    if (!authority) {
      const outcome = await authorizeValidated(ctx, a, ctx.clock.now(), null);
      if (outcome.status !== 'issued') return denied((outcome.code as EfCode | undefined) ?? 'EF_FAIL_CLOSED');
    }
  } catch (e) {
    return denied(asGateError(e).code);
  }
  const decision = await enforceValidated(ctx, a, live.digest.value, live.args);
  if (!decision.allow) return { decision, invoked: false };
  const id = a.candidate_act_id;
  const authorityId = decision.authority_id!;
  // The INVOKED mark is durable before invoke, and only the owner that consumed may set it:
  // if a restart already declared this act's result unknown, it is not invoked now.
  let marked = false;
  try {
    marked = await ctx.store.markInvoked(id, ctx.instanceId, ctx.clock.now());
  } catch {
    marked = false;
  }
  if (!marked) return denied('EF_EFFECT_RESULT_UNKNOWN');
  ctx.emit({ type: 'journal', candidate_act_id: id, state: 'INVOKED', authority_id: authorityId });
  let result: T;
  try {
    result = await invoke(live.args, { authority_id: authorityId, authorityJws: () => authorityJws(ctx, id) });
  } catch (e) {
    await finish(ctx, id, authorityId, { state: 'FAILED', error_code: errorCode(e) });
    throw e;
  }
  await finish(ctx, id, authorityId, { state: 'EFFECTUATED', result_json: toJson(result) });
  return { decision, invoked: true, result };
}

async function authorityJws(ctx: GateContext, id: string): Promise<string> {
  const row = await ctx.store.getAuthority(id);
  if (!row) throw new Error('the consumed authority is not in the store');
  return row.jws;
}

function denied<T>(code: EfCode): DispatchOutcome<T> {
  return { decision: denyDecision(code), invoked: false };
}

async function finish(
  ctx: GateContext,
  id: string,
  authorityId: string,
  outcome: { state: 'EFFECTUATED'; result_json: string | null } | { state: 'FAILED'; error_code: string },
): Promise<void> {
  // A failure to record the outcome leaves the row INVOKED: after a restart it becomes
  // EFFECT_RESULT_UNKNOWN, which is the truth from the store's point of view.
  try {
    if (await ctx.store.recordOutcome(id, ctx.instanceId, outcome, ctx.clock.now()))
      ctx.emit({ type: 'journal', candidate_act_id: id, state: outcome.state, authority_id: authorityId });
  } catch {}
}

function errorCode(e: unknown): string {
  const code = asRecord(e)?.code;
  return typeof code === 'string' && code.length <= 64 ? code : 'tool_error';
}

/** The result as JSON for the journal; a value JSON cannot carry is recorded as absent. */
function toJson(value: unknown): string | null {
  try {
    return value === undefined ? null : (JSON.stringify(value) ?? null);
  } catch {
    return null;
  }
}
