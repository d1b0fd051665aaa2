/**
 * The approvers' passkeys and their one-time enrollment links (issue 33 item 3). A passkey row
 * holds the credential's id, public key (COSE, base64url) and signature counter (WebAuthn Level 3
 * §6.1.1) for one subject, never a private key; an enrollment row is keyed by the digest of its
 * link's token (the token itself is never stored), expires, and is used once.
 */
import type { GateMigration } from '../store/migration.js';

export interface ApproverPasskeyTable {
  /** The credential id (base64url), as the authenticator reports it. */
  credential_id: string;
  /** The approver this passkey signs in. */
  subject: string;
  /** COSE public key, base64url. */
  public_key: string;
  /** The signature counter last seen (a cloned authenticator shows a counter that does not grow). */
  counter: number;
  /** Transport hints (JSON array of strings). */
  transports: string;
  created_at: number;
  last_used_at: number | null;
}

export interface ApproverEnrollmentTable {
  /** SHA-256 (base64url) of the enrollment link's token. */
  token_digest: string;
  subject: string;
  issued_at: number;
  expires_at: number;
  /** When a passkey was enrolled through the link (it is then spent), else null. */
  used_at: number | null;
}

// Type aliases (not interfaces) so Kysely's `withTables` accepts them.
export type ApproverPasskeysDatabase = {
  gate_approver_passkey: ApproverPasskeyTable;
  gate_approver_enrollment: ApproverEnrollmentTable;
};

export const APPROVER_PASSKEYS_MIGRATION: GateMigration = {
  name: '0014_approver_passkeys',
  async up(db) {
    await db.schema
      .createTable('gate_approver_passkey')
      .ifNotExists()
      .addColumn('credential_id', 'text', (c) => c.primaryKey())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', 'bigint', (c) => c.notNull())
      .addColumn('transports', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .execute();
    await db.schema
      .createTable('gate_approver_enrollment')
      .ifNotExists()
      .addColumn('token_digest', 'text', (c) => c.primaryKey())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('issued_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
  },
};
