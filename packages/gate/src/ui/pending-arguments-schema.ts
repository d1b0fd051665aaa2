/**
 * The arguments of escalated acts, kept so the person deciding sees exactly what would run
 * (the approvals page shows them in full), and purged once decided (or expired) plus a
 * retention period. This is the one table that holds raw tool arguments, on purpose and
 * bounded in time; logs, evidence and escalations keep digests only (Tool-Use Binding
 * draft, security considerations: "Logs SHOULD store digests, not raw arguments").
 */
import type { GateMigration } from '../store/migration.js';

export interface PendingArgumentsTable {
  candidate_act_id: string;
  /** The arguments as digested (canonical JSON text): their digest is the act's `arguments_digest`. */
  arguments_json: string;
  arguments_digest: string;
  recorded_at: number;
}

// A type alias (not an interface) so Kysely's `withTables` accepts it.
export type PendingArgumentsDatabase = { gate_pending_arguments: PendingArgumentsTable };

/** The arguments of escalated acts, kept for the person deciding until decided plus retention. */
export const PENDING_ARGUMENTS_MIGRATION: GateMigration = {
  name: '0004_pending_arguments',
  legacyVersion: 4,
  async up(db) {
    await db.schema
      .createTable('gate_pending_arguments')
      .addColumn('candidate_act_id', 'text', (c) => c.primaryKey())
      .addColumn('arguments_json', 'text', (c) => c.notNull())
      .addColumn('arguments_digest', 'text', (c) => c.notNull())
      .addColumn('recorded_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
