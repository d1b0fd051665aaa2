/**
 * The booking desk's ports: what it needs from a store and from the offer side, owned here so any
 * host of booking requests can serve them (the node's `NodeStore` and offer service today; a
 * platform tenant's rows and its offer service later). `S` is the store state a hold is decided
 * against, read inside the hold's transaction; the desk never looks into it, it hands it back to
 * the offer side for the live re-quote.
 */
import type { JwsSigner } from '@vrpkit/core';
import type { OfferRequestRefusal, ParsedOfferRequest, VrpJwks } from '@vrpkit/protocol';
import type { BlockedRangeTable, BookingEventTable, BookingRequestTable } from '../store/schema.js';
import type { UcpSessionChange, UcpSessionRecord } from '../ucp/ports.js';

/** A booking request as stored (the only place guest details are kept). */
export type BookingRequestRecord = BookingRequestTable;
/** One change of a booking request, waiting in the outbox for the webhook. */
export type BookingEvent = Omit<BookingEventTable, 'attempts' | 'mail_attempts'> & { attempts: number; mail_attempts: number };

/** A new hold: the booking request row (status `pending`) and its `booking` blocked range, written together. */
export type NewHold = Omit<BookingRequestRecord, 'status' | 'created_at' | 'updated_at' | 'decision_reason'>;

/** The `booking` blocked range a new hold's nights are, under the hold's id (a node's `blocked_range`, a tenant's block). */
export function holdRange(b: BookingRequestRecord, now: number): BlockedRangeTable {
  return {
    id: b.booking_id,
    property_id: b.property_id,
    start_date: b.check_in,
    end_date: b.check_out,
    kind: 'booking',
    feed_name: null,
    note: `booking request ${b.booking_id} (pending)`,
    created_at: new Date(now).toISOString(),
  };
}

/**
 * The UCP session a hold is made for (ucp/confirm.ts): in the hold's transaction the session takes
 * `change` and the hold's id (`booking_id`) when it is still in one of `from`; when it is not, no
 * hold is made. Two transactions would leave, after a crash between them, nights held for a session
 * still waiting for its guest (or ended).
 */
export interface HoldSession {
  id: string;
  from: readonly UcpSessionRecord['status'][];
  change: UcpSessionChange;
}

/**
 * What `createHold` did: made the hold, found the idempotency key already used, was refused by the
 * re-quote, or (with a `HoldSession`) found the session moved on: nothing written.
 */
export type HoldOutcome<R> =
  | { kind: 'created'; booking: BookingRequestRecord }
  | { kind: 'existing'; booking: BookingRequestRecord }
  | { kind: 'refused'; refusal: R }
  | { kind: 'session_moved' };

/** The desk's store: idempotent lookups and the one transaction that re-quotes and holds. */
export interface BookingStore<S> {
  bookingByIdempotencyKey(key: string): Promise<BookingRequestRecord | undefined>;
  /**
   * In one transaction holding the write lock: the booking already made under `idempotencyKey`, or
   * `decide` on the latest committed state and, when it names a hold, the hold written (nothing
   * written on a refusal), the store revision bumped; with `session`, that session moved with the
   * hold (or, moved on already, nothing written).
   */
  createHold<R>(
    idempotencyKey: string,
    now: number,
    decide: (state: S) => { hold: NewHold } | { refuse: R },
    session?: HoldSession,
  ): Promise<HoldOutcome<R>>;
}

/** The upkeep's store: expiring lapsed holds and draining the booking-event outbox (to the webhook, and the notices by mail). */
export interface BookingOutbox {
  expireHolds(now: number): Promise<string[]>;
  bookingRequest(id: string): Promise<BookingRequestRecord | undefined>;
  undeliveredBookingEvents(limit: number): Promise<BookingEvent[]>;
  recordBookingEventAttempt(eventId: string, delivered: boolean, now: number): Promise<void>;
  /** Events of the host's decisions not yet mailed, created at or after `since`, with fewer than `maxAttempts` tries, oldest first. */
  unmailedBookingEvents(since: number, maxAttempts: number, limit: number): Promise<BookingEvent[]>;
  recordBookingEventMail(eventId: string, sent: boolean, now: number): Promise<void>;
  /**
   * Erase the guest's details (name, email, phone, party, the host's reason) from every booking
   * request and UCP session whose stay ended before `before` (a date), keeping the rows (their dates,
   * totals and statuses feed the activity counts); how many of each were erased.
   */
  eraseGuestData(before: string): Promise<{ bookings: number; sessions: number }>;
}

/** A notice by mail: the guest's of the host's decision, the host's of a confirmed reservation. Plain text. */
export interface NoticeMail {
  to: string;
  subject: string;
  text: string;
}

/** The mail transport notices leave by (nodemailer to the host's SMTP server, ucp/mail.ts). */
export interface NoticeMailer {
  sendNotice(mail: NoticeMail): Promise<void>;
}

/**
 * What the node would sign for a stay now (Core VRP v0.1 §7), judged without signing: refused by
 * the stay window (`date_in_past`, `beyond_horizon`), or the terms a booking compares with its offer.
 */
export type LiveQuote =
  | { ok: false; error: OfferRequestRefusal }
  | {
      ok: true;
      available: boolean;
      /** `agent_permission.may_quote_as_official_direct_offer` as it would be signed. */
      mayQuote: boolean;
      /** `price.agent_total` as it would be signed (null for a signed negative). */
      total: number | null;
      currency: string;
      propertyId: string;
      /** Sign the offer these terms are of and return its compact JWS: only for an answer that must carry the current offer. */
      signedJws(): string;
    };

/** The offer side as the desk sees it. */
export interface BookingOffers<S> {
  readonly canonicalDomain: string;
  /** The keys an offer of this node may be signed with (Core VRP v0.1 §3.1: active and retained). */
  jwks(): Promise<VrpJwks>;
  /** The key that signs receipts now. */
  activeSigner(): JwsSigner;
  /** The live re-quote of `stay` from the store state `state` (read inside the hold's transaction), at the node's clock. */
  requote(state: S, stay: ParsedOfferRequest): LiveQuote;
}
