/**
 * dispatch: authorize (if the act has no authority yet) → enforce, whose consume journals the act
 * INVOKED → invoke exactly once → journal the result (consume strictly before invoke, durably:
 * Tool-Use Binding draft, "verified and durably consumed at the sink"). An act the policy issues
 * authority for from a hot envelope takes ONE durable commit before invoke: evidence, authority,
 * consume, journal row and audit entries together (store `issueAndConsume`). The act is validated once and
 * the live arguments are digested once; invoke receives the frozen copy that digest covers.
 * A retry of an act whose authority was consumed gets the recorded result or a deny, never a
 * second invoke (Tool-Use Binding draft, Retries: "a new act or a fetch of the original
 * tool_result, never a second invoke").
 */
import { asRecord } from '@vrpkit/core';
import { type LiveArguments, snapshotLiveArguments, validateAct } from './act.js';
import { authorizeValidated } from './authorize.js';
import { auditedDeny, consumedDecision, consumeRequest, denyDecision, enforceValidated } from './enforce.js';
import type { EfCode, EnforceDecision } from './errors.js';
import { recordDenial } from './evidence.js';
import { asGateError, type GateContext } from './gate-context.js';
import { retryOutcome } from './journal.js';
import type { ConsumeOutcome } from './store/ports.js';

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
  /**
   * When invoked: resolves once the outcome (EFFECTUATED/FAILED) is journaled — already resolved
   * on return unless the gate defers outcomes (`GateOptions.deferOutcome`).
   */
  settled?: Promise<void>;
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
  /** The consume done with the issuance (the hot path), if it was. */
  let hot: ConsumeOutcome | undefined;
  try {
    live = snapshotLiveArguments(liveArgs);
    await ctx.ready();
    const now = ctx.clock.now();
    // enforce's checks before the store pass (MUST 2, the sink, the value limits), so an issued
    // authority can be consumed in the issuance's transaction (the store checks the authority row
    // as in any consume). An act failing them takes the general path, which records the same decisions.
    const pre = consumeRequest(ctx, a, live.digest.value, live.args, true);
    const req = typeof pre === 'string' ? undefined : { ...pre, now };
    // The common act — new, unexpired, in a hot envelope — reads nothing before its one
    // transaction: an act that has authority already (a retry, an approval, a concurrent issuer)
    // fails that transaction's one-authority-per-act insert, nothing is written, and it takes the
    // general path (an expired retry too, so it still gets its recorded result).
    const decided = req !== undefined && Date.parse(a.expires_at) > now ? ctx.policy.evaluate(a) : undefined;
    // The policy's decision is handed on: issuance does not evaluate the act a second time.
    const first = decided?.decision === 'issue' ? await authorizeValidated(ctx, a, now, null, req, decided) : undefined;
    if (first && !first.exists) {
      if (first.status !== 'issued') return denied((first.code as EfCode | undefined) ?? 'EF_FAIL_CLOSED');
      hot = first.consumed;
    } else {
      const prior = await ctx.store.journal.get(a.candidate_act_id);
      if (prior) {
        const r = retryOutcome(prior, live.digest.value);
        await auditedDeny(ctx, a, r.decision.code as EfCode, live.digest.value);
        return { decision: r.decision, invoked: false, ...(r.replayed ? { result: r.result as T, replayed: true } : {}) };
      }
      const authority = await ctx.store.ledger.getAuthority(a.candidate_act_id);
      // Value limits are known before anyone is asked: an act above them is denied, not escalated.
      const over = ctx.policy.checkArguments(a, live.args);
      if (over) {
        await recordDenial(ctx, a, a.policy_state, now, over.code, over.reason);
        return denied(over.code);
      }
      if (!authority) {
        const outcome = await authorizeValidated(ctx, a, now, null, req, decided);
        if (outcome.status !== 'issued') return denied((outcome.code as EfCode | undefined) ?? 'EF_FAIL_CLOSED');
        hot = outcome.consumed;
      }
    }
  } catch (e) {
    return denied(asGateError(e).code);
  }
  // The consume journals the act INVOKED in its own transaction, so the mark is durable before
  // invoke and no restart can declare the act's result unknown between the consume and the invoke.
  const decision = hot ? consumedDecision(ctx, a, hot) : await enforceValidated(ctx, a, live.digest.value, live.args, true);
  if (!decision.allow) return { decision, invoked: false };
  const id = a.candidate_act_id;
  const authorityId = decision.authority_id!;
  ctx.emit({ type: 'journal', candidate_act_id: id, state: 'INVOKED', authority_id: authorityId });
  let result: T;
  try {
    result = await invoke(live.args, { authority_id: authorityId, authorityJws: () => authorityJws(ctx, id) });
  } catch (e) {
    const failed = settle(ctx, () => finish(ctx, id, authorityId, { state: 'FAILED', error_code: errorCode(e) }));
    if (!ctx.deferOutcome) await failed;
    throw e;
  }
  const settled = settle(ctx, () => finish(ctx, id, authorityId, { state: 'EFFECTUATED', result_json: toJson(result) }));
  if (!ctx.deferOutcome) await settled;
  return { decision, invoked: true, result, settled };
}

/**
 * The outcome's commit, after invoke. A gate that defers it starts it on the next turn of the
 * event loop, after the caller's continuation has sent its response (a process that dies before it
 * is written leaves the act EFFECT_RESULT_UNKNOWN on restart, the journal's truth for an invoked
 * act without a result).
 */
function settle(ctx: GateContext, write: () => Promise<void>): Promise<void> {
  const written = ctx.deferOutcome ? new Promise<void>((resolve) => setImmediate(resolve)).then(write) : write();
  ctx.settling(written);
  return written;
}

async function authorityJws(ctx: GateContext, id: string): Promise<string> {
  const row = await ctx.store.ledger.getAuthority(id);
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
    if (await ctx.store.journal.recordOutcome(id, ctx.instanceId, outcome, ctx.clock.now()))
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
