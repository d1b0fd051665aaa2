/**
 * UCP booking sessions (UCP Checkout: create, get, update, complete, cancel), each bound to one
 * offer this node signed. In order, a session:
 * - is created from an offer JWS (`checkOwnOffer`: this node's keys, its domain, unexpired, bookable
 *   as signed, then the live quote must still give the signed total) or from bare stay dates (the node
 *   quotes, and the session is bound to the offer it signed). A refusal writes nothing.
 * - is `incomplete` until it has the guest's email and name, then `requires_escalation`: the guest
 *   confirms on the host's own page (`continue_url`, guest.ts) with a code mailed to them; only that
 *   makes the hold (the booking desk's one transaction: live re-quote, then the dates blocked) and
 *   moves the session to `ready_for_complete`. Until then the session blocks no night.
 * - is `completed` by the agent (idempotent: a repeated complete answers with the same booking), or
 *   `canceled` (a hold it made is released at once).
 * Every transition is a compare-and-set on the session's status (ports.ts), so of two racing
 * operations one wins and the other answers from the state it lost to.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, sha256Hex, systemClock } from '@vrpkit/core';
import {
  type OfferPayload,
  type ParsedOfferRequest,
  readOfferPayload,
  type UcpBuyer,
  UcpCreateSessionSchema,
  type UcpMessage,
  type UcpSessionCode,
  UcpUpdateSessionSchema,
} from '@vrpkit/protocol';
import { checkOwnOffer } from '../booking/offer-check.js';
import type { BookingRequestRecord } from '../booking/ports.js';
import { signBookingReceipt } from '../booking/receipt.js';
import type { NodePublisher } from '../service/types.js';
import type { UcpSessionRecord, UcpSessionStore } from './ports.js';
import { checkoutView, errorMessage, errorResponseBody, missingBuyer } from './view.js';

/** UCP Checkout `expires_at`: "Default TTL is 6 hours from creation". */
export const DEFAULT_SESSION_HOURS = 6;

/** One answer of the session endpoints: the HTTP status and a UCP Checkout or error-response body. */
export interface UcpAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** The bookings a session's hold lives in (the node's `NodeStore`). */
export interface UcpHolds {
  bookingRequest(id: string): Promise<BookingRequestRecord | undefined>;
  /** Release a pending hold at once (the session was canceled). */
  decideHold(id: string, status: 'declined', now: number): Promise<unknown>;
}

export interface UcpSessionsOptions {
  service: Pick<NodePublisher, 'canonicalDomain' | 'origin' | 'jwks' | 'offer' | 'property' | 'activeSigner'>;
  store: UcpSessionStore & UcpHolds;
  clock?: Clock;
  sessionHours?: number;
}

/** A refusal with no session to show: the status from the code table, the body UCP's error response. */
export function refuseUcp(
  code: UcpSessionCode,
  content: string,
  status: number,
  severity: NonNullable<UcpMessage['severity']> = 'unrecoverable',
): UcpAnswer {
  return { status, body: errorResponseBody(errorMessage(code, content, severity)) };
}

const refuseOffer = (code: UcpSessionCode, content: string) => refuseUcp(code, content, 200);

/** The first schema issue as a message naming the field, never its value (it may be the guest's). */
function shapeMessage(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const first = issues[0];
  return `${first?.path.map(String).join('.') || 'body'}: ${first?.message ?? 'invalid'}`;
}

const OFFER_CODES = {
  BOOKING_OFFER_INVALID: 'offer_invalid',
  BOOKING_OFFER_EXPIRED: 'offer_expired',
  BOOKING_OFFER_NOT_BOOKABLE: 'offer_not_bookable',
} as const satisfies Record<string, UcpSessionCode>;

/** The signed offer a session will be bound to, with its stay and total. */
interface Binding {
  jws: string;
  offer: OfferPayload;
  stay: ParsedOfferRequest;
  total: number;
}

const buyerName = (b: UcpBuyer | undefined) => [b?.first_name, b?.last_name].filter(Boolean).join(' ') || null;

export class UcpSessions {
  private readonly clock: Clock;
  private readonly sessionMs: number;

  constructor(private readonly o: UcpSessionsOptions) {
    this.clock = o.clock ?? systemClock;
    this.sessionMs = (o.sessionHours ?? DEFAULT_SESSION_HOURS) * 3_600_000;
  }

  get canonicalDomain(): string {
    return this.o.service.canonicalDomain;
  }

  /** Create Checkout: bind the stay to a signed offer (or refuse, writing nothing), then the session. */
  async create(input: unknown): Promise<UcpAnswer> {
    const shape = UcpCreateSessionSchema.safeParse(input);
    if (!shape.success) return refuseUcp('invalid_request', shapeMessage(shape.error.issues), 400);
    const { buyer } = shape.data;
    const lodging = shape.data['dev.vrpkit.lodging'];
    const bound = 'offer_jws' in lodging ? await this.fromOffer(lodging.offer_jws) : await this.fromStay(lodging);
    if ('status' in bound) return bound;
    const now = this.clock.now();
    const session = {
      session_id: `ucs_${randomBytes(12).toString('base64url')}`,
      offer_jws: bound.jws,
      offer_jws_sha256: sha256Hex(bound.jws),
      property_id: bound.offer.property?.property_id ?? this.o.service.property().property_id,
      check_in: bound.stay.check_in,
      check_out: bound.stay.check_out,
      guests: bound.stay.guests,
      currency: bound.offer.price.currency,
      total: bound.total,
      buyer_email: buyer?.email ?? null,
      buyer_name: buyerName(buyer),
      expires_at: new Date(now + this.sessionMs).toISOString(),
    };
    const status = missingBuyer(session).length > 0 ? 'incomplete' : 'requires_escalation';
    const row = await this.o.store.insertUcpSession({ ...session, status }, now);
    return { status: 201, body: await this.view(row) };
  }

  /** Get Checkout. */
  async get(id: string): Promise<UcpAnswer> {
    const s = await this.o.store.ucpSession(id);
    return s ? { status: 200, body: await this.view(s) } : this.notFound();
  }

  /** Update Checkout: the buyer only (the stay is its signed offer's); allowed before the guest confirmed. */
  async update(id: string, input: unknown): Promise<UcpAnswer> {
    const shape = UcpUpdateSessionSchema.safeParse(input);
    if (!shape.success) return refuseUcp('invalid_request', shapeMessage(shape.error.issues), 400);
    const s = await this.o.store.ucpSession(id);
    if (!s) return this.notFound();
    const { buyer } = shape.data;
    const next = { buyer_email: buyer?.email ?? s.buyer_email, buyer_name: buyerName(buyer) ?? s.buyer_name };
    const status = missingBuyer(next).length > 0 ? 'incomplete' : 'requires_escalation';
    // A new email invalidates a code mailed to the old one.
    const change = {
      ...next,
      status,
      ...(next.buyer_email !== s.buyer_email ? { code_sha256: null, code_expires_at: null, code_attempts: 0 } : {}),
    } as const;
    const updated = await this.o.store.updateUcpSession(id, ['incomplete', 'requires_escalation'], change, this.clock.now());
    if (updated) return { status: 200, body: await this.view(updated) };
    return this.stateAnswer(id, 'invalid_status', 'the session can no longer be updated: the guest already confirmed, or it ended');
  }

  /** Complete Checkout: once the guest confirmed, the booking; again, the same booking (idempotent). */
  async complete(id: string): Promise<UcpAnswer> {
    const s = await this.o.store.ucpSession(id);
    if (!s) return this.notFound();
    if (s.status === 'completed') return { status: 200, body: await this.view(s) };
    if (s.status === 'incomplete' || s.status === 'requires_escalation') return { status: 200, body: await this.view(s) };
    if (s.status === 'canceled') return this.stateAnswer(id, 'invalid_status', 'the session was canceled');
    if (Date.parse(s.expires_at) <= this.clock.now())
      return this.stateAnswer(id, 'session_expired', 'the session expired before it was completed');
    const done = await this.o.store.updateUcpSession(id, ['ready_for_complete'], { status: 'completed' }, this.clock.now());
    // Lost a race: answer from what the winner left (another complete: the same booking; a cancel: canceled).
    return { status: 200, body: await this.view(done ?? ((await this.o.store.ucpSession(id)) as UcpSessionRecord)) };
  }

  /** Cancel Checkout: an open session ends; a hold it made is released at once. */
  async cancel(id: string): Promise<UcpAnswer> {
    const now = this.clock.now();
    const s = await this.o.store.updateUcpSession(
      id,
      ['incomplete', 'requires_escalation', 'ready_for_complete'],
      { status: 'canceled' },
      now,
    );
    if (!s) {
      const current = await this.o.store.ucpSession(id);
      if (!current) return this.notFound();
      if (current.status === 'canceled') return { status: 200, body: await this.view(current) };
      return this.stateAnswer(id, 'invalid_status', 'a completed session is not canceled here: the booking is the host’s to cancel');
    }
    if (s.booking_id) await this.o.store.decideHold(s.booking_id, 'declined', now);
    return { status: 200, body: await this.view(s) };
  }

  /** The session `id` as stored (the guest's page reads it through here). */
  session(id: string): Promise<UcpSessionRecord | undefined> {
    return this.o.store.ucpSession(id);
  }

  /** A session as UCP Checkout, with the booking receipt signed now once it is completed. */
  async view(s: UcpSessionRecord, extra: readonly UcpMessage[] = []): Promise<Record<string, unknown>> {
    const p = this.o.service.property();
    // The receipt is the completed session's (the agent verifies it at complete): no signature for any other answer or page.
    const booking = s.status === 'completed' && s.booking_id ? await this.o.store.bookingRequest(s.booking_id) : undefined;
    const receiptJws = booking
      ? signBookingReceipt(booking, this.canonicalDomain, this.o.service.activeSigner(), this.clock.now())
      : undefined;
    return checkoutView(
      s,
      { origin: this.o.service.origin, propertyName: p.name, propertyUrl: p.url, ...(receiptJws ? { receiptJws } : {}) },
      extra,
    );
  }

  private notFound(): UcpAnswer {
    return refuseUcp('not_found', 'no such checkout session', 404);
  }

  /** The session as it stands, with the message why the operation did not apply. */
  private async stateAnswer(id: string, code: UcpSessionCode, content: string): Promise<UcpAnswer> {
    const s = await this.o.store.ucpSession(id);
    if (!s) return this.notFound();
    return { status: 200, body: await this.view(s, [errorMessage(code, content, 'unrecoverable')]) };
  }

  /** An offer the agent verified: this node's, unexpired, bookable as signed, and still at its total now. */
  private async fromOffer(jws: string): Promise<Binding | UcpAnswer> {
    const check = checkOwnOffer(jws, await this.o.service.jwks(), this.canonicalDomain, this.clock.now());
    if (!check.ok) return refuseOffer(OFFER_CODES[check.code], check.message);
    const current = await this.currentOffer(check.stay);
    if ('status' in current) return current;
    const same = current.total === check.agentTotal && current.offer.price.currency === check.offer.price.currency;
    if (!same)
      return refuseOffer(
        'offer_changed',
        'the price or availability of the stay changed since the offer was signed: create the session from the stay dates to bind the current offer',
      );
    return { jws, offer: check.offer, stay: check.stay, total: check.agentTotal };
  }

  /** Bare stay dates: the node quotes them now and binds the session to the offer it signed. */
  private async fromStay(stay: { check_in: string; check_out: string; guests: number }): Promise<Binding | UcpAnswer> {
    const nights = Math.round((Date.parse(stay.check_out) - Date.parse(stay.check_in)) / 86_400_000);
    if (!(nights >= 1)) return refuseUcp('invalid_request', 'dev.vrpkit.lodging.check_out: must be after check_in', 400);
    return this.currentOffer({ ...stay, nights });
  }

  /** The offer the node signs for `stay` now, when it is an available, exactly priced, quotable stay. */
  private async currentOffer(stay: ParsedOfferRequest): Promise<Binding | UcpAnswer> {
    const outcome = await this.o.service.offer(stay);
    if (!outcome.ok) return refuseOffer('stay_not_quotable', `the node does not quote this stay (${outcome.error.code})`);
    const jws = outcome.envelope.signature.jws;
    // UCP's inventory-exhausted outcome: the stay is taken (a hold, a booking, another channel's calendar).
    if (!outcome.envelope.offer.availability.available) return refuseOffer('item_unavailable', 'the stay is no longer available');
    const check = checkOwnOffer(jws, await this.o.service.jwks(), this.canonicalDomain, this.clock.now());
    if (!check.ok) return refuseOffer('offer_not_bookable', 'the stay is not available at an exact price an agent may quote');
    const offer = readOfferPayload(outcome.envelope.offer) ?? check.offer;
    return { jws, offer, stay: check.stay, total: check.agentTotal };
  }
}
