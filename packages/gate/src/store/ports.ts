/**
 * The ledger's ports: the epochs, the decisions and their single-use authority, the escalations a
 * person decides and the dispatch journal. Each is small and says what its callers need; one
 * store object (`GateStore`, store/gate-store.ts) carries them beside the feature ports (audit
 * log, proxy tables, pending arguments), and every implementation passes the contract suite of
 * each port (test/store.test.ts).
 */
import type { PolicyState } from '../act.js';
import type { AuditEvent } from '../audit/chain.js';
import type { EfCode } from '../errors.js';
import type { StoreCallOptions } from './dialect.js';
import type { AuthorityTable, EscalationStatus, EscalationTable, EvidenceTable, JournalState, JournalTable } from './ledger-schema.js';

export type { StoreCallOptions };

export type AuthorityRow = AuthorityTable;
export type EvidenceRow = EvidenceTable;
export type EscalationRow = EscalationTable;
export type JournalRow = JournalTable;

/** The live act's load-bearing fields, compared with the authority row inside the consume step. */
export interface ConsumeRequest {
  candidate_act_id: string;
  /** The digest recomputed from the live arguments (never the act's claimed one). */
  arguments_digest: string;
  tool_id: string;
  function_id: string;
  tool_endpoint: string | null;
  destination_id: string | null;
  consequence_class: string;
  /** The epochs the act was built under; they must equal the authority's and the current ones. */
  act_policy_state: PolicyState;
  /** The enforcer's own sink id (Tool-Use Binding draft, enforce() contract MUST 3: the sink trusts only its local identity). */
  sink_id: string;
  /** The enforcer instance consuming (journal owner). */
  owner: string;
  now: number;
  /**
   * A destination mismatch invalidates the authority (consumed as refused, journaled REFUSED)
   * instead of leaving it usable: set for computer-use acts, where the destination is the live
   * origin (Tool-Use Binding draft, computer use: "Origin change MUST invalidate prior authority").
   */
  invalidate_on_origin_change?: boolean;
  /**
   * Journal the act INVOKED (not CONSUMED) in the consume's own transaction, with its `invoked`
   * audit entry: set by dispatch, whose invoke follows this commit. A crash after the commit
   * leaves the act EFFECT_RESULT_UNKNOWN on restart, never invoked again (Tool-Use Binding draft, T-G).
   */
  invoke?: boolean;
}

export type ConsumeOutcome =
  | { ok: true; authority_id: string }
  /** `invalidated`: the authority this refusal consumed (an origin change), when it did. */
  | { ok: false; code: EfCode; reason: string; invalidated?: string };

/** What one authorize() decision writes, in one transaction, evidence first (evidence before authority). */
export interface DecisionRecord {
  evidence: EvidenceRow;
  authority?: AuthorityRow;
  escalation?: EscalationRow;
  /**
   * When set, the decision is written only if these are the current epochs, read inside the
   * same transaction: authority is never issued under epochs that already moved on (Finality-bound revocation draft).
   */
  expectEpochs?: PolicyState;
  /** The audit entries of this decision, appended in the same transaction when it is written. */
  audit?: readonly AuditEvent[];
}

/**
 * dispatch's hot path: an issuing decision (evidence, authority, its audit entries) and the
 * consume of that authority, in ONE transaction.
 */
export interface IssueAndConsumeRecord extends DecisionRecord {
  authority: AuthorityRow;
  expectEpochs: PolicyState;
}

export type IssueAndConsumeResult =
  /** The decision is written; `outcome` is the consume's (a refusal commits the issuance and its deny entry). */
  | { recorded: true; outcome: ConsumeOutcome }
  /** Nothing was written: the epochs moved on. */
  | { recorded: false; current: PolicyState };

export type DecisionResult =
  | { recorded: true }
  | { recorded: false; current: PolicyState }
  /** Nothing was written: an escalation of this act id with another binding digest exists (it stays as it was). */
  | { recorded: false; conflict: 'escalation_binding' };

export type OutcomeRecord = { state: 'EFFECTUATED'; result_json: string | null } | { state: 'FAILED'; error_code: string };

/** The epochs (Finality-bound revocation draft): what every authority is issued under and checked against. */
export interface Epochs {
  /** The current epochs. */
  current(opts?: StoreCallOptions): Promise<PolicyState>;
  /** Record the digest of the policy now in force; a different digest than the stored one bumps `policy_epoch`. */
  syncPolicyDigest(digest: string, now: number): Promise<PolicyState>;
  /** Bump one epoch: every outstanding authority issued under the old value becomes stale. */
  bump(epoch: keyof PolicyState, now: number): Promise<PolicyState>;
}

/** The system of record for single-use authority (Execution Handle draft, atomic consumption). */
export interface Ledger {
  /**
   * Write an authorize() decision: the evidence row, then (if any) the authority or the escalation, atomically.
   * An escalation row is immutable in what it binds: re-escalating its act id with another
   * `binding_digest` writes nothing and returns `conflict: 'escalation_binding'`.
   */
  recordDecision(record: DecisionRecord, opts?: StoreCallOptions): Promise<DecisionResult>;
  getAuthority(candidateActId: string): Promise<AuthorityRow | undefined>;
  getAuthorityById(authorityId: string): Promise<AuthorityRow | undefined>;
  getEvidence(evidenceId: string): Promise<EvidenceRow | undefined>;
  /** Revoke one unconsumed authority; false when it does not exist or is no longer ISSUED. */
  revoke(authorityId: string, now: number): Promise<boolean>;
  /**
   * The Tool-Use Binding draft's enforce() MUSTs 3 and 4 in ONE atomic step: read the epochs and the authority,
   * refuse when it is missing, consumed, revoked, expired, bound to another sink,
   * epoch-stale, or bound to other arguments/tool/destination, else consume it by a
   * conditional UPDATE and journal CONSUMED in the same transaction.
   */
  consume(req: ConsumeRequest, opts?: StoreCallOptions): Promise<ConsumeOutcome>;
  /**
   * `recordDecision` of an issuing decision and `consume` of the authority it issues, in ONE
   * transaction (one durable commit; PostgreSQL: one round trip). The authority row is checked
   * by the same consume step as any other before it is consumed.
   */
  issueAndConsume(record: IssueAndConsumeRecord, req: ConsumeRequest, opts?: StoreCallOptions): Promise<IssueAndConsumeResult>;
}

/** Escalated acts a person decides ([I-D.das-agentic] EF-070). */
export interface Escalations {
  get(candidateActId: string): Promise<EscalationRow | undefined>;
  list(status?: EscalationStatus): Promise<EscalationRow[]>;
  /** The latest decided escalations, newest first. */
  recentlyDecided(limit: number): Promise<EscalationRow[]>;
  /**
   * Decide a PENDING escalation bound to `bindingDigest` (the binding the person reviewed);
   * returns the updated row, or undefined when none with that binding was pending.
   */
  decide(
    candidateActId: string,
    bindingDigest: string,
    status: 'APPROVED' | 'REJECTED',
    approver: string,
    now: number,
  ): Promise<EscalationRow | undefined>;
}

/** The dispatch journal (Tool-Use Binding draft, T-G and retries). */
export interface Journal {
  get(candidateActId: string): Promise<JournalRow | undefined>;
  list(opts?: { limit?: number; state?: JournalState }): Promise<JournalRow[]>;
  /** CONSUMED → INVOKED, durably, before invoke; only the owner that consumed may do it. */
  markInvoked(candidateActId: string, owner: string, now: number): Promise<boolean>;
  /** INVOKED → EFFECTUATED | FAILED (the result is kept for a retry of the same act). */
  recordOutcome(candidateActId: string, owner: string, outcome: OutcomeRecord, now: number): Promise<boolean>;
  /** After a restart of `owner`: every CONSUMED/INVOKED row of it becomes EFFECT_RESULT_UNKNOWN. Returns the count. */
  recoverUnfinished(owner: string, now: number): Promise<number>;
}
