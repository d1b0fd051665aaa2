/**
 * The UCP booking sessions' ports: the session rows they keep, the read port a host console lists
 * them through, and the mail transport the guest's one-time code travels by. Owned here so any
 * host of sessions (the node's `NodeStore`, a platform tenant's rows) can serve them; nobody downcasts.
 */
import type { UcpBooker, UcpGuest, UcpSessionStatus, UcpStayRequest } from '@vrpkit/protocol';
import type { UcpIdempotencyTable, UcpSessionTable } from '../store/schema.js';

/** A session as stored. The buyer's details live here and in the booking request only, never in a log. */
export type UcpSessionRecord = UcpSessionTable;

/**
 * The party as the platform last sent it (`party_json`), echoed back unchanged: Business guidelines,
 * "MUST preserve platform-supplied guest.id identifiers across session updates and responses".
 */
export interface UcpParty {
  booker?: UcpBooker;
  guests?: UcpGuest[];
  travel_purpose?: string;
  occupancy?: UcpStayRequest['occupancy'];
  guest_assignments?: UcpStayRequest['guest_assignments'];
}

/**
 * The identified lead (Booking, Business guidelines; `booking.json`'s rule for `ready_for_complete`):
 * a booker with a full name and an email; or a guest with a full name and an email assigned `primary`;
 * or a named primary guest with the booker's email. vrpkit needs an email (the one-time code goes there).
 */
export function leadOf(p: UcpParty): { name: string; email: string } | undefined {
  const full = (x: { first_name?: string; last_name?: string } | undefined) =>
    x?.first_name && x.last_name ? `${x.first_name} ${x.last_name}` : undefined;
  const booker = full(p.booker);
  if (booker && p.booker?.email) return { name: booker, email: p.booker.email };
  const primaryIds = new Set((p.guest_assignments ?? []).filter((a) => a.role === 'primary').map((a) => a.guest_id));
  const primary = (p.guests ?? []).find((g) => primaryIds.has(g.id) && full(g));
  const name = full(primary);
  const email = primary?.email ?? p.booker?.email;
  return name && email ? { name, email } : undefined;
}

/** A new session: `incomplete` or `requires_escalation`, no code sent yet, no booking. */
export type NewUcpSession = Omit<
  UcpSessionRecord,
  'created_at' | 'updated_at' | 'code_sha256' | 'code_expires_at' | 'code_attempts' | 'booking_id' | 'cancel_reason'
>;

/** A new session's row: no code sent yet, no booking. */
export function newSessionRow(s: NewUcpSession, now: number): UcpSessionRecord {
  const at = new Date(now).toISOString();
  return {
    ...s,
    code_sha256: null,
    code_expires_at: null,
    code_attempts: 0,
    booking_id: null,
    created_at: at,
    updated_at: at,
    cancel_reason: null,
  };
}

/** The columns a session transition may change. */
export type UcpSessionChange = Partial<
  Pick<
    UcpSessionRecord,
    | 'status'
    | 'buyer_email'
    | 'buyer_name'
    | 'party_json'
    | 'code_sha256'
    | 'code_expires_at'
    | 'code_attempts'
    | 'booking_id'
    | 'cancel_reason'
  >
>;

/** The one-time code state a code check was made against: its digest and the tries already counted. */
export type UcpCodeGuard = Pick<UcpSessionRecord, 'code_sha256' | 'code_attempts'>;

/** The answer a claimed `Idempotency-Key` (its row id) is settled with. */
export interface UcpSettle {
  id: string;
  status: number;
  json: string;
}

/** The sessions' store: each write is one conditional statement on the session's current status. */
export interface UcpSessionStore {
  /** Insert a session; with `settle`, store that answer under the claimed `Idempotency-Key` in the same transaction (idempotency.ts). */
  insertUcpSession(s: NewUcpSession, now: number, settle?: UcpSettle): Promise<UcpSessionRecord>;
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

/** A stored `Idempotency-Key` (tables.ts `UCP_IDEMPOTENCY_COLUMNS`): the request's digest and, once settled, its answer. */
export type UcpIdempotencyRecord = UcpIdempotencyTable;

/**
 * Where the sessions keep `Idempotency-Key`s (Message Signatures, Replay Protection). `id` names the
 * key within its scope and operation (idempotency.ts); each write is one statement.
 */
export interface UcpIdempotencyStore {
  /**
   * Claim `id` for a request with digest `requestSha256`, first removing every key past its
   * `expires_at`: undefined when this request now holds it (a fresh row, or a claim left unsettled
   * since `staleBefore` by a request that never finished), else the row another request holds.
   */
  claimUcpIdempotencyKey(
    id: string,
    requestSha256: string,
    now: number,
    expiresAt: number,
    staleBefore: number,
  ): Promise<UcpIdempotencyRecord | undefined>;
  /** Store the answer a claimed key was given. */
  settleUcpIdempotencyKey(id: string, answer: { status: number; json: string }): Promise<void>;
  /** Drop a claim whose request was not answered with a result worth replaying (a refusal, a failure). */
  releaseUcpIdempotencyKey(id: string): Promise<void>;
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
