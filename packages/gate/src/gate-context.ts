/**
 * What one Gate's verbs share: authorize, escalation, enforce and dispatch each take this
 * context instead of reaching into a class, so each verb lives in its own module
 * (Tool-Use Binding draft, enforce() contract).
 */
import type { Clock, JwsSigner } from '@vrpkit/core';
import type { AgentCandidateAct } from './act.js';
import { GateError } from './errors.js';
import type { Policy } from './policy.js';
import { EscalationBindingConflict, StoreTimeoutError } from './store/errors.js';
import type { GateStore } from './store/gate-store.js';
import type { JournalState } from './store/ledger-schema.js';

/** The status of an authorize() decision. */
export interface AuthorizeOutcome {
  status: 'issued' | 'escalated' | 'denied';
  authority_id?: string;
  code?: string;
  message?: string;
}

/** Observations for logs and audit: ids, codes and digests only, never arguments. */
export type GateEvent =
  | { type: 'authorize'; candidate_act_id: string; status: AuthorizeOutcome['status']; code?: string; arguments_digest: string }
  | { type: 'enforce'; candidate_act_id: string; allow: boolean; code?: string; authority_id?: string; arguments_digest?: string }
  | { type: 'journal'; candidate_act_id: string; state: JournalState; authority_id: string };

export interface GateContext {
  readonly store: GateStore;
  readonly policy: Policy;
  readonly signer: JwsSigner;
  /** This enforcer's own sink id. */
  readonly sinkId: string;
  /** Journal owner id of this enforcer process. */
  readonly instanceId: string;
  /** The enforcer's clock: each operation reads it once. */
  readonly clock: Clock;
  /** Bound on every policy-state fetch, decision write and consume (EF-060 past it). */
  readonly timeoutMs: number;
  /** A person approves an escalated act (resolve true) or refuses it. */
  readonly approve: ((act: AgentCandidateAct) => Promise<boolean>) | undefined;
  /** Write a dispatch's outcome after dispatch returns (GateOptions.deferOutcome). */
  readonly deferOutcome: boolean;
  /** Track an outcome being written (never rejects), so closing the gate waits for it. */
  settling(written: Promise<void>): void;
  /** Start-up (policy digest, restart recovery) once; a failed start-up is retried by the next call. */
  ready(): Promise<void>;
  emit(event: GateEvent): void;
}

/** A timeout is EF-060; a GateError keeps its code; anything else fails closed as "store unavailable". */
export function asGateError(e: unknown): GateError {
  if (e instanceof GateError) return e;
  if (e instanceof StoreTimeoutError) return new GateError('EF-060');
  if (e instanceof EscalationBindingConflict) return new GateError('EF_SCOPE_MISMATCH');
  return new GateError('EF_STORE_UNAVAILABLE');
}
