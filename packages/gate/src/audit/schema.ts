/**
 * The audit log's tables and the migrations that add them to the gate store (both dialects,
 * listed in store/migrations.ts). Entries hold ids, codes and digests only, never raw tool
 * arguments (Tool-Use Binding draft, security considerations: "Logs SHOULD store digests, not
 * raw arguments").
 */
import { type Kysely, sql } from 'kysely';
import type { GateMigration } from '../store/migration.js';

/** What a decision was. `deny` carries its EF code; `result` carries the failure code when the tool failed. */
export type AuditKind =
  | 'pin'
  | 'unpin'
  | 'allow'
  | 'deny'
  | 'escalate'
  | 'approve'
  | 'reject'
  | 'issued'
  | 'consumed'
  | 'invoked'
  | 'result';

export interface AuditTable {
  /** Position in the chain, 1, 2, 3 … without gaps. */
  seq: number;
  /** Epoch milliseconds. */
  at: number;
  kind: AuditKind;
  act_id: string | null;
  tool: string | null;
  /** The server identity (MCP: the act's tool_endpoint; pins: the proxy's server id). */
  server: string | null;
  /** The act's arguments digest; for approve/reject the binding digest decided; for pin/unpin the tool definition digest. */
  digest: string | null;
  code: string | null;
  /** Who decided: the approver, the pinning person, or the enforcer instance that consumed/invoked. */
  actor: string | null;
  /** `hash` of entry seq − 1 (the genesis value for seq 1). */
  prev_hash: string;
  /** SHA-256 (base64url) over the RFC 8785 JCS form of the entry without `hash`. */
  hash: string;
}

/** The one row every append locks and moves forward: how concurrent writers keep one chain. */
export interface AuditHeadTable {
  id: number;
  seq: number;
  hash: string;
}

/** A signed chain head (every N entries and on shutdown). */
export interface AuditCheckpointTable {
  seq: number;
  hash: string;
  at: number;
  kid: string;
  /** The signer's public JWK (JSON); `vrp gate audit verify --jwks` pins which keys are trusted. */
  public_jwk: string;
  /** Compact JWS (EdDSA) over `{"at":…,"hash":…,"seq":…}`. */
  jws: string;
}

export type AuditDatabase = {
  gate_audit: AuditTable;
  gate_audit_head: AuditHeadTable;
  gate_audit_checkpoint: AuditCheckpointTable;
};

/** `prev_hash` of the first entry: 32 zero bytes, base64url. */
export const AUDIT_GENESIS = 'A'.repeat(43);

/**
 * The hash-chained audit log, its head and signed checkpoints. On PostgreSQL this migration also
 * created the one-round-trip consume functions when it was released; `0005` (store/postgres-consume.ts)
 * creates their current version on every store, so they are left to it here.
 */
export const AUDIT_LOG_MIGRATION: GateMigration = {
  name: '0003_audit_log',
  legacyVersion: 3,
  async up(untyped) {
    const db = untyped as Kysely<AuditDatabase>;
    await db.schema
      .createTable('gate_audit')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('act_id', 'text')
      .addColumn('tool', 'text')
      .addColumn('server', 'text')
      .addColumn('digest', 'text')
      .addColumn('code', 'text')
      .addColumn('actor', 'text')
      .addColumn('prev_hash', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('gate_audit_at').on('gate_audit').column('at').execute();
    await db.schema
      .createTable('gate_audit_head')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .execute();
    await db.insertInto('gate_audit_head').values({ id: 1, seq: 0, hash: AUDIT_GENESIS }).execute();
    await db.schema
      .createTable('gate_audit_checkpoint')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('kid', 'text', (c) => c.notNull())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('jws', 'text', (c) => c.notNull())
      .execute();
  },
};

/**
 * SQLite only: `gate_audit` keyed by its rowid. Migration 0003 declared
 * `seq` as `bigint PRIMARY KEY`, which SQLite keeps as a second B-tree beside the table (only
 * `INTEGER PRIMARY KEY` is the rowid itself), so every append wrote one index page more than the
 * entry needs, in the durable commit of every act. The table is rebuilt once, rows and order kept.
 */
export const AUDIT_ROWID_MIGRATION: GateMigration = {
  name: '0009_sqlite_audit_rowid',
  legacyVersion: 9,
  async up(untyped, { dialect }) {
    if (dialect !== 'sqlite') return;
    const db = untyped as Kysely<AuditDatabase>;
    await sql`create table gate_audit_by_rowid (
      seq integer primary key, at bigint not null, kind text not null, act_id text, tool text, server text,
      digest text, code text, actor text, prev_hash text not null, hash text not null)`.execute(db);
    await sql`insert into gate_audit_by_rowid (seq, at, kind, act_id, tool, server, digest, code, actor, prev_hash, hash)
      select seq, at, kind, act_id, tool, server, digest, code, actor, prev_hash, hash from gate_audit order by seq`.execute(db);
    await db.schema.dropTable('gate_audit').execute();
    await sql`alter table gate_audit_by_rowid rename to gate_audit`.execute(db);
    await db.schema.createIndex('gate_audit_at').on('gate_audit').column('at').execute();
  },
};

/**
 * SQLite only: no index on `gate_audit.at`. Every durable commit of a decision appends entries, and
 * the index cost one more B-tree page in each one's WAL append (issue 37 item 2: the consume's commit
 * at the raw durable CAS floor; the same trade as 0008). Only `--since` reads use `at`, an
 * operator's: the search reads newest first, so it stops early for a recent window; the export pages
 * by `seq`, so its first page reads past the older entries once. PostgreSQL keeps its index: its consumes commit in
 * groups of one statement (store/postgres-consume.ts), within their target.
 */
export const NO_AUDIT_AT_INDEX_MIGRATION: GateMigration = {
  name: '0015_sqlite_no_audit_at_index',
  async up(db, { dialect }) {
    if (dialect !== 'sqlite') return;
    await db.schema.dropIndex('gate_audit_at').ifExists().execute();
  },
};
