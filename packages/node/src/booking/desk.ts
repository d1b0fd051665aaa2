/**
 * The booking desk: the node's one handler for booking requests (vrpkit booking-request
 * extension), behind `POST /api/booking-requests` and the `/book` page's form alike. In order:
 * the request's shape (`BookingRequestSchema`), the idempotency key, the offer JWS (`checkOwnOffer`),
 * then the live re-quote and the hold in one store transaction (`NodeStore.createHold`). Every
 * refusal writes nothing. Logs carry ids and digests, never the guest's details.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, canonicalSha256Hex, sha256Hex, systemClock } from '@vrpkit/core';
import {
  BOOKING_ERRORS,
  type BookingErrorCode,
  type BookingRequest,
  BookingRequestSchema,
  type BookingResponse,
  type OfferRequestInput,
} from '@vrpkit/protocol';
import { NodeError } from '../errors.js';
import type { NodePublisher } from '../service.js';
import type { BookingRequestRecord, NodeStore } from '../store/store.js';
import { checkOwnOffer } from './offer-check.js';
import { createHoldCap, createRateLimiter, DEFAULT_BOOKING_HOLDS_PER_DAY, DEFAULT_BOOKING_RATE_LIMIT } from './rate-limit.js';
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

export type BookingAnswer = { ok: true; status: 200 | 201; body: BookingResponse } | { ok: false; status: number; error: BookingRefusal };

/** One log line per booking decision: ids and digests only. */
export interface BookingLogEntry {
  event: 'booking_request';
  outcome: 'created' | 'replayed' | BookingErrorCode;
  booking_id: string | null;
  offer_jws_sha256: string | null;
}

export interface BookingDeskOptions {
  service: NodePublisher;
  store: NodeStore;
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
  admit(address: string): BookingAnswer | null;
  /** Decide one booking request body (already parsed from JSON or the page's form) from client `address`. */
  request(input: unknown, address: string): Promise<BookingAnswer>;
}

function refuse(code: BookingErrorCode, message: string, extra: Partial<BookingRefusal> = {}): BookingAnswer {
  return { ok: false, status: BOOKING_ERRORS[code], error: { code, message, ...extra } };
}

/** The first schema issue as a message naming the field (never its value: it may be the guest's). */
function shapeMessage(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const first = issues[0];
  const field = first?.path.map(String).join('.') || 'body';
  return `${field}: ${first?.message ?? 'invalid'}`;
}

export function createBookingDesk(o: BookingDeskOptions): BookingDesk {
  const { service, store } = o;
  const clock = o.clock ?? systemClock;
  const holdHours = o.holdHours ?? DEFAULT_HOLD_HOURS;
  if (!(holdHours > 0 && holdHours <= MAX_HOLD_HOURS))
    throw new NodeError('invalid_hold_hours', `the hold time is more than 0 and at most ${MAX_HOLD_HOURS} hours`);
  const perMinute = o.rateLimitPerMinute ?? DEFAULT_BOOKING_RATE_LIMIT;
  if (!Number.isInteger(perMinute) || perMinute < 1)
    throw new NodeError('invalid_booking_rate_limit', 'the booking rate limit is a positive integer (requests per minute)');
  const limiter = createRateLimiter(perMinute);
  const holdsPerDay = o.holdsPerDay ?? DEFAULT_BOOKING_HOLDS_PER_DAY;
  if (!Number.isInteger(holdsPerDay) || holdsPerDay < 0)
    throw new NodeError('invalid_booking_holds_per_day', 'the holds per day are a whole number (0 = no cap)');
  const holdCap = holdsPerDay > 0 ? createHoldCap(holdsPerDay) : null;
  const domain = service.canonicalDomain;

  const log = (outcome: BookingLogEntry['outcome'], bookingId: string | null, offerDigest: string | null) =>
    o.log?.({ event: 'booking_request', outcome, booking_id: bookingId, offer_jws_sha256: offerDigest });

  const answer = (b: BookingRequestRecord, status: 200 | 201): BookingAnswer => ({
    ok: true,
    status,
    body: { booking_request: bookingView(b), receipt_jws: signBookingReceipt(b, domain, service.activeSigner(), clock.now()) },
  });

  /** The same idempotency key again: the same body gets the same booking, another body is a conflict. */
  const replay = (b: BookingRequestRecord, requestDigest: string): BookingAnswer => {
    if (b.request_sha256 !== requestDigest) {
      log('BOOKING_IDEMPOTENCY_CONFLICT', b.booking_id, null);
      return refuse('BOOKING_IDEMPOTENCY_CONFLICT', 'this idempotency_key was used with another request body');
    }
    log('replayed', b.booking_id, b.offer_jws_sha256);
    return answer(b, 200);
  };

  async function request(input: unknown, address: string): Promise<BookingAnswer> {
    const shape = BookingRequestSchema.safeParse(input);
    if (!shape.success) {
      log('BOOKING_BAD_REQUEST', null, null);
      return refuse('BOOKING_BAD_REQUEST', shapeMessage(shape.error.issues));
    }
    const req: BookingRequest = shape.data;
    const requestDigest = canonicalSha256Hex(req);
    const offerDigest = sha256Hex(req.offer_jws);
    const earlier = await store.bookingByIdempotencyKey(req.idempotency_key);
    if (earlier) return replay(earlier, requestDigest);

    const now = clock.now();
    // A replay of an existing hold (above) is not a new hold: only a request that may create one is capped.
    const slot = holdCap?.reserve(address, now);
    if (slot && !slot.ok) {
      log('BOOKING_TOO_MANY_HOLDS', null, offerDigest);
      return refuse('BOOKING_TOO_MANY_HOLDS', 'this address has made the most booking requests allowed in 24 hours', {
        retry_after_seconds: slot.retryAfterSeconds,
      });
    }
    let created = false;
    try {
      const a = await hold(req, requestDigest, offerDigest, now);
      created = a.status === 201;
      return a;
    } finally {
      if (slot && !created) slot.release();
    }
  }

  /** Check the offer, re-quote live and write the hold (or refuse, writing nothing). */
  async function hold(req: BookingRequest, requestDigest: string, offerDigest: string, now: number): Promise<BookingAnswer> {
    const check = checkOwnOffer(req.offer_jws, await service.jwks(), domain, now);
    if (!check.ok) {
      log(check.code, null, offerDigest);
      return refuse(check.code, check.message);
    }
    const { offer, agentTotal } = check;
    const stay: OfferRequestInput = {
      check_in: offer.request.check_in,
      check_out: offer.request.check_out,
      guests: offer.request.guests,
      ...(offer.request.language ? { language: offer.request.language } : {}),
    };
    const bookingId = `br_${randomBytes(12).toString('base64url')}`;
    const outcome = await store.createHold<BookingRefusal>(req.idempotency_key, now, (state) => {
      // The live re-quote: what the node would sign for this stay now, from the state the hold is written against.
      const fresh = service.quoteFrom(state, stay);
      if (!fresh.ok)
        return { refuse: { code: 'BOOKING_OFFER_NOT_BOOKABLE', message: `the stay cannot be requested any more (${fresh.error.code})` } };
      const f = fresh.envelope.offer;
      const same =
        f.availability.available &&
        f.agent_permission.may_quote_as_official_direct_offer &&
        f.price.agent_total === agentTotal &&
        f.price.currency === offer.price.currency &&
        f.property?.property_id === offer.property?.property_id;
      if (!same)
        return {
          refuse: {
            code: 'BOOKING_OFFER_CHANGED',
            message: f.availability.available ? 'the price of the stay changed' : 'the stay is no longer available',
            current_offer_jws: fresh.envelope.signature.jws,
          },
        };
      return {
        hold: {
          booking_id: bookingId,
          idempotency_key: req.idempotency_key,
          request_sha256: requestDigest,
          offer_jws_sha256: offerDigest,
          property_id: state.property.property_id,
          check_in: stay.check_in as string,
          check_out: stay.check_out as string,
          guests: offer.request.guests,
          currency: f.price.currency,
          total: agentTotal,
          guest_name: req.guest.name,
          guest_email: req.guest.email,
          guest_phone: req.guest.phone ?? null,
          hold_expires_at: new Date(now + holdHours * 3_600_000).toISOString(),
        },
      };
    });
    if (outcome.kind === 'existing') return replay(outcome.booking, requestDigest);
    if (outcome.kind === 'refused') {
      const { code, message, current_offer_jws } = outcome.refusal;
      log(code, null, offerDigest);
      return refuse(code, message, current_offer_jws ? { current_offer_jws } : {});
    }
    log('created', outcome.booking.booking_id, offerDigest);
    o.onChange?.();
    return answer(outcome.booking, 201);
  }

  return {
    canonicalDomain: domain,
    admit(address) {
      const r = limiter.take(address, clock.now());
      if (r.ok) return null;
      log('BOOKING_RATE_LIMITED', null, null);
      return refuse('BOOKING_RATE_LIMITED', 'too many booking requests from this address', { retry_after_seconds: r.retryAfterSeconds });
    },
    request,
  };
}
