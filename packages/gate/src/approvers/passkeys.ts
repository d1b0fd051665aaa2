/**
 * The approvers' passkeys port (its tables: approvers/passkeys-schema.ts) and its implementation on
 * the gate store's engine, with the one-time enrollment links `vrp gate approvers enroll` prints.
 * Every single-use step is one conditional statement, so two racing uses cannot both succeed:
 * an enrollment link is spent once; a signature counter only moves forward from the value read.
 */
import { randomBytes } from 'node:crypto';
import { sha256Base64url } from '@vrpkit/core';
import type { Kysely } from 'kysely';
import type { GateDatabase, StoreEngine } from '../store/engine.js';
import type { ApproverEnrollmentTable, ApproverPasskeysDatabase, ApproverPasskeyTable } from './passkeys-schema.js';

export type ApproverPasskeyRow = ApproverPasskeyTable;
export type ApproverEnrollmentRow = ApproverEnrollmentTable;

/** How long an enrollment link stays usable unless configured: 30 minutes. */
export const DEFAULT_ENROLLMENT_TTL_MS = 30 * 60_000;

export interface ApproverPasskeys {
  /** Record an enrollment link (its token's digest, subject and expiry). */
  addEnrollment(row: Omit<ApproverEnrollmentRow, 'used_at'>): Promise<void>;
  /** The enrollment a token's digest names, while unused and unexpired. */
  openEnrollment(tokenDigest: string, now: number): Promise<ApproverEnrollmentRow | undefined>;
  /**
   * Spend an enrollment and record the passkey it enrolled, in one transaction: only an unused,
   * unexpired link is spent, and then the passkey is added for its subject. Returns the spent row,
   * or undefined when nothing changed.
   */
  enroll(tokenDigest: string, passkey: Omit<ApproverPasskeyRow, 'subject'>, now: number): Promise<ApproverEnrollmentRow | undefined>;
  passkey(credentialId: string): Promise<ApproverPasskeyRow | undefined>;
  /** The credential ids enrolled for a subject (a registration excludes them: one authenticator, one passkey). */
  credentialIdsOf(subject: string): Promise<string[]>;
  /**
   * Record a sign-in: the counter moves from `seen` to `counter` only if it still is `seen` (a
   * concurrent sign-in with the same counter loses). False when nothing changed.
   */
  recordUse(credentialId: string, seen: number, counter: number, now: number): Promise<boolean>;
}

export class SqlApproverPasskeys implements ApproverPasskeys {
  private readonly db: Kysely<GateDatabase & ApproverPasskeysDatabase>;

  constructor(private readonly engine: StoreEngine) {
    this.db = engine.db.withTables<ApproverPasskeysDatabase>();
  }

  async addEnrollment(row: Omit<ApproverEnrollmentRow, 'used_at'>): Promise<void> {
    await this.db
      .insertInto('gate_approver_enrollment')
      .values({ ...row, used_at: null })
      .execute();
  }

  async openEnrollment(tokenDigest: string, now: number): Promise<ApproverEnrollmentRow | undefined> {
    return await this.db
      .selectFrom('gate_approver_enrollment')
      .selectAll()
      .where('token_digest', '=', tokenDigest)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  async enroll(tokenDigest: string, passkey: Omit<ApproverPasskeyRow, 'subject'>, now: number): Promise<ApproverEnrollmentRow | undefined> {
    return this.engine.write(async (untyped) => {
      const db = untyped.withTables<ApproverPasskeysDatabase>();
      const spent = await db
        .updateTable('gate_approver_enrollment')
        .set({ used_at: now })
        .where('token_digest', '=', tokenDigest)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      if (spent)
        await db
          .insertInto('gate_approver_passkey')
          .values({ ...passkey, subject: spent.subject })
          .execute();
      return spent;
    });
  }

  async passkey(credentialId: string): Promise<ApproverPasskeyRow | undefined> {
    return await this.db.selectFrom('gate_approver_passkey').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
  }

  async credentialIdsOf(subject: string): Promise<string[]> {
    const rows = await this.db.selectFrom('gate_approver_passkey').select('credential_id').where('subject', '=', subject).execute();
    return rows.map((r) => r.credential_id);
  }

  async recordUse(credentialId: string, seen: number, counter: number, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('gate_approver_passkey')
      .set({ counter, last_used_at: now })
      .where('credential_id', '=', credentialId)
      .where('counter', '=', seen)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}

/** An enrollment link's token: 32 random bytes, base64url. */
const ENROLLMENT_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The digest an enrollment is stored under, or undefined for a string of another shape (never queried). */
export function enrollmentDigest(token: string): string | undefined {
  return ENROLLMENT_TOKEN.test(token) ? sha256Base64url(token) : undefined;
}

/** The page an enrollment link opens, under the approvals page's URL. */
export function enrollmentUrl(pageUrl: string, token: string): string {
  const url = new URL('approvers/enroll', pageUrl.endsWith('/') ? pageUrl : `${pageUrl}/`);
  url.searchParams.set('token', token);
  return url.toString();
}

/** Make a one-time enrollment link for `subject`: a fresh token, of which only the digest is stored. */
export async function issueApproverEnrollment(
  passkeys: Pick<ApproverPasskeys, 'addEnrollment'>,
  o: { subject: string; now: number; ttlMs?: number },
): Promise<{ token: string; expires_at: number }> {
  const token = randomBytes(32).toString('base64url');
  const expires_at = o.now + (o.ttlMs ?? DEFAULT_ENROLLMENT_TTL_MS);
  await passkeys.addEnrollment({ token_digest: sha256Base64url(token), subject: o.subject, issued_at: o.now, expires_at });
  return { token, expires_at };
}
