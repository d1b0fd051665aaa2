/**
 * The Gate: one enforcer (one sink id, one authority store, one policy, one signing key) in
 * front of a host's tools. A thin front over the draft's verbs, one module each:
 * `authorize.ts` (policy → evidence → authority), `escalation.ts` (a person's decision, bound to
 * the digest they reviewed), `enforce.ts` (the enforce() contract's five MUSTs) and
 * `dispatch.ts` (enforce → journal → invoke exactly once → journal).
 */
import { type Clock, type Ed25519PrivateJwk, publicJwkOf, systemClock } from '@vrpkit/core';
import type { AgentCandidateAct, ConsequenceClass, LiveArguments, PolicyState } from './act.js';
import { AUDIT_CHECKPOINT_EVERY } from './audit/chain.js';
import { authoritySigner } from './authority.js';
import { authorize, issueApproved } from './authorize.js';
import { type DispatchGrant, type DispatchOutcome, dispatch } from './dispatch.js';
import { enforce } from './enforce.js';
import { type EnforceDecision, GateError } from './errors.js';
import { decideEscalation } from './escalation.js';
import { denied } from './evidence.js';
import { type AuthorizeOutcome, asGateError, type GateContext, type GateEvent } from './gate-context.js';
import type { ClassifyInput } from './host/act-context.js';
import type { Policy } from './policy.js';
import type { GateStore } from './store/gate-store.js';

export type { AuthorizeOutcome, DispatchOutcome, GateEvent };

export interface GateOptions {
  store: GateStore;
  policy: Policy;
  /** This enforcer's own sink id: authority bound to another sink is refused. */
  sinkId: string;
  /** The Ed25519 key authority is signed with (`vrp gate keys` makes one). */
  signingKey: { privateJwk: Ed25519PrivateJwk; kid: string };
  /** The enforcer's clock (default `systemClock`). */
  clock?: Clock;
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
  /** Sign the audit chain head with `signingKey` every this many entries (and on close). Default 100. */
  auditCheckpointEvery?: number;
  /**
   * Journal a dispatch's outcome (EFFECTUATED/FAILED) after dispatch returns, so the caller's
   * response goes out before that commit (`DispatchOutcome.settled` resolves when it is written;
   * close() waits for every one). If the process dies first, the act is EFFECT_RESULT_UNKNOWN on
   * restart. Default false.
   */
  deferOutcome?: boolean;
}

export class Gate {
  readonly sinkId: string;
  readonly instanceId: string;
  private readonly ctx: GateContext;
  private starting: Promise<void> | undefined;
  private readonly unsettled = new Set<Promise<void>>();

  constructor(opts: GateOptions) {
    if (!opts.sinkId) throw new GateError('EF_FAIL_CLOSED', 'a Gate needs its own sink id');
    this.sinkId = opts.sinkId;
    this.instanceId = opts.instanceId ?? opts.sinkId;
    const onEvent = opts.onEvent;
    const signer = authoritySigner(opts.signingKey);
    opts.store.audit.useSigner({
      signer,
      publicJwk: publicJwkOf(opts.signingKey.privateJwk, opts.signingKey.kid),
      every: opts.auditCheckpointEvery ?? AUDIT_CHECKPOINT_EVERY,
    });
    this.ctx = {
      store: opts.store,
      policy: opts.policy,
      signer,
      sinkId: this.sinkId,
      instanceId: this.instanceId,
      clock: opts.clock ?? systemClock,
      timeoutMs: opts.policyTimeoutMs ?? 1000,
      approve: opts.approve,
      deferOutcome: opts.deferOutcome ?? false,
      settling: (written) => {
        this.unsettled.add(written);
        void written.finally(() => this.unsettled.delete(written));
      },
      ready: () => this.init(),
      emit: (event) => {
        try {
          onEvent?.(event);
        } catch {}
      },
    };
  }

  /** Start-up: record the policy in force (a changed policy bumps policy_epoch) and recover this owner's unfinished acts. */
  private init(): Promise<void> {
    const { store, policy, instanceId, clock } = this.ctx;
    this.starting ??= (async () => {
      const t = clock.now();
      await store.epochs.syncPolicyDigest(policy.digest, t);
      // A consumed act with no result after a restart is EFFECT_RESULT_UNKNOWN (EF-090), never re-invoked.
      await store.journal.recoverUnfinished(instanceId, t);
      // A boundary a writer without the gate key reached is signed now (one checkpoint per window, issue 36 defect 3).
      await store.audit.checkpoint(t, { ifOwed: true });
    })();
    // A failed start-up (store unreachable) denies this call and is retried by the next one.
    this.starting.catch(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** The current epochs. Throws GateError('EF-060') when the store does not answer in time. */
  async policyState(): Promise<PolicyState> {
    await this.init();
    try {
      return await this.ctx.store.epochs.current({ timeoutMs: this.ctx.timeoutMs });
    } catch (e) {
      throw asGateError(e);
    }
  }

  /** The tool's consequence class, assigned by policy before the model names it. */
  classify(tool: ClassifyInput): ConsequenceClass {
    return this.ctx.policy.classify(tool);
  }

  /**
   * Decide an act: a hot envelope issues authority, a person decides an escalated act
   * (the `approve` callback, or later `approve()` / `vrp gate approve`), the rest is denied.
   */
  authorize(act: AgentCandidateAct): Promise<AuthorizeOutcome> {
    return authorize(this.ctx, act);
  }

  /**
   * A person approves an escalated act; issues its authority. `bindingDigest` is the escalation's
   * `binding_digest` the person reviewed (`vrp gate pending` shows it): when given, the approval
   * is refused (EF_SCOPE_MISMATCH) unless the pending escalation is bound to exactly it. Without
   * it, the binding of the escalation row as read now is approved (a row never changes its binding).
   */
  approve(candidateActId: string, approver: string, bindingDigest?: string): Promise<AuthorizeOutcome> {
    return this.decideReviewed(candidateActId, 'APPROVED', approver, bindingDigest);
  }

  /** A person refuses an escalated act (optionally only the one bound to `bindingDigest`). */
  reject(candidateActId: string, approver: string, bindingDigest?: string): Promise<AuthorizeOutcome> {
    return this.decideReviewed(candidateActId, 'REJECTED', approver, bindingDigest);
  }

  /** The draft's enforce(act, live_args). Never throws; a deny carries a registry code. */
  enforce(act: AgentCandidateAct, liveArgs: unknown): Promise<EnforceDecision> {
    return enforce(this.ctx, act, liveArgs);
  }

  /**
   * authorize (if the act has no authority yet) → enforce → journal INVOKED → invoke exactly
   * once → journal the result. invoke is never called on a deny, and it receives the frozen
   * copy of `liveArgs` that was digested: run the tool with that argument, never with
   * `liveArgs` itself. If invoke throws, the failure is journaled and the error is rethrown.
   * `liveArgs` may be the `LiveArguments` snapshot the act was mapped from: its digest is used as
   * is (one digest per call). An escalated outcome carries `resume()`.
   */
  dispatch<A, T>(
    act: AgentCandidateAct,
    liveArgs: A | LiveArguments<A>,
    invoke: (args: A, grant: DispatchGrant) => Promise<T>,
  ): Promise<DispatchOutcome<T>> {
    return dispatch(this.ctx, act, liveArgs, invoke);
  }

  /** Revoke one outstanding authority (EF_REVOKED at enforce). */
  revoke(authorityId: string): Promise<boolean> {
    return this.ctx.store.ledger.revoke(authorityId, this.ctx.clock.now());
  }

  /** Bump an epoch: every authority issued before it is refused at enforce. */
  bumpEpoch(epoch: keyof PolicyState): Promise<PolicyState> {
    return this.ctx.store.epochs.bump(epoch, this.ctx.clock.now());
  }

  async close(): Promise<void> {
    await Promise.all(this.unsettled);
    await this.ctx.store.close();
  }

  private async decideReviewed(
    candidateActId: string,
    status: 'APPROVED' | 'REJECTED',
    approver: string,
    reviewedDigest: string | undefined,
  ): Promise<AuthorizeOutcome> {
    try {
      await this.init();
      const decision = await decideEscalation(this.ctx.store.escalations, {
        candidateActId,
        status,
        approver,
        now: this.ctx.clock.now(),
        ...(reviewedDigest !== undefined ? { reviewedDigest } : {}),
      });
      return await issueApproved(this.ctx, decision);
    } catch (e) {
      return denied(asGateError(e).code);
    }
  }
}
