/**
 * The booking desk: the node's internal hold store. A guest's confirmation on a UCP session's page
 * (ucp/confirm.ts) makes the hold through it, with the session's idempotency key `ucp-{session id}`;
 * the `/book` form and agents reach it only through those sessions, and its rate limit guards every
 * UCP endpoint and page. In order:
 * the request's shape (protocol's `BookingRequestSchema`), the idempotency key, the offer JWS
 * (`checkOwnOffer`, which reads the stay it was signed for), then the live re-quote of that stay
 * and the hold in one store transaction (`BookingStore.createHold`, with the move of the session it
 * is made for). Every refusal writes nothing;
 * an offer is signed only when the refusal must carry the current one. Logs carry ids and
 * digests, never the guest's details. The desk sees its store and the offer side through its
 * ports (ports.ts) only.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, canonicalSha256Hex, sha256Hex, systemClock } from '@vrpkit/core';
import {
  BOOKING_ERRORS,
  type BookingErrorCode,
  type BookingRequest,
  BookingRequestSchema,
  type BookingResponse,
  type ParsedOfferRequest,
} from '@vrpkit/protocol';
import { NodeError } from '../errors.js';
import { checkOwnOffer } from './offer-check.js';
import type { BookingOffers, BookingRequestRecord, BookingStore, HoldSession, LiveQuote, NewHold } from './ports.js';
import {
  createHoldCap,
  createRateLimiter,
  DEFAULT_BOOKING_HOLDS_PER_DAY,
  DEFAULT_BOOKING_RATE_LIMIT,
  type HoldCap,
  type RateLimiter,
} from './rate-limit.js';
import { bookingView, signBookingReceipt } from './receipt.js';

/** `--hold-hours` default: a pending hold keeps the dates this long unless the host decides first. */
export const DEFAULT_HOLD_HOURS = 24;
/** Longest `--hold-hours` accepted (two weeks). */
export const MAX_HOLD_HOURS = 336;

export interface BookingRefusal {
  code: BookingErrorCode;
  message: string;
  /** `BOOKING_OFFER_CHANGED`: the node's current signed offer for the stay, when it has one. */
  current_offer_jws?: string;
  /** `BOOKING_RATE_LIMITED`, `BOOKING_TOO_MANY_HOLDS`: seconds until the client may try again. */
  retry_after_seconds?: number;
}

/** A booking request refused with one of protocol's booking errors. */
export type BookingRefused = { ok: false; status: number; error: BookingRefusal };

/** `session_not_awaiting`: the request's `HoldSession` had moved on, so no hold was made (nothing written). */
export type BookingAnswer =
  | { ok: true; status: 200 | 201; body: BookingResponse }
  | BookingRefused
  | { ok: false; status: 409; error: Omit<BookingRefusal, 'code'> & { code: 'session_not_awaiting' } };

/** One log line per booking decision: ids and digests only. */
export interface BookingLogEntry {
  event: 'booking_request';
  outcome: 'created' | 'replayed' | BookingErrorCode | 'session_not_awaiting';
  booking_id: string | null;
  offer_jws_sha256: string | null;
}

/** `S`: the store state a hold is decided against (the node's `StoreSnapshot`). */
export interface BookingDeskOptions<S> {
  /** The offer side: the node's offer service (`NodePublisher`) or any `BookingOffers`. */
  service: BookingOffers<S>;
  /** The desk's store port (`NodeStore` on a node). */
  store: BookingStore<S>;
  /** The node's clock (default the system clock). */
  clock?: Clock;
  /** Hours a pending hold keeps the dates (default 24). */
  holdHours?: number;
  /** Booking requests per minute from one address (default 10). */
  rateLimitPerMinute?: number;
  /** Holds one client address may create in a rolling 24 hours (default 3; 0 = no cap). */
  holdsPerDay?: number;
  /** Called after a change was committed (the webhook sender drains the event outbox). */
  onChange?: () => void;
  log?: (entry: BookingLogEntry) => void;
}

export interface BookingDesk {
  readonly canonicalDomain: string;
  /** Count one request from client `address` against the rate limit, once its media type and size passed. */
  admit(address: string): BookingRefused | null;
  /**
   * Decide one booking request body (already parsed from JSON or the page's form) from client
   * `address`; with `session`, the hold is made only with that session's move (`BookingStore.createHold`).
   */
  request(input: unknown, address: string, session?: HoldSession): Promise<BookingAnswer>;
}

/** A refused booking request: the code's status from protocol's registry (`BOOKING_ERRORS`). */
export function refuse(code: BookingErrorCode, message: string, extra: Partial<BookingRefusal> = {}): BookingRefused {
  return { ok: false, status: BOOKING_ERRORS[code], error: { code, message, ...extra } };
}

/** The first schema issue as a message naming the field (never its value: it may be the guest's). */
function shapeMessage(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const first = issues[0];
  const field = first?.path.map(String).join('.') || 'body';
  return `${field}: ${first?.message ?? 'invalid'}`;
}

/** The desk's limits from its options, each checked (`invalid_hold_hours`, `invalid_booking_rate_limit`, `invalid_booking_holds_per_day`). */
function limitsOf(o: BookingDeskOptions<unknown>): { holdHours: number; limiter: RateLimiter; holdCap: HoldCap | null } {
  const holdHours = o.holdHours ?? DEFAULT_HOLD_HOURS;
  if (!(holdHours > 0 && holdHours <= MAX_HOLD_HOURS)) throw new NodeError('invalid_hold_hours', { max: MAX_HOLD_HOURS });
  const perMinute = o.rateLimitPerMinute ?? DEFAULT_BOOKING_RATE_LIMIT;
  if (!Number.isInteger(perMinute) || perMinute < 1) throw new NodeError('invalid_booking_rate_limit');
  const holdsPerDay = o.holdsPerDay ?? DEFAULT_BOOKING_HOLDS_PER_DAY;
  if (!Number.isInteger(holdsPerDay) || holdsPerDay < 0) throw new NodeError('invalid_booking_holds_per_day');
  return { holdHours, limiter: createRateLimiter(perMinute), holdCap: holdsPerDay > 0 ? createHoldCap(holdsPerDay) : null };
}

/**
 * The live re-quote against the signed terms: null when the stay is still available and quotable
 * at the signed total, currency and property; else `BOOKING_OFFER_CHANGED` with the current
 * offer, signed now (the only signature a refused booking costs).
 */
function changedTerms(
  q: LiveQuote & { ok: true },
  signed: { agentTotal: number; currency: string; propertyId: string | undefined },
): BookingRefusal | null {
  const same =
    q.available && q.mayQuote && q.total === signed.agentTotal && q.currency === signed.currency && q.propertyId === signed.propertyId;
  if (same) return null;
  return {
    code: 'BOOKING_OFFER_CHANGED',
    message: q.available ? 'the price of the stay changed' : 'the stay is no longer available',
    current_offer_jws: q.signedJws(),
  };
}

/** One booking request after its shape, key and offer passed: what the hold would be. */
interface HoldRequest {
  req: BookingRequest;
  stay: ParsedOfferRequest;
  agentTotal: number;
  currency: string;
  propertyId: string | undefined;
  requestDigest: string;
  offerDigest: string;
  now: number;
}

class Desk<S> implements BookingDesk {
  readonly canonicalDomain: string;
  private readonly clock: Clock;
  private readonly limits: ReturnType<typeof limitsOf>;

  constructor(private readonly o: BookingDeskOptions<S>) {
    this.clock = o.clock ?? systemClock;
    this.limits = limitsOf(o);
    this.canonicalDomain = o.service.canonicalDomain;
  }

  admit(address: string): BookingRefused | null {
    const r = this.limits.limiter.take(address, this.clock.now());
    if (r.ok) return null;
    this.log('BOOKING_RATE_LIMITED', null, null);
    return refuse('BOOKING_RATE_LIMITED', 'too many booking requests from this address', { retry_after_seconds: r.retryAfterSeconds });
  }

  async request(input: unknown, address: string, session?: HoldSession): Promise<BookingAnswer> {
    const shape = BookingRequestSchema.safeParse(input);
    if (!shape.success) {
      this.log('BOOKING_BAD_REQUEST', null, null);
      return refuse('BOOKING_BAD_REQUEST', shapeMessage(shape.error.issues));
    }
    const req = shape.data;
    const requestDigest = canonicalSha256Hex(req);
    const offerDigest = sha256Hex(req.offer_jws);
    const earlier = await this.o.store.bookingByIdempotencyKey(req.idempotency_key);
    if (earlier) return this.replay(earlier, requestDigest);
    const now = this.clock.now();
    // A replay of an existing hold (above) is not a new hold: only a request that may create one is capped.
    const slot = this.limits.holdCap?.reserve(address, now);
    if (slot && !slot.ok) {
      this.log('BOOKING_TOO_MANY_HOLDS', null, offerDigest);
      return refuse('BOOKING_TOO_MANY_HOLDS', 'this address has made the most booking requests allowed in 24 hours', {
        retry_after_seconds: slot.retryAfterSeconds,
      });
    }
    let created = false;
    try {
      const a = await this.hold(req, requestDigest, offerDigest, now, session);
      created = a.status === 201;
      return a;
    } finally {
      if (slot && !created) slot.release();
    }
  }

  /** Check the offer, re-quote live and write the hold (or refuse, writing nothing). */
  private async hold(
    req: BookingRequest,
    requestDigest: string,
    offerDigest: string,
    now: number,
    session: HoldSession | undefined,
  ): Promise<BookingAnswer> {
    const check = checkOwnOffer(req.offer_jws, await this.o.service.jwks(), this.canonicalDomain, now);
    if (!check.ok) {
      this.log(check.code, null, offerDigest);
      return refuse(check.code, check.message);
    }
    const { offer, stay, agentTotal } = check;
    const h: HoldRequest = {
      req,
      stay,
      agentTotal,
      currency: offer.price.currency,
      propertyId: offer.property?.property_id,
      requestDigest,
      offerDigest,
      now,
    };
    const outcome = await this.o.store.createHold<BookingRefusal>(req.idempotency_key, now, (state) => this.decide(h, state), session);
    if (outcome.kind === 'existing') return this.replay(outcome.booking, requestDigest);
    if (outcome.kind === 'session_moved') {
      this.log('session_not_awaiting', null, offerDigest);
      return { ok: false, status: 409, error: { code: 'session_not_awaiting', message: 'the session no longer awaits this hold' } };
    }
    if (outcome.kind === 'refused') {
      const { code, message, current_offer_jws } = outcome.refusal;
      this.log(code, null, offerDigest);
      return refuse(code, message, current_offer_jws ? { current_offer_jws } : {});
    }
    this.log('created', outcome.booking.booking_id, offerDigest);
    this.o.onChange?.();
    return this.answer(outcome.booking, 201);
  }

  /** Inside the hold's transaction: the live re-quote of the signed stay from `state`, then the hold or the refusal. */
  private decide(h: HoldRequest, state: S): { hold: NewHold } | { refuse: BookingRefusal } {
    const quote = this.o.service.requote(state, h.stay);
    if (!quote.ok)
      return { refuse: { code: 'BOOKING_OFFER_NOT_BOOKABLE', message: `the stay cannot be requested any more (${quote.error.code})` } };
    const changed = changedTerms(quote, h);
    if (changed) return { refuse: changed };
    const { req, stay } = h;
    return {
      hold: {
        booking_id: `br_${randomBytes(12).toString('base64url')}`,
        idempotency_key: req.idempotency_key,
        request_sha256: h.requestDigest,
        offer_jws_sha256: h.offerDigest,
        property_id: quote.propertyId,
        check_in: stay.check_in,
        check_out: stay.check_out,
        guests: stay.guests,
        currency: quote.currency,
        total: h.agentTotal,
        guest_name: req.guest.name,
        guest_email: req.guest.email,
        guest_phone: req.guest.phone ?? null,
        hold_expires_at: new Date(h.now + this.limits.holdHours * 3_600_000).toISOString(),
      },
    };
  }

  /** The same idempotency key again: the same body gets the same booking, another body is a conflict. */
  private replay(b: BookingRequestRecord, requestDigest: string): BookingAnswer {
    if (b.request_sha256 !== requestDigest) {
      this.log('BOOKING_IDEMPOTENCY_CONFLICT', b.booking_id, null);
      return refuse('BOOKING_IDEMPOTENCY_CONFLICT', 'this idempotency_key was used with another request body');
    }
    this.log('replayed', b.booking_id, b.offer_jws_sha256);
    return this.answer(b, 200);
  }

  private answer(b: BookingRequestRecord, status: 200 | 201): BookingAnswer {
    const receipt_jws = signBookingReceipt(b, this.canonicalDomain, this.o.service.activeSigner(), this.clock.now());
    return { ok: true, status, body: { booking_request: bookingView(b), receipt_jws } };
  }

  private log(outcome: BookingLogEntry['outcome'], bookingId: string | null, offerDigest: string | null): void {
    this.o.log?.({ event: 'booking_request', outcome, booking_id: bookingId, offer_jws_sha256: offerDigest });
  }
}

export function createBookingDesk<S>(o: BookingDeskOptions<S>): BookingDesk {
  return new Desk(o);
}
