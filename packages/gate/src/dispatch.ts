/**
 * One gated call, each step once and in this order (Tool-Use Binding draft, enforce() contract;
 * issue 31 item 5):
 *
 *   1. map       — the caller's (a vendor's `map.ts`): the act, and the `LiveArguments` snapshot
 *                  whose digest it carries
 *   2. validate  — the act against the candidate act schema (`validateAct`)
 *   3. digest    — the live arguments, once: a snapshot is taken as it is (it carries its digest)
 *   4. authorize — a hot envelope issues (and consumes, in the same commit); an approval found,
 *                  used; an escalation returns with `resume()`; a retry of a finished act gets its
 *                  recorded result or a deny, never a second invoke (Retries)
 *   5. enforce   — MUSTs 1–5; the consume journals the act INVOKED in its own transaction
 *   6. invoke    — exactly once, with the frozen snapshot, then the outcome is journaled
 *
 * A person's approval does not re-run the pipeline: the escalated outcome's `resume()` continues
 * the same validated act with the same snapshot at step 4.
 */
import { asRecord } from '@vrpkit/core';
import { type AgentCandidateAct, type LiveArguments, snapshotLiveArguments, validateAct } from './act.js';
import { authorizeValidated } from './authorize.js';
import { auditedDeny, consumedDecision, consumeRequest, denyDecision, enforceValidated } from './enforce.js';
import { type EfCode, type EnforceDecision, GateError } from './errors.js';
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
  /**
   * Escalated (EF_APPROVAL_REQUIRED): continue this very act once a person decided — authorize
   * (the approval's authority, or the refusal), enforce, invoke — with the act and arguments
   * already validated and digested. Called while still pending, it answers the same escalation.
   */
  resume?: () => Promise<DispatchOutcome<T>>;
}

type Invoke<A, T> = (args: A, grant: DispatchGrant) => Promise<T>;

/**
 * The tool is invoked with `args`, a deep, frozen copy of `liveArgs` taken when they were
 * digested: never with the caller's object, which the caller may change after the consume.
 * If invoke throws, the failure is journaled and the error is rethrown.
 */
export async function dispatch<A, T>(
  ctx: GateContext,
  act: unknown,
  liveArgs: A | LiveArguments<A>,
  invoke: Invoke<A, T>,
): Promise<DispatchOutcome<T>> {
  // 2. validate
  const v = validateAct(act);
  if (!v.ok) return denied(v.code);
  // 3. digest
  let live: LiveArguments<A>;
  try {
    live = snapshotLiveArguments(liveArgs);
  } catch (e) {
    return denied(asGateError(e).code);
  }
  return authorizeEnforceInvoke(ctx, v.act, live, invoke, false);
}

/** Steps 4–6 for a validated act and its digested arguments; `resumed`: after an escalation. */
async function authorizeEnforceInvoke<A, T>(
  ctx: GateContext,
  a: AgentCandidateAct,
  live: LiveArguments<A>,
  invoke: Invoke<A, T>,
  resumed: boolean,
): Promise<DispatchOutcome<T>> {
  // 4. authorize / escalate
  let granted: Granted<T>;
  try {
    granted = await authorizeStep<T>(ctx, a, live, resumed);
  } catch (e) {
    return denied(asGateError(e).code);
  }
  if ('outcome' in granted) {
    const { outcome } = granted;
    if (outcome.decision.code !== 'EF_APPROVAL_REQUIRED') return outcome;
    return { ...outcome, resume: () => authorizeEnforceInvoke(ctx, a, live, invoke, true) };
  }
  // 5. enforce — already done when the hot envelope's issuance consumed in the same commit.
  const decision = granted.hot ? consumedDecision(ctx, a, granted.hot) : await enforceValidated(ctx, a, live.digest.value, live.args, true);
  if (!decision.allow) return { decision, invoked: false };
  // 6. invoke
  return invokeStep(ctx, a, live.args, decision.authority_id!, decision, invoke);
}

/** Step 4's result: go on to enforce (with the consume already done on the hot path), or stop with this outcome. */
type Granted<T> = { hot?: ConsumeOutcome } | { outcome: DispatchOutcome<T> };

/**
 * Step 4. The common act — new, unexpired, in a hot envelope — reads nothing before its one
 * transaction, which issues and consumes together: an act that has authority already (a retry, an
 * approval, a concurrent issuer) fails that transaction's one-authority-per-act insert, nothing is
 * written, and it takes the general path (an expired retry too, so it still gets its recorded
 * result). A resumed act takes the general path directly. Throws on store errors.
 */
async function authorizeStep<T>(
  ctx: GateContext,
  a: AgentCandidateAct,
  live: LiveArguments<unknown>,
  resumed: boolean,
): Promise<Granted<T>> {
  await ctx.ready();
  const now = ctx.clock.now();
  // enforce's checks before the store pass (MUST 2, the sink, the value limits), so an issued
  // authority can be consumed in the issuance's transaction (the store checks the authority row
  // as in any consume). An act failing them takes the general path, which records the same decisions.
  const pre = consumeRequest(ctx, a, live.digest.value, live.args, true);
  const req = typeof pre === 'string' ? undefined : { ...pre, now };
  // The policy's decision is handed on: issuance does not evaluate the act a second time.
  const decided = !resumed && req !== undefined && Date.parse(a.expires_at) > now ? ctx.policy.evaluate(a) : undefined;
  const first = decided?.decision === 'issue' ? await authorizeValidated(ctx, a, now, null, req, decided) : undefined;
  if (first && !first.exists) return first.status === 'issued' ? { hot: first.consumed } : { outcome: refused(first.code) };
  const prior = await ctx.store.journal.get(a.candidate_act_id);
  if (prior) {
    const r = retryOutcome(prior, live.digest.value);
    await auditedDeny(ctx, a, r.decision.code as EfCode, live.digest.value);
    return { outcome: { decision: r.decision, invoked: false, ...(r.replayed ? { result: r.result as T, replayed: true } : {}) } };
  }
  const authority = await ctx.store.ledger.getAuthority(a.candidate_act_id);
  // Value limits are known before anyone is asked: an act above them is denied, not escalated.
  const over = ctx.policy.checkArguments(a, live.args);
  if (over) {
    await recordDenial(ctx, a, a.policy_state, now, over.code, over.reason);
    return { outcome: denied(over.code) };
  }
  if (authority) return {};
  const outcome = await authorizeValidated(ctx, a, now, null, req, decided);
  return outcome.status === 'issued' ? { hot: outcome.consumed } : { outcome: refused(outcome.code) };
}

/**
 * Step 6. The consume journaled the act INVOKED in its own transaction, so the mark is durable
 * before invoke and no restart can declare the act's result unknown between the consume and the invoke.
 */
async function invokeStep<A, T>(
  ctx: GateContext,
  a: AgentCandidateAct,
  args: A,
  authorityId: string,
  decision: EnforceDecision,
  invoke: Invoke<A, T>,
): Promise<DispatchOutcome<T>> {
  const id = a.candidate_act_id;
  ctx.emit({ type: 'journal', candidate_act_id: id, state: 'INVOKED', authority_id: authorityId });
  let result: T;
  try {
    result = await invoke(args, { authority_id: authorityId, authorityJws: () => authorityJws(ctx, id) });
  } catch (e) {
    const failed = settle(ctx, () => finish(ctx, id, authorityId, { state: 'FAILED', error_code: errorCode(e) }));
    if (!ctx.deferOutcome) await failed;
    throw e;
  }
  const settled = settle(ctx, () => finish(ctx, id, authorityId, { state: 'EFFECTUATED', result_json: toJson(result) }));
  if (!ctx.deferOutcome) await settled;
  return { decision, invoked: true, result, settled };
}

/** An authorize() that did not issue: its code (escalated: EF_APPROVAL_REQUIRED), or fail closed. */
function refused<T>(code: string | undefined): DispatchOutcome<T> {
  return denied((code as EfCode | undefined) ?? 'EF_FAIL_CLOSED');
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
  // The row was consumed by this very dispatch: a store that lost it is not a store to trust.
  if (!row) throw new GateError('EF_STORE_UNAVAILABLE', 'the consumed authority is not in the store');
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
