/**
 * The UCP booking sessions' ports: the session rows they keep, the read port a host console lists
 * them through, and the mail transport the guest's one-time code travels by. Owned here so any
 * host of sessions (the node's `NodeStore`, a platform tenant's rows) can serve them; nobody downcasts.
 */
import type { UcpSessionStatus } from '@vrpkit/protocol';
import type { UcpSessionTable } from '../store/schema.js';

/** A session as stored. The buyer's details live here and in the booking request only, never in a log. */
export type UcpSessionRecord = UcpSessionTable;

/** A new session: `incomplete` or `requires_escalation`, no code sent yet, no booking. */
export type NewUcpSession = Omit<
  UcpSessionRecord,
  'created_at' | 'updated_at' | 'code_sha256' | 'code_expires_at' | 'code_attempts' | 'booking_id'
>;

/** The columns a session transition may change. */
export type UcpSessionChange = Partial<
  Pick<UcpSessionRecord, 'status' | 'buyer_email' | 'buyer_name' | 'code_sha256' | 'code_expires_at' | 'code_attempts' | 'booking_id'>
>;

/** The one-time code state a code check was made against: its digest and the tries already counted. */
export type UcpCodeGuard = Pick<UcpSessionRecord, 'code_sha256' | 'code_attempts'>;

/** The sessions' store: each write is one conditional statement on the session's current status. */
export interface UcpSessionStore {
  insertUcpSession(s: NewUcpSession, now: number): Promise<UcpSessionRecord>;
  ucpSession(id: string): Promise<UcpSessionRecord | undefined>;
  /**
   * Apply `change` when the session is still in one of `from` and, with `guard`, still has the code
   * and attempt count read before (compare-and-set): the updated row, or undefined when it was not
   * (unknown, or moved on meanwhile: nothing written).
   */
  updateUcpSession(
    id: string,
    from: readonly UcpSessionStatus[],
    change: UcpSessionChange,
    now: number,
    guard?: UcpCodeGuard,
  ): Promise<UcpSessionRecord | undefined>;
}

/** What a host console reads: sessions by status, newest last, without the one-time code's digest. */
export interface UcpSessionReader {
  ucpSessions(status?: UcpSessionStatus): Promise<Omit<UcpSessionRecord, 'code_sha256'>[]>;
}

/** The guest's one-time code on its way: to `to`, for the session `sessionId` of the host `canonicalDomain`. */
export interface ConfirmationMail {
  to: string;
  code: string;
  sessionId: string;
  canonicalDomain: string;
  continueUrl: string;
  /** The stay in words and its total as the page shows them. */
  summary: string;
}

/** The mail transport (nodemailer to the host's SMTP server in `mail.ts`). */
export interface GuestMailer {
  sendConfirmationCode(mail: ConfirmationMail): Promise<void>;
}
