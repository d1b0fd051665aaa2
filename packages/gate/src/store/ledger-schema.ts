/**
 * The ledger's tables (epochs, evidence, authority, escalations, dispatch journal) and their
 * migrations, written once with Kysely's schema builder so SQLite and PostgreSQL run the same
 * migrations (listed in store/migrations.ts): one query layer for both dialects, no
 * hand-duplicated SQL per dialect.
 *
 * Times are epoch milliseconds (`bigint`; SQLite stores them as INTEGER, the PostgreSQL
 * pool parses int8 back to number). Raw tool arguments are never stored: only digests
 * (Tool-Use Binding draft, security considerations: "Logs SHOULD store digests, not raw arguments").
 */
import { type Kysely, sql } from 'kysely';
import type { GateMigration } from './migration.js';

/** Row states of an authority (Execution Handle draft, atomic consumption: ISSUED → CONSUMED, or REVOKED). */
export type AuthorityState = 'ISSUED' | 'CONSUMED' | 'REVOKED';

/**
 * Dispatch journal states (Tool-Use Binding draft, T-G and retries): CONSUMED → INVOKED → EFFECTUATED | FAILED, and after a
 * restart an unfinished row becomes EFFECT_RESULT_UNKNOWN (EF-090), never re-invoked.
 * REFUSED: the authority was consumed by a refusal, never invoked (a computer-use origin
 * change invalidates prior authority; its `error_code` says why).
 */
export type JournalState = 'CONSUMED' | 'INVOKED' | 'EFFECTUATED' | 'FAILED' | 'EFFECT_RESULT_UNKNOWN' | 'REFUSED';

export type EvidenceDecision = 'ISSUED' | 'ESCALATED' | 'DENIED';
export type EscalationStatus = 'PENDING' | 'APPROVED' | 'REJECTED';

export interface PolicyStateTable {
  id: number;
  policy_epoch: number;
  authority_epoch: number;
  revocation_epoch: number;
  /** Digest of the policy document the epochs were last bumped for (a new policy bumps policy_epoch). */
  policy_digest: string | null;
  updated_at: number;
}

export interface EvidenceTable {
  evidence_id: string;
  candidate_act_id: string;
  /** JCS SHA-256 (base64url) of the whole candidate act as validated. */
  act_digest: string;
  arguments_digest: string;
  decision: EvidenceDecision;
  code: string | null;
  reason: string;
  policy_id: string;
  policy_epoch: number;
  authority_epoch: number;
  revocation_epoch: number;
  approver: string | null;
  recorded_at: number;
}

export interface AuthorityTable {
  authority_id: string;
  candidate_act_id: string;
  evidence_id: string;
  arguments_digest: string;
  tool_id: string;
  function_id: string;
  tool_endpoint: string | null;
  destination_id: string | null;
  sink_id: string;
  consequence_class: string;
  issued_at: number;
  expires_at: number;
  policy_epoch: number;
  authority_epoch: number;
  revocation_epoch: number;
  /** The signed authority (compact JWS) a cooperating sink can verify. */
  jws: string;
  state: AuthorityState;
  consumed_at: number | null;
  consumed_by: string | null;
  revoked_at: number | null;
}

export interface EscalationTable {
  candidate_act_id: string;
  evidence_id: string;
  /** Digest over the act's load-bearing fields: an approval covers exactly this act. */
  binding_digest: string;
  /** The candidate act as JSON (it carries the arguments digest, never raw arguments). */
  act_json: string;
  status: EscalationStatus;
  approver: string | null;
  requested_at: number;
  decided_at: number | null;
  expires_at: number;
}

export interface JournalTable {
  candidate_act_id: string;
  authority_id: string;
  arguments_digest: string;
  tool_id: string;
  /** The enforcer instance that consumed the authority (only it may record the outcome). */
  owner: string;
  state: JournalState;
  consumed_at: number;
  invoked_at: number | null;
  finished_at: number | null;
  /** The recorded tool result as JSON, returned to a retry of the same act (Tool-Use Binding draft, retries: "a fetch of the original tool_result"). */
  result_json: string | null;
  error_code: string | null;
}

// A type alias (not an interface) so Kysely's `withTables` accepts it.
export type LedgerDatabase = {
  gate_policy_state: PolicyStateTable;
  gate_evidence: EvidenceTable;
  gate_authority: AuthorityTable;
  gate_escalation: EscalationTable;
  gate_journal: JournalTable;
};

type Db = Kysely<LedgerDatabase>;

async function createPolicyState(db: Db, now: number): Promise<void> {
  await db.schema
    .createTable('gate_policy_state')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('policy_epoch', 'bigint', (c) => c.notNull())
    .addColumn('authority_epoch', 'bigint', (c) => c.notNull())
    .addColumn('revocation_epoch', 'bigint', (c) => c.notNull())
    .addColumn('policy_digest', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db
    .insertInto('gate_policy_state')
    .values({ id: 1, policy_epoch: 1, authority_epoch: 1, revocation_epoch: 1, policy_digest: null, updated_at: now })
    .execute();
}

async function createEvidence(db: Db): Promise<void> {
  await db.schema
    .createTable('gate_evidence')
    .addColumn('evidence_id', 'text', (c) => c.primaryKey())
    .addColumn('candidate_act_id', 'text', (c) => c.notNull())
    .addColumn('act_digest', 'text', (c) => c.notNull())
    .addColumn('arguments_digest', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('policy_id', 'text', (c) => c.notNull())
    .addColumn('policy_epoch', 'bigint', (c) => c.notNull())
    .addColumn('authority_epoch', 'bigint', (c) => c.notNull())
    .addColumn('revocation_epoch', 'bigint', (c) => c.notNull())
    .addColumn('approver', 'text')
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('gate_evidence_act').on('gate_evidence').column('candidate_act_id').execute();
}

async function createAuthority(db: Db): Promise<void> {
  await db.schema
    .createTable('gate_authority')
    .addColumn('authority_id', 'text', (c) => c.primaryKey())
    // One authority per candidate act, ever: a retry after consumption is a new act (Tool-Use Binding draft, retries).
    .addColumn('candidate_act_id', 'text', (c) => c.notNull().unique())
    // Evidence before authority: an authority row cannot exist without its evidence row.
    .addColumn('evidence_id', 'text', (c) => c.notNull().references('gate_evidence.evidence_id'))
    .addColumn('arguments_digest', 'text', (c) => c.notNull())
    .addColumn('tool_id', 'text', (c) => c.notNull())
    .addColumn('function_id', 'text', (c) => c.notNull())
    .addColumn('tool_endpoint', 'text')
    .addColumn('destination_id', 'text')
    .addColumn('sink_id', 'text', (c) => c.notNull())
    .addColumn('consequence_class', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('policy_epoch', 'bigint', (c) => c.notNull())
    .addColumn('authority_epoch', 'bigint', (c) => c.notNull())
    .addColumn('revocation_epoch', 'bigint', (c) => c.notNull())
    .addColumn('jws', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .addColumn('consumed_by', 'text')
    .addColumn('revoked_at', 'bigint')
    .execute();
}

async function createEscalation(db: Db): Promise<void> {
  await db.schema
    .createTable('gate_escalation')
    .addColumn('candidate_act_id', 'text', (c) => c.primaryKey())
    .addColumn('evidence_id', 'text', (c) => c.notNull().references('gate_evidence.evidence_id'))
    .addColumn('binding_digest', 'text', (c) => c.notNull())
    .addColumn('act_json', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('approver', 'text')
    .addColumn('requested_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

async function createJournal(db: Db): Promise<void> {
  await db.schema
    .createTable('gate_journal')
    .addColumn('candidate_act_id', 'text', (c) => c.primaryKey())
    .addColumn('authority_id', 'text', (c) => c.notNull().references('gate_authority.authority_id'))
    .addColumn('arguments_digest', 'text', (c) => c.notNull())
    .addColumn('tool_id', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint', (c) => c.notNull())
    .addColumn('invoked_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('result_json', 'text')
    .addColumn('error_code', 'text')
    .execute();
  await db.schema.createIndex('gate_journal_owner_state').on('gate_journal').columns(['owner', 'state']).execute();
}

/** The ledger's tables: authority, evidence, escalation, journal, policy state. */
export const LEDGER_MIGRATION: GateMigration = {
  name: '0001_ledger',
  legacyVersion: 1,
  async up(untyped, { now }) {
    const db = untyped as Db;
    await createPolicyState(db, now);
    await createEvidence(db);
    await createAuthority(db);
    await createEscalation(db);
    await createJournal(db);
  },
};

export const NO_EVIDENCE_ACT_INDEX_MIGRATION: GateMigration = {
  name: '0008_no_evidence_act_index',
  legacyVersion: 8,
  // No query reads evidence by its act (the audit trail matches act ids by substring, which no
  // index serves), and every issuance paid for it: one more B-tree page written per durable commit.
  async up(db) {
    await db.schema.dropIndex('gate_evidence_act').ifExists().execute();
  },
};

/**
 * PostgreSQL only: room on each `gate_authority` page for the consume's new row version. The
 * consume's UPDATE changes no indexed column (state, consumed_at, consumed_by), so when the new
 * version fits on the row's own page it is a heap-only tuple (HOT): no new entries in the key and
 * act indexes, fewer pages written and WAL-logged per consume. Filled to 100% by the issuing
 * inserts, the pages had no room: a third to two thirds of consumes were HOT (bench of 300 acts;
 * about 2.4–5.7 KB of WAL per enforce), with 80% all of them (about 1.3 KB). Only pages written
 * after the migration keep the room.
 */
export const AUTHORITY_FILLFACTOR_MIGRATION: GateMigration = {
  name: '0012_pg_authority_fillfactor',
  async up(db, { dialect }) {
    if (dialect !== 'postgres') return;
    await sql`alter table gate_authority set (fillfactor = 80)`.execute(db);
  },
};
