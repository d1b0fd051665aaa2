/**
 * The Gate: authorize (policy → evidence → authority), enforce (the seed's five MUSTs in
 * one atomic store step) and dispatch (enforce → journal → invoke exactly once → journal).
 *
 * Seed §"enforce() contract":
 *   1. hash live_args with the same canonicalization as act.arguments_digest
 *   2. refuse if hashes differ
 *   3. refuse if authority missing, expired, consumed, or sink-mismatched
 *   4. consume single-use authority before returning allow=true
 *   5. never return allow=true on timeout or uncertain epoch
 */
import { randomBytes } from 'node:crypto';
import { canonicalSha256Base64url, type Ed25519PrivateJwk, type JwsSigner } from '@vrpkit/core';
import { type AgentCandidateAct, type ConsequenceClass, digestArguments, type PolicyState, validateAct } from './act.js';
import { type AgentFinalityAuthority, authoritySigner, signAuthority } from './authority.js';
import { EF_CODES, type EfCode, type EnforceDecision, GATE_PROFILE, GateError } from './errors.js';
import { denyDecision, retryOutcome } from './journal.js';
import type { ClassifyInput } from './mappers/context.js';
import type { Policy } from './policy.js';
import { EscalationBindingConflict, StoreTimeoutError } from './store/errors.js';
import type { EvidenceDecision, JournalState } from './store/schema.js';
import type { AuthorityRow, AuthorityStore, EvidenceRow } from './store/types.js';

export interface AuthorizeOutcome {
  status: 'issued' | 'escalated' | 'denied';
  authority_id?: string;
  code?: string;
  message?: string;
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

/** Observations for logs and audit: ids, codes and digests only, never arguments. */
export type GateEvent =
  | { type: 'authorize'; candidate_act_id: string; status: AuthorizeOutcome['status']; code?: string; arguments_digest: string }
  | { type: 'enforce'; candidate_act_id: string; allow: boolean; code?: string; authority_id?: string; arguments_digest?: string }
  | { type: 'journal'; candidate_act_id: string; state: JournalState; authority_id: string };

export interface GateOptions {
  store: AuthorityStore;
  policy: Policy;
  /** This enforcer's own sink id: authority bound to another sink is refused. */
  sinkId: string;
  /** The Ed25519 key authority is signed with (`vrp gate keys` makes one). */
  signingKey: { privateJwk: Ed25519PrivateJwk; kid: string };
  now?: () => number;
  /** A person approves an escalated act (resolve true) or refuses it (false). */
  approve?: (act: AgentCandidateAct) => Promise<boolean>;
  /** Bound on every policy-state fetch and consume; past it enforce denies with EF-060 (retryable). Default 1000 ms. */
  policyTimeoutMs?: number;
  /**
   * Journal owner id of this enforcer process. On start, unfinished journal rows of this
   * owner (from a crashed previous run) become EFFECT_RESULT_UNKNOWN. Give each
   * concurrently running process its own id. Default: the sink id.
   */
  instanceId?: string;
  onEvent?: (event: GateEvent) => void;
}

export class Gate {
  readonly sinkId: string;
  readonly instanceId: string;
  private readonly store: AuthorityStore;
  private readonly policy: Policy;
  private readonly signer: JwsSigner;
  private readonly now: () => number;
  private readonly approveCallback: ((act: AgentCandidateAct) => Promise<boolean>) | undefined;
  private readonly timeoutMs: number;
  private readonly onEvent: ((event: GateEvent) => void) | undefined;
  private ready: Promise<void> | undefined;

  constructor(opts: GateOptions) {
    if (!opts.sinkId) throw new GateError('EF_FAIL_CLOSED', 'a Gate needs its own sink id');
    this.store = opts.store;
    this.policy = opts.policy;
    this.sinkId = opts.sinkId;
    this.instanceId = opts.instanceId ?? opts.sinkId;
    this.signer = authoritySigner(opts.signingKey);
    this.now = opts.now ?? Date.now;
    this.approveCallback = opts.approve;
    this.timeoutMs = opts.policyTimeoutMs ?? 1000;
    this.onEvent = opts.onEvent;
  }

  /** Start-up: record the policy in force (a changed policy bumps policy_epoch) and recover this owner's unfinished acts. */
  private init(): Promise<void> {
    this.ready ??= (async () => {
      const now = this.now();
      await this.store.syncPolicyDigest(this.policy.digest, now);
      // §4.1: a consumed act with no result after a restart is EFFECT_RESULT_UNKNOWN, never re-invoked.
      await this.store.recoverUnfinished(this.instanceId, now);
    })();
    // A failed start-up (store unreachable) denies this call and is retried by the next one.
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  /** The current epochs. Throws GateError('EF-060') when the store does not answer in time. */
  async policyState(): Promise<PolicyState> {
    await this.init();
    try {
      return await this.store.policyState({ timeoutMs: this.timeoutMs });
    } catch (e) {
      throw asGateError(e);
    }
  }

  /** The tool's consequence class, assigned by policy before the model names it. */
  classify(tool: ClassifyInput): ConsequenceClass {
    return this.policy.classify(tool);
  }

  /**
   * Decide an act: a hot envelope issues authority, a person decides an escalated act
   * (the `approve` callback, or later `approve()` / `vrp gate approve`), the rest is denied.
   * The validation evidence is committed before (with) the authority and never after.
   */
  async authorize(act: AgentCandidateAct): Promise<AuthorizeOutcome> {
    const v = validateAct(act);
    if (!v.ok) return denied(v.code);
    const a = v.act;
    try {
      await this.init();
      const now = this.now();
      if (a.finality_sink.sink_id !== this.sinkId) return denied('EF_040');
      if (Date.parse(a.expires_at) <= now) return denied('EF_002');
      const existing = await this.store.getAuthority(a.candidate_act_id);
      if (existing) return this.existingOutcome(existing, a, now);
      // Authority and escalations are written only if the act's epochs are the current ones,
      // read in the same transaction (and within the timeout: MUST 5 applies to issuance too).
      const d = this.policy.evaluate(a);
      if (d.decision === 'issue') return await this.issue(a, now, d.ttlMs, d.reason, null);
      if (d.decision === 'deny') return await this.record(a, a.policy_state, now, d.code, d.reason);
      return await this.escalate(a, now, d.reason);
    } catch (e) {
      return denied(asGateError(e).code);
    }
  }

  /**
   * A person approves an escalated act; issues its authority. `bindingDigest` is the escalation's
   * `binding_digest` the person reviewed (`vrp gate pending` shows it): when given, the approval
   * is refused (EF_SCOPE_MISMATCH) unless the pending escalation is bound to exactly it. Without
   * it, the binding of the escalation row as read now is approved (a row never changes its binding).
   */
  async approve(candidateActId: string, approver: string, bindingDigest?: string): Promise<AuthorizeOutcome> {
    return this.decideReviewed(candidateActId, 'APPROVED', approver, bindingDigest);
  }

  /** A person refuses an escalated act (optionally only the one bound to `bindingDigest`). */
  async reject(candidateActId: string, approver: string, bindingDigest?: string): Promise<AuthorizeOutcome> {
    return this.decideReviewed(candidateActId, 'REJECTED', approver, bindingDigest);
  }

  /** The seed's enforce(act, live_args). Never throws; a deny carries a registry code. */
  async enforce(act: AgentCandidateAct, liveArgs: unknown): Promise<EnforceDecision> {
    const decision = await this.enforceInner(act, liveArgs);
    this.emit({
      type: 'enforce',
      candidate_act_id: typeof act?.candidate_act_id === 'string' ? act.candidate_act_id : '',
      allow: decision.allow,
      ...(decision.code ? { code: decision.code } : {}),
      ...(decision.authority_id ? { authority_id: decision.authority_id } : {}),
    });
    return decision;
  }

  /**
   * authorize (if the act has no authority yet) → enforce → journal INVOKED → invoke exactly
   * once → journal the result. invoke is never called on a deny; a retry of an act whose
   * authority was consumed gets the recorded result or a deny, never a second invoke.
   * If invoke throws, the failure is journaled and the error is rethrown.
   */
  async dispatch<T>(act: AgentCandidateAct, liveArgs: unknown, invoke: () => Promise<T>): Promise<DispatchOutcome<T>> {
    const v = validateAct(act);
    if (!v.ok) return { decision: denyDecision(v.code), invoked: false };
    let live: string;
    try {
      live = digestArguments(liveArgs).value;
      await this.init();
      const prior = await this.store.getJournal(act.candidate_act_id);
      if (prior) {
        const r = retryOutcome(prior, live);
        return { decision: r.decision, invoked: false, ...(r.replayed ? { result: r.result as T, replayed: true } : {}) };
      }
      if (!(await this.store.getAuthority(act.candidate_act_id))) {
        const outcome = await this.authorize(act);
        if (outcome.status !== 'issued') return { decision: denyDecision(outcomeCode(outcome)), invoked: false };
      }
    } catch (e) {
      return { decision: denyFromError(e), invoked: false };
    }
    const decision = await this.enforce(act, liveArgs);
    if (!decision.allow) return { decision, invoked: false };
    const id = act.candidate_act_id;
    // The INVOKED mark is durable before invoke, and only the owner that consumed may set it:
    // if a restart already declared this act's result unknown, it is not invoked now.
    let marked = false;
    try {
      marked = await this.store.markInvoked(id, this.instanceId, this.now());
    } catch {
      marked = false;
    }
    if (!marked) return { decision: denyDecision('EF_EFFECT_RESULT_UNKNOWN'), invoked: false };
    this.emit({ type: 'journal', candidate_act_id: id, state: 'INVOKED', authority_id: decision.authority_id! });
    let result: T;
    try {
      result = await invoke();
    } catch (e) {
      await this.finish(id, decision.authority_id!, { state: 'FAILED', error_code: errorCode(e) });
      throw e;
    }
    await this.finish(id, decision.authority_id!, { state: 'EFFECTUATED', result_json: toJson(result) });
    return { decision, invoked: true, result };
  }

  /** Revoke one outstanding authority (EF_REVOKED at enforce). */
  async revoke(authorityId: string): Promise<boolean> {
    return this.store.revokeAuthority(authorityId, this.now());
  }

  /** Bump an epoch: every authority issued before it is refused at enforce. */
  async bumpEpoch(epoch: keyof PolicyState): Promise<PolicyState> {
    return this.store.bumpEpoch(epoch, this.now());
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  // ---- internals ----

  private async enforceInner(act: AgentCandidateAct, liveArgs: unknown): Promise<EnforceDecision> {
    const v = validateAct(act);
    if (!v.ok) return denyDecision(v.code);
    const a = v.act;
    // MUST 1: the live digest, by the same JCS + SHA-256 as the act's.
    let live: string;
    try {
      live = digestArguments(liveArgs).value;
    } catch (e) {
      return denyDecision(asGateError(e).code);
    }
    // MUST 2: "an approved search cannot become a send".
    if (live !== a.arguments_digest.value) return denyDecision('EF_SCOPE_MISMATCH');
    // The sink is this enforcer; an act addressed to another sink is not ours to run.
    if (a.finality_sink.sink_id !== this.sinkId) return denyDecision('EF_040');
    try {
      await this.init();
      const now = this.now();
      if (Date.parse(a.expires_at) <= now) return denyDecision('EF_002');
      // MUSTs 3–5 in one transaction of the store (see store/kysely-store.ts consume()).
      const r = await this.store.consume(
        {
          candidate_act_id: a.candidate_act_id,
          arguments_digest: live,
          tool_id: a.tool.tool_id,
          function_id: a.tool.function_id,
          tool_endpoint: a.tool.tool_endpoint ?? null,
          destination_id: a.destination?.destination_id ?? null,
          consequence_class: a.consequence_class,
          act_policy_state: a.policy_state,
          sink_id: this.sinkId,
          owner: this.instanceId,
          now,
        },
        { timeoutMs: this.timeoutMs },
      );
      if (!r.ok) return denyDecision(r.code);
      this.emit({ type: 'journal', candidate_act_id: a.candidate_act_id, state: 'CONSUMED', authority_id: r.authority_id });
      return { allow: true, authority_id: r.authority_id };
    } catch (e) {
      return denyFromError(e);
    }
  }

  private existingOutcome(row: AuthorityRow, act: AgentCandidateAct, now: number): AuthorizeOutcome {
    if (row.state === 'CONSUMED') return denied('EF_005');
    if (row.state === 'REVOKED') return denied('EF_REVOKED');
    if (row.expires_at <= now) return denied('EF_002');
    if (bindingDigest(bindingOf(act, this.sinkId)) !== bindingDigest(row)) return denied('EF_SCOPE_MISMATCH');
    return { status: 'issued', authority_id: row.authority_id };
  }

  private async escalate(act: AgentCandidateAct, now: number, reason: string): Promise<AuthorizeOutcome> {
    const binding = bindingDigest(bindingOf(act, this.sinkId));
    const prior = await this.store.getEscalation(act.candidate_act_id);
    // An escalation is immutable in what it binds: the same act id with other arguments (or
    // tool, destination, …) is refused, and the recorded escalation stays as it was.
    if (prior && prior.binding_digest !== binding) return this.bindingConflict(act, now);
    if (prior) {
      if (prior.status === 'APPROVED' && prior.expires_at > now)
        return this.issue(act, now, this.policy.approvalTtlMs, `approved by ${prior.approver}`, prior.approver);
      if (prior.status === 'REJECTED') return denied('EF_NOT_AUTHORIZED');
    }
    const evidence = this.evidence(act, act.policy_state, now, 'ESCALATED', 'EF_APPROVAL_REQUIRED', reason, null);
    const written = await this.store.recordDecision(
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
      },
      { timeoutMs: this.timeoutMs },
    );
    if (!written.recorded) return 'conflict' in written ? this.bindingConflict(act, now) : this.stale(act, written.current, now);
    this.emit({
      type: 'authorize',
      candidate_act_id: act.candidate_act_id,
      status: 'escalated',
      code: 'EF_APPROVAL_REQUIRED',
      arguments_digest: act.arguments_digest.value,
    });
    if (!this.approveCallback) return { status: 'escalated', code: 'EF_APPROVAL_REQUIRED', message: EF_CODES.EF_APPROVAL_REQUIRED.message };
    let approved = false;
    try {
      approved = (await this.approveCallback(act)) === true;
    } catch {
      approved = false; // an approver that fails has not approved
    }
    // The callback reviewed exactly `act`: the decision binds to its binding digest.
    return this.decide(act.candidate_act_id, binding, approved ? 'APPROVED' : 'REJECTED', 'approve-callback');
  }

  /** approve()/reject(): bind to the digest the person reviewed, or to the row's (immutable) binding as read now. */
  private async decideReviewed(
    candidateActId: string,
    status: 'APPROVED' | 'REJECTED',
    approver: string,
    bindingDigest: string | undefined,
  ): Promise<AuthorizeOutcome> {
    if (bindingDigest !== undefined) return this.decide(candidateActId, bindingDigest, status, approver);
    try {
      await this.init();
      const row = await this.store.getEscalation(candidateActId);
      if (!row) return denied('EF_002');
      return this.decide(candidateActId, row.binding_digest, status, approver);
    } catch (e) {
      return denied(asGateError(e).code);
    }
  }

  private async decide(
    candidateActId: string,
    bindingDigest: string,
    status: 'APPROVED' | 'REJECTED',
    approver: string,
  ): Promise<AuthorizeOutcome> {
    try {
      await this.init();
      const row = await this.store.decideEscalation(candidateActId, bindingDigest, status, approver, this.now());
      const current = row ?? (await this.store.getEscalation(candidateActId));
      if (!current) return denied('EF_002');
      // The person reviewed another binding than the one recorded: nothing was decided.
      if (current.binding_digest !== bindingDigest) return denied('EF_SCOPE_MISMATCH');
      if (current.status === 'REJECTED') return denied('EF_NOT_AUTHORIZED');
      if (current.status !== 'APPROVED') return denied('EF_002'); // expired while pending
      const act = JSON.parse(current.act_json) as AgentCandidateAct;
      // Defense in depth: the act issued for is bound to exactly the reviewed digest.
      if (bindingDigest !== actBindingDigest(act, this.sinkId)) return denied('EF_SCOPE_MISMATCH');
      // Issuance re-runs authorize, so policy, epochs and expiry are checked again at approval time.
      return this.authorize(act);
    } catch (e) {
      return denied(asGateError(e).code);
    }
  }

  /** The act id is escalated under another binding: record the refusal, leave the escalation as it was. */
  private bindingConflict(act: AgentCandidateAct, now: number): Promise<AuthorizeOutcome> {
    return this.record(act, act.policy_state, now, 'EF_SCOPE_MISMATCH', 'act id already escalated with another binding');
  }

  private async issue(
    act: AgentCandidateAct,
    now: number,
    ttlMs: number,
    reason: string,
    approver: string | null,
  ): Promise<AuthorizeOutcome> {
    const epochs = act.policy_state;
    const evidence = this.evidence(act, epochs, now, 'ISSUED', null, reason, approver);
    const expiresAt = Math.min(now + ttlMs, Date.parse(act.expires_at));
    const authority: AgentFinalityAuthority = {
      version: '1.0',
      object_type: 'agent_finality_authority',
      profile: GATE_PROFILE,
      authority_id: `afa-${randomBytes(12).toString('base64url')}`,
      candidate_act_id: act.candidate_act_id,
      evidence_id: evidence.evidence_id,
      arguments_digest: act.arguments_digest,
      tool: {
        tool_id: act.tool.tool_id,
        function_id: act.tool.function_id,
        ...(act.tool.tool_endpoint ? { tool_endpoint: act.tool.tool_endpoint } : {}),
      },
      ...(act.destination ? { destination_id: act.destination.destination_id } : {}),
      sink_id: this.sinkId,
      consequence_class: act.consequence_class,
      issued_at: new Date(now).toISOString(),
      expires_at: new Date(expiresAt).toISOString(),
      policy_state: epochs,
      reuse_policy: 'SINGLE_USE',
      ...(approver ? { approver } : {}),
    };
    const row: AuthorityRow = {
      authority_id: authority.authority_id,
      ...bindingOf(act, this.sinkId),
      evidence_id: evidence.evidence_id,
      issued_at: now,
      expires_at: expiresAt,
      ...epochs,
      jws: signAuthority(authority, this.signer),
      state: 'ISSUED',
      consumed_at: null,
      consumed_by: null,
      revoked_at: null,
    };
    try {
      const written = await this.store.recordDecision({ expectEpochs: epochs, evidence, authority: row }, { timeoutMs: this.timeoutMs });
      if (!written.recorded) return 'conflict' in written ? this.bindingConflict(act, now) : this.stale(act, written.current, now);
    } catch (e) {
      // Another process issued for the same act first (one authority per act id): report that one.
      const raced = await this.store.getAuthority(act.candidate_act_id);
      if (raced) return this.existingOutcome(raced, act, now);
      throw e;
    }
    this.emit({
      type: 'authorize',
      candidate_act_id: act.candidate_act_id,
      status: 'issued',
      arguments_digest: act.arguments_digest.value,
    });
    return { status: 'issued' as const, authority_id: row.authority_id };
  }

  /** The act was built under epochs that moved on: record that, and refuse. */
  private stale(act: AgentCandidateAct, current: PolicyState, now: number): Promise<AuthorizeOutcome> {
    return this.record(act, current, now, 'EF_EPOCH_STALE', 'act built under other epochs');
  }

  private async record(act: AgentCandidateAct, epochs: PolicyState, now: number, code: EfCode, reason: string): Promise<AuthorizeOutcome> {
    await this.store.recordDecision(
      { evidence: this.evidence(act, epochs, now, 'DENIED', code, reason, null) },
      { timeoutMs: this.timeoutMs },
    );
    this.emit({
      type: 'authorize',
      candidate_act_id: act.candidate_act_id,
      status: 'denied',
      code,
      arguments_digest: act.arguments_digest.value,
    });
    return denied(code);
  }

  private evidence(
    act: AgentCandidateAct,
    epochs: PolicyState,
    now: number,
    decision: EvidenceDecision,
    code: EfCode | null,
    reason: string,
    approver: string | null,
  ): EvidenceRow {
    return {
      evidence_id: `ev-${randomBytes(12).toString('base64url')}`,
      candidate_act_id: act.candidate_act_id,
      act_digest: canonicalSha256Base64url(act),
      arguments_digest: act.arguments_digest.value,
      decision,
      code,
      reason,
      policy_id: this.policy.policyId,
      ...epochs,
      approver,
      recorded_at: now,
    };
  }

  private async finish(
    id: string,
    authorityId: string,
    outcome: { state: 'EFFECTUATED'; result_json: string | null } | { state: 'FAILED'; error_code: string },
  ) {
    // A failure to record the outcome leaves the row INVOKED: after a restart it becomes
    // EFFECT_RESULT_UNKNOWN, which is the truth from the store's point of view.
    try {
      if (await this.store.recordOutcome(id, this.instanceId, outcome, this.now()))
        this.emit({ type: 'journal', candidate_act_id: id, state: outcome.state, authority_id: authorityId });
    } catch {}
  }

  private emit(event: GateEvent): void {
    try {
      this.onEvent?.(event);
    } catch {}
  }
}

function denied(code: EfCode): AuthorizeOutcome {
  return { status: 'denied', code, message: EF_CODES[code].message };
}

function outcomeCode(o: AuthorizeOutcome): EfCode {
  return (o.code as EfCode | undefined) ?? 'EF_FAIL_CLOSED';
}

/** A timeout is EF-060; a GateError keeps its code; anything else fails closed as "store unavailable". */
function asGateError(e: unknown): GateError {
  if (e instanceof GateError) return e;
  if (e instanceof StoreTimeoutError) return new GateError('EF-060');
  if (e instanceof EscalationBindingConflict) return new GateError('EF_SCOPE_MISMATCH');
  return new GateError('EF_STORE_UNAVAILABLE');
}

/** The binding digest of an act as this gate binds it (what an escalation and an approval are bound to). */
function actBindingDigest(act: AgentCandidateAct, sinkId: string): string {
  return bindingDigest(bindingOf(act, sinkId));
}

function denyFromError(e: unknown): EnforceDecision {
  return denyDecision(asGateError(e).code);
}

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
type Binding = Pick<AuthorityRow, (typeof BINDING_FIELDS)[number]>;

function bindingOf(act: AgentCandidateAct, sinkId: string): Binding {
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
function bindingDigest(binding: Binding): string {
  return canonicalSha256Base64url(Object.fromEntries(BINDING_FIELDS.map((k) => [k, binding[k]])));
}

function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
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
