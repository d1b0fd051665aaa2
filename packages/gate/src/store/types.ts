import type { PolicyState } from '../act.js';
import type { AuditEvent, AuditSigner } from '../audit/chain.js';
import type { EfCode } from '../errors.js';
import type { AuditCheckpointTable, AuditTable } from './audit-schema.js';
import type { AuthorityTable, EscalationStatus, EscalationTable, EvidenceTable, JournalState, JournalTable } from './schema.js';

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

export interface StoreCallOptions {
  /** Bound on waiting for the store (locks, statement time). Exceeding it throws `StoreTimeoutError` and changes nothing. */
  timeoutMs?: number;
}

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

/**
 * A durable authority store: the system of record for single-use consumption.
 * Every implementation passes the one contract suite in `test/store.test.ts`.
 */
/** The audit chain's head: the last entry's seq and hash (seq 0 and the genesis hash when empty). */
export interface AuditHead {
  seq: number;
  hash: string;
}

export interface AuditReadOptions {
  /** Entries with a greater seq. Default 0. */
  afterSeq?: number;
  /** Entries at or after this time (epoch ms). */
  since?: number;
  limit: number;
}

export interface AuthorityStore {
  readonly dialect: 'sqlite' | 'postgres';
  /** Where the store lives, for messages (a file path, or a URL without credentials). */
  readonly location: string;

  /** The current epochs. */
  policyState(opts?: StoreCallOptions): Promise<PolicyState>;
  /** Record the digest of the policy now in force; a different digest than the stored one bumps `policy_epoch`. */
  syncPolicyDigest(digest: string, now: number): Promise<PolicyState>;
  /** Bump one epoch: every outstanding authority issued under the old value becomes stale (Finality-bound revocation draft). */
  bumpEpoch(epoch: keyof PolicyState, now: number): Promise<PolicyState>;

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
  revokeAuthority(authorityId: string, now: number): Promise<boolean>;

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

  getEscalation(candidateActId: string): Promise<EscalationRow | undefined>;
  listEscalations(status?: EscalationStatus): Promise<EscalationRow[]>;
  /**
   * Decide a PENDING escalation bound to `bindingDigest` (the binding the person reviewed);
   * returns the updated row, or undefined when none with that binding was pending.
   */
  decideEscalation(
    candidateActId: string,
    bindingDigest: string,
    status: 'APPROVED' | 'REJECTED',
    approver: string,
    now: number,
  ): Promise<EscalationRow | undefined>;

  getJournal(candidateActId: string): Promise<JournalRow | undefined>;
  listJournal(opts?: { limit?: number; state?: JournalState }): Promise<JournalRow[]>;
  /** CONSUMED → INVOKED, durably, before invoke; only the owner that consumed may do it. */
  markInvoked(candidateActId: string, owner: string, now: number): Promise<boolean>;
  /** INVOKED → EFFECTUATED | FAILED (the result is kept for a retry of the same act). */
  recordOutcome(candidateActId: string, owner: string, outcome: OutcomeRecord, now: number): Promise<boolean>;
  /** After a restart of `owner`: every CONSUMED/INVOKED row of it becomes EFFECT_RESULT_UNKNOWN. Returns the count. */
  recoverUnfinished(owner: string, now: number): Promise<number>;

  /**
   * The audit log: every decision the store writes (issue, deny, escalate, approve, reject,
   * consume, invoke, result) appends its entry in the decision's own transaction; `appendAudit`
   * appends others (a deny decided before the store, a pin) in a transaction of their own.
   */
  appendAudit(events: readonly AuditEvent[], now: number, opts?: StoreCallOptions): Promise<AuditHead>;
  auditHead(): Promise<AuditHead>;
  readAudit(opts: AuditReadOptions): Promise<AuditTable[]>;
  listAuditCheckpoints(): Promise<AuditCheckpointTable[]>;
  /** Sign checkpoints with this key from now on (every `every` entries, and the head on close). */
  useAuditSigner(signer: AuditSigner): void;
  /** Sign the current head unless it is signed already. No-op without a signer. */
  checkpointAudit(now: number): Promise<void>;

  close(): Promise<void>;
}
