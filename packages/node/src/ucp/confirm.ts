/**
 * The guest's confirmation on the host's page (`continue_url`): a one-time code mailed to the
 * session's buyer email, then the code typed back. Only a right code makes the hold, through the
 * booking desk (its per-address hold cap, the live re-quote, the dates blocked and the session's
 * move to `ready_for_complete` in one store transaction). The code is stored as a digest
 * bound to the session, lives 15 minutes and allows 5 tries; a new code replaces the old one.
 */
import { randomInt, timingSafeEqual } from 'node:crypto';
import type { Clock } from '@vrpkit/core';
import { sha256Hex } from '@vrpkit/core';
import type { BookingDesk } from '../booking/desk.js';
import type { GuestMailer, UcpSessionRecord, UcpSessionStore } from './ports.js';
import { continueUrl } from './view.js';

export const CODE_TTL_MS = 15 * 60_000;
/** The booking desk's idempotency key of the hold a session's confirmation makes: one hold per session, however often confirmed. */
export const holdKey = (sessionId: string) => `ucp-${sessionId}`;
/** The session whose confirmation made the hold with idempotency key `key`, if a session's did. */
export const sessionOfHold = (key: string): string | undefined => (key.startsWith('ucp-') ? key.slice(4) : undefined);
export const MAX_CODE_ATTEMPTS = 5;

/** What a confirmation step did, for the page to say (`code` stable, never the guest's data). */
export type ConfirmOutcome =
  | { ok: true; session: UcpSessionRecord }
  | {
      ok: false;
      code:
        | 'not_found'
        | 'not_awaiting_guest'
        | 'mail_failed'
        | 'code_invalid'
        | 'code_busy'
        | 'code_expired'
        | 'too_many_attempts'
        | 'booking_refused';
      message: string;
    };

export interface GuestConfirmationOptions {
  store: UcpSessionStore;
  desk: BookingDesk;
  mailer: GuestMailer;
  origin: string;
  clock: Clock;
  /** The stay and its total in words, for the mail. */
  summary(s: UcpSessionRecord): string;
  onError?(e: unknown): void;
}

const codeDigest = (sessionId: string, code: string) => sha256Hex(`${sessionId}:${code}`);

export function guestConfirmation(o: GuestConfirmationOptions) {
  const awaiting = async (id: string): Promise<UcpSessionRecord | Exclude<ConfirmOutcome, { ok: true }>> => {
    const s = await o.store.ucpSession(id);
    if (!s) return { ok: false, code: 'not_found', message: 'no such session' };
    if (s.status !== 'requires_escalation' || !s.buyer_email)
      return { ok: false, code: 'not_awaiting_guest', message: 'this stay request is not waiting for your confirmation' };
    // UCP Checkout `expires_at`: past it the session is not confirmed any more.
    if (Date.parse(s.expires_at) <= o.clock.now())
      return { ok: false, code: 'not_awaiting_guest', message: 'this stay request has expired' };
    return s;
  };
  return {
    /** Mail a new code to the session's buyer (the old one stops working). */
    async sendCode(id: string): Promise<ConfirmOutcome> {
      const s = await awaiting(id);
      if ('ok' in s) return s;
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const now = o.clock.now();
      const change = { code_sha256: codeDigest(id, code), code_expires_at: new Date(now + CODE_TTL_MS).toISOString(), code_attempts: 0 };
      const updated = await o.store.updateUcpSession(id, ['requires_escalation'], change, now);
      if (!updated) return { ok: false, code: 'not_awaiting_guest', message: 'this stay request is not waiting for your confirmation' };
      try {
        await o.mailer.sendConfirmationCode({
          to: s.buyer_email as string,
          code,
          sessionId: id,
          canonicalDomain: new URL(o.origin).host,
          continueUrl: continueUrl(o.origin, id),
          summary: o.summary(s),
        });
      } catch (e) {
        o.onError?.(e);
        return { ok: false, code: 'mail_failed', message: 'the code could not be sent; try again in a moment' };
      }
      return { ok: true, session: updated };
    },

    /** Check `code`; when right, hold the dates for the session's guest from client `address`. */
    async confirm(id: string, code: string, address: string): Promise<ConfirmOutcome> {
      const s = await awaiting(id);
      if ('ok' in s) return s;
      const now = o.clock.now();
      if (!s.code_sha256 || !s.code_expires_at) return { ok: false, code: 'code_invalid', message: 'ask for a code first' };
      if (Number(s.code_attempts) >= MAX_CODE_ATTEMPTS)
        return { ok: false, code: 'too_many_attempts', message: 'too many wrong codes: ask for a new one' };
      if (Date.parse(s.code_expires_at) <= now)
        return { ok: false, code: 'code_expired', message: 'the code has expired: ask for a new one' };
      // Count the try before judging it, as one compare-and-set on the code and the count read: of
      // parallel tries against one count only one is judged, so no more than MAX_CODE_ATTEMPTS ever are.
      const guard = { code_sha256: s.code_sha256, code_attempts: Number(s.code_attempts) };
      const counted = await o.store.updateUcpSession(id, ['requires_escalation'], { code_attempts: guard.code_attempts + 1 }, now, guard);
      if (!counted) return { ok: false, code: 'code_busy', message: 'another try is being checked: try again' };
      const right = /^\d{6}$/.test(code) && timingSafeEqual(Buffer.from(codeDigest(id, code)), Buffer.from(s.code_sha256));
      if (!right) return { ok: false, code: 'code_invalid', message: 'that code is not right' };
      return hold(o, s, address, now);
    },
  };
}

const ENDED = { ok: false, code: 'not_awaiting_guest', message: 'this stay request ended before your confirmation' } as const;

/**
 * The right code: the hold through the desk, made in one transaction with the session's move to
 * `ready_for_complete` (booking/ports.ts `HoldSession`). Made in two, a process killed or a database
 * lost between them left the nights held for a session still awaiting its guest, which could expire
 * with them held. A session that moved on meanwhile (canceled, expired, updated) gets no hold.
 */
async function hold(o: GuestConfirmationOptions, s: UcpSessionRecord, address: string, now: number): Promise<ConfirmOutcome> {
  const request = {
    offer_jws: s.offer_jws,
    guest: { name: s.buyer_name, email: s.buyer_email },
    idempotency_key: holdKey(s.session_id),
  };
  const change = { status: 'ready_for_complete', code_sha256: null, code_expires_at: null } as const;
  const answer = await o.desk.request(request, address, { id: s.session_id, from: ['requires_escalation'], change });
  if (!answer.ok && answer.error.code === 'session_not_awaiting') return ENDED;
  if (!answer.ok) return { ok: false, code: 'booking_refused', message: `${answer.error.code}: ${answer.error.message}` };
  const bookingId = answer.body.booking_request.booking_id;
  // Made now, or already by another confirmation of this session (the desk's idempotency key is the session's): the session took it with the hold.
  const current = await o.store.ucpSession(s.session_id);
  if (current?.booking_id === bookingId) return { ok: true, session: current };
  // A hold made before the two were one transaction, its process stopped before the session's move: the session takes it now.
  const healed = await o.store.updateUcpSession(s.session_id, ['requires_escalation'], { ...change, booking_id: bookingId }, now);
  return healed ? { ok: true, session: healed } : ENDED;
}

export type GuestConfirmation = ReturnType<typeof guestConfirmation>;
