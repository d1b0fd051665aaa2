/**
 * The approval links' table (approvals/links.ts): one row a link, keyed by the digest of the
 * link's random token — the token itself is never stored, so a copy of the store opens no page
 * (MCP 2026-07-28, client/elicitation, Safe URL Handling: no pre-authenticated URL). Each row
 * is scoped to exactly one act (candidate act id and binding digest), expires, and is used once.
 */
import type { GateMigration } from '../store/migration.js';

export interface ApprovalLinkTable {
  /** SHA-256 (base64url) of the link's token. */
  link_digest: string;
  candidate_act_id: string;
  /** The escalation's binding digest: the link decides this binding only. */
  binding_digest: string;
  issued_at: number;
  expires_at: number;
  /** When a decision was made through the link (it is then spent), else null. */
  used_at: number | null;
  /** The approver recorded by that decision. */
  used_by: string | null;
}

// A type alias (not an interface) so Kysely's `withTables` accepts it.
export type ApprovalLinkDatabase = { gate_approval_link: ApprovalLinkTable };

/** The single-use approval links a URL-mode elicitation sends the person to. */
export const APPROVAL_LINKS_MIGRATION: GateMigration = {
  name: '0010_approval_links',
  async up(db) {
    await db.schema
      .createTable('gate_approval_link')
      .addColumn('link_digest', 'text', (c) => c.primaryKey())
      .addColumn('candidate_act_id', 'text', (c) => c.notNull())
      .addColumn('binding_digest', 'text', (c) => c.notNull())
      .addColumn('issued_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addColumn('used_by', 'text')
      .execute();
    await db.schema.createIndex('gate_approval_link_expiry').on('gate_approval_link').column('expires_at').execute();
  },
};
