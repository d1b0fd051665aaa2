/**
 * UCP Lodging booking sessions (`dev.ucp.lodging.booking`: create, get, update, complete, cancel),
 * each bound to one offer this node signed. In order, a session:
 * - names this node's property, its one accommodation type and rate plan, and one stay (dates, party);
 *   an unknown id, a party over capacity or a guest assignment to no guest is refused, writing nothing.
 * - is bound to an offer JWS under `dev.vrpkit.lodging` (`checkOwnOffer`: this node's keys, its domain,
 *   unexpired, bookable as signed; the request's dates and party must be the offer's; the live quote
 *   must still give the signed total) or, without one, to the offer the node signs for the stay's
 *   dates now (the answer carries it). A taken stay is UCP's `inventory_exhausted`. A refusal writes nothing.
 * - is `incomplete` until it has an identified lead (booker or primary guest with name and email), then
 *   `requires_escalation`: the guest confirms on the host's own page (`continue_url`, confirm.ts) with
 *   a code mailed to them; only that makes the hold (the booking desk's one transaction: live re-quote,
 *   then the dates blocked and the session moved to `ready_for_complete`). Until then the session
 *   blocks no night.
 * - is `completed` by the platform (idempotent: a repeated complete answers with the same booking and
 *   `confirmation`), or `canceled` (a hold it made is released at once).
 * Every transition is a compare-and-set on the session's status (ports.ts), so of two racing
 * operations one wins and the other answers from the state it lost to.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, sha256Hex, systemClock } from '@vrpkit/core';
import {
  type OfferPayload,
  type ParsedOfferRequest,
  readOfferPayload,
  UCP_LODGING_KEY,
  UCP_RATE_PLAN_ID,
  type UcpBookingRequest,
  UcpBookingRequestSchema,
  UcpCompleteRequestSchema,
  type UcpMessage,
  type UcpSessionCode,
  type UcpSessionStatus,
  ucpStayId,
} from '@vrpkit/protocol';
import type { BookingDesk } from '../booking/desk.js';
import { checkOwnOffer } from '../booking/offer-check.js';
import type { BookingRequestRecord } from '../booking/ports.js';
import { signBookingReceipt } from '../booking/receipt.js';
import type { NodePublisher, PropertyView } from '../service/types.js';
import { idempotent, type UcpAnswer, type UcpChangeOperation } from './idempotency.js';
import { leadOf, newSessionRow, type UcpIdempotencyStore, type UcpParty, type UcpSessionRecord, type UcpSessionStore } from './ports.js';
import { bookingView, errorMessage, errorResponseBody } from './view.js';

/** `expires_at` of a new session (Booking, Session Expiry: the business MAY set one; vrpkit keeps Checkout's 6 hours). */
export const DEFAULT_SESSION_HOURS = 6;

/** The statuses a session can still be canceled from (Booking, Cancel Booking Session: a completed one is the host's booking). */
const OPEN_STATUSES: readonly UcpSessionStatus[] = ['incomplete', 'requires_escalation', 'ready_for_complete'];

export type { UcpAnswer } from './idempotency.js';

/**
 * One session operation as a binding received it (REST: the route, the body, the headers; MCP: the
 * tool's `id`, `booking` and `meta`), after the binding checked its own metadata (UCP-Agent).
 */
export type UcpCall =
  | { operation: 'get'; id: string }
  | {
      operation: UcpChangeOperation;
      /** The session, for all but Create. */
      id?: string;
      body: unknown;
      /** `Idempotency-Key` (REST header, MCP `meta["idempotency-key"]`), a UUID when sent. */
      idempotencyKey?: string;
      /** SHA-256 (hex) of the request as its binding defines it, compared for a repeated key. */
      requestSha256: string;
    };

/** The bookings a session's hold lives in (the node's `NodeStore`). */
export interface UcpHolds {
  bookingRequest(id: string): Promise<BookingRequestRecord | undefined>;
  /** Release a pending hold at once (the session was canceled). */
  decideHold(id: string, status: 'declined', now: number): Promise<unknown>;
}

export interface UcpSessionsOptions {
  service: Pick<NodePublisher, 'canonicalDomain' | 'origin' | 'jwks' | 'offer' | 'property' | 'activeSigner'>;
  store: UcpSessionStore & UcpHolds & UcpIdempotencyStore;
  clock?: Clock;
  sessionHours?: number;
}

/** A refusal with no session to show: the status from the code table, the body UCP's error response. */
export function refuseUcp(
  code: UcpSessionCode,
  content: string,
  status: number,
  severity: NonNullable<UcpMessage['severity']> = 'unrecoverable',
  path?: string,
): UcpAnswer {
  return { status, body: errorResponseBody(errorMessage(code, content, severity, path)) };
}

/**
 * One request counted against the booking rate limit per client address: null when admitted, else
 * 429 `too_many_requests` with the seconds until the window ends (Overview, Error Codes: a rate
 * limited request carries when to retry).
 */
export function admitUcp(desk: Pick<BookingDesk, 'admit'>, address: string): UcpAnswer | null {
  const limited = desk.admit(address);
  if (!limited) return null;
  const seconds = limited.ok ? undefined : limited.error.retry_after_seconds;
  return {
    ...refuseUcp('too_many_requests', 'too many requests from this address', 429),
    ...(seconds ? { retryAfterSeconds: seconds } : {}),
  };
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

/** The party a request carries, as it will be stored and echoed (its members exactly as sent). */
function partyOf(r: UcpBookingRequest): UcpParty {
  const stay = r.stays[0];
  return {
    ...(r.booker ? { booker: r.booker } : {}),
    ...(r.guests ? { guests: r.guests } : {}),
    ...(r.travel_purpose ? { travel_purpose: r.travel_purpose } : {}),
    ...(stay.occupancy ? { occupancy: stay.occupancy } : {}),
    ...(stay.guest_assignments ? { guest_assignments: stay.guest_assignments } : {}),
  };
}

/** The lead's columns and the status a session with `party` is in before the guest confirmed. */
function leadColumns(party: UcpParty) {
  const lead = leadOf(party);
  return {
    buyer_email: lead?.email ?? null,
    buyer_name: lead?.name ?? null,
    party_json: JSON.stringify(party),
    status: lead ? ('requires_escalation' as const) : ('incomplete' as const),
  };
}

/**
 * What a request names and asks that this node refuses before quoting: another property or stay
 * (Platform guidelines: ids from discovery), more guests than the accommodation holds (Business
 * guidelines, capacity; Standard Errors `occupancy_exceeded_capacity`), a guest assignment to no guest.
 */
function requestRefusal(r: UcpBookingRequest, p: PropertyView): { code: UcpSessionCode; content: string; path: string } | undefined {
  const stay = r.stays[0];
  if (r.property.id !== p.property_id) return { code: 'stay_not_found', content: 'this host has no such property', path: '$.property.id' };
  const idOk = stay.id === undefined || stay.id === ucpStayId(p.property_id);
  const typeOk = stay.accommodation_type === undefined || stay.accommodation_type.id === p.property_id;
  const planOk = stay.rate_plan === undefined || stay.rate_plan.id === UCP_RATE_PLAN_ID;
  if (!idOk || !typeOk || !planOk)
    return { code: 'stay_not_found', content: 'this host has no such stay, accommodation type or rate plan', path: '$.stays[0]' };
  const o = stay.occupancy;
  if (o && ((o.adults ?? 0) + (o.children ?? 0) > o.total || o.total > p.max_guests))
    return {
      code: 'occupancy_exceeded_capacity',
      content: `the accommodation holds at most ${p.max_guests} guests (occupancy.total is the whole party)`,
      path: '$.stays[0].occupancy',
    };
  const ids = new Set((r.guests ?? []).map((g) => g.id));
  const unknown = (stay.guest_assignments ?? []).findIndex((a) => !ids.has(a.guest_id));
  if (unknown >= 0)
    return {
      code: 'guest_not_found',
      content: 'a guest assignment names a guest id that guests[] does not hold',
      path: `$.stays[0].guest_assignments[${unknown}]`,
    };
  return undefined;
}

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

  /** One operation of either binding, through its `Idempotency-Key` when it sent one (idempotency.ts). */
  run(call: UcpCall): Promise<UcpAnswer> {
    if (call.operation === 'get') return this.get(call.id);
    const id = call.id ?? '';
    const perform = (claim?: string) => {
      if (call.operation === 'create') return this.create(call.body, claim);
      if (call.operation === 'update') return this.update(id, call.body);
      if (call.operation === 'complete') return this.complete(id, call.body);
      return this.cancel(id);
    };
    if (call.idempotencyKey === undefined) return perform();
    const scope = call.operation === 'create' ? `business:${this.canonicalDomain}` : `session:${id}`;
    return idempotent(
      this.o.store,
      { scope, operation: call.operation, key: call.idempotencyKey, requestSha256: call.requestSha256 },
      this.clock.now(),
      (code, content) => refuseUcp(code, content, 409),
      perform,
    );
  }

  /**
   * Create Booking Session: check what is named, bind the stay to a signed offer (or refuse, writing
   * nothing), then the session; with `claim` (a claimed Idempotency-Key) its answer is stored with the
   * session in one transaction, so a failure leaves neither (a retry creates it once) and never a
   * session whose key a retry would run again.
   */
  async create(input: unknown, claim?: string): Promise<UcpAnswer> {
    const shape = UcpBookingRequestSchema.safeParse(input);
    if (!shape.success) return refuseUcp('invalid_request', shapeMessage(shape.error.issues), 400);
    const r = shape.data;
    const refused = requestRefusal(r, this.o.service.property());
    if (refused) return refuseUcp(refused.code, refused.content, 200, 'recoverable', refused.path);
    const stay = r.stays[0];
    const jws = r[UCP_LODGING_KEY]?.offer_jws;
    const bound = jws ? await this.fromOffer(jws, stay) : await this.fromStay(stay);
    if ('status' in bound) return bound;
    const now = this.clock.now();
    const party = partyOf(r);
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
      expires_at: new Date(now + this.sessionMs).toISOString(),
      ...leadColumns(party),
    };
    const body = await this.view(newSessionRow(session, now));
    await this.o.store.insertUcpSession(
      session,
      now,
      claim === undefined ? undefined : { id: claim, status: 201, json: JSON.stringify(body) },
    );
    return { status: 201, body, applied: true, settled: claim !== undefined };
  }

  /** Get Booking Session. */
  async get(id: string): Promise<UcpAnswer> {
    const s = await this.o.store.ucpSession(id);
    return s ? { status: 200, body: await this.view(s) } : this.notFound();
  }

  /**
   * Update Booking Session (a full replacement): the party may change; the stay may not (it is its
   * signed offer's: another stay is another session). Allowed before the guest confirmed; otherwise,
   * and for any refusal, the session unchanged with the message why (REST binding, Update).
   */
  async update(id: string, input: unknown): Promise<UcpAnswer> {
    const shape = UcpBookingRequestSchema.safeParse(input);
    if (!shape.success) return refuseUcp('invalid_request', shapeMessage(shape.error.issues), 400);
    const s = await this.o.store.ucpSession(id);
    if (!s) return this.notFound();
    const r = shape.data;
    const refused = requestRefusal(r, this.o.service.property());
    if (refused) return this.stateAnswer(id, refused.code, refused.content, 'recoverable', refused.path);
    const stay = r.stays[0];
    const jws = r[UCP_LODGING_KEY]?.offer_jws;
    const same =
      stay.stay_dates.start_date === s.check_in &&
      stay.stay_dates.end_date === s.check_out &&
      (stay.occupancy === undefined || stay.occupancy.total === Number(s.guests)) &&
      (jws === undefined || jws === s.offer_jws);
    if (!same)
      return this.stateAnswer(
        id,
        'stay_immutable',
        'the stay (dates, party size, offer) is the signed offer’s: create a new session for another stay',
        'recoverable',
        '$.stays[0]',
      );
    const next = leadColumns(partyOf(r));
    // A new email invalidates a code mailed to the old one.
    const change = {
      ...next,
      ...(next.buyer_email !== s.buyer_email ? { code_sha256: null, code_expires_at: null, code_attempts: 0 } : {}),
    };
    const updated = await this.o.store.updateUcpSession(id, ['incomplete', 'requires_escalation'], change, this.clock.now());
    if (updated) return { status: 200, body: await this.view(updated), applied: true };
    return this.stateAnswer(id, 'invalid_status', 'the session can no longer be updated: the guest already confirmed, or it ended');
  }

  /**
   * Complete Booking Session: `payment` is required (`payment: {}` here: the host is paid at the
   * property); once the guest confirmed, the booking; again, the same booking (idempotent).
   */
  async complete(id: string, input: unknown): Promise<UcpAnswer> {
    const shape = UcpCompleteRequestSchema.safeParse(input);
    if (!shape.success) return refuseUcp('invalid_request', shapeMessage(shape.error.issues), 400);
    const s = await this.o.store.ucpSession(id);
    if (!s) return this.notFound();
    if (s.status === 'completed') return { status: 200, body: await this.view(s), applied: true };
    if (s.status === 'incomplete' || s.status === 'requires_escalation') return { status: 200, body: await this.view(s) };
    if (s.status === 'canceled') return this.stateAnswer(id, 'invalid_status', 'the session was canceled');
    if (Date.parse(s.expires_at) <= this.clock.now())
      return this.stateAnswer(id, 'session_expired', 'the session expired before it was completed');
    // The hold the guest's confirmation made must still stand: a hold the host declined or that expired books nothing.
    const hold = s.booking_id ? await this.o.store.bookingRequest(s.booking_id) : undefined;
    if (!hold || (hold.status !== 'pending' && hold.status !== 'confirmed'))
      return this.stateAnswer(id, 'hold_released', 'the host declined the hold or it expired: create a new session for this stay');
    const done = await this.o.store.updateUcpSession(id, ['ready_for_complete'], { status: 'completed' }, this.clock.now());
    // Lost a race: answer from what the winner left (another complete: the same booking; a cancel: canceled).
    const now = done ?? ((await this.o.store.ucpSession(id)) as UcpSessionRecord);
    return { status: 200, body: await this.view(now), applied: now.status === 'completed' };
  }

  /**
   * Cancel Booking Session: an open session ends; a hold it made is released at once. The hold
   * is released before the session ends, then again from what the session's end read (a guest's
   * confirmation may have made one in between): a crash between the two writes leaves an open
   * session whose hold is released, which Complete refuses (`hold_released`) and a retried cancel
   * ends, never a canceled session whose hold keeps its nights until it lapses.
   */
  async cancel(id: string): Promise<UcpAnswer> {
    const now = this.clock.now();
    const before = await this.o.store.ucpSession(id);
    if (before?.booking_id && OPEN_STATUSES.includes(before.status)) await this.o.store.decideHold(before.booking_id, 'declined', now);
    const s = await this.o.store.updateUcpSession(id, OPEN_STATUSES, { status: 'canceled' }, now);
    if (!s) {
      const current = await this.o.store.ucpSession(id);
      if (!current) return this.notFound();
      if (current.status === 'canceled') return { status: 200, body: await this.view(current), applied: true };
      return this.stateAnswer(id, 'invalid_status', 'a completed session is not canceled here: the booking is the host’s to cancel');
    }
    if (s.booking_id && s.booking_id !== before?.booking_id) await this.o.store.decideHold(s.booking_id, 'declined', now);
    return { status: 200, body: await this.view(s), applied: true };
  }

  /** The session `id` as stored (the guest's page reads it through here). */
  session(id: string): Promise<UcpSessionRecord | undefined> {
    return this.o.store.ucpSession(id);
  }

  /** A session as a UCP Lodging booking, with the booking receipt signed now once it is completed. */
  async view(s: UcpSessionRecord, extra: readonly UcpMessage[] = []): Promise<Record<string, unknown>> {
    // The receipt is the completed session's (the agent verifies it at complete): no signature for any other answer or page.
    const booking = s.status === 'completed' && s.booking_id ? await this.o.store.bookingRequest(s.booking_id) : undefined;
    const receiptJws = booking
      ? signBookingReceipt(booking, this.canonicalDomain, this.o.service.activeSigner(), this.clock.now())
      : undefined;
    const ctx = { origin: this.o.service.origin, property: this.o.service.property(), now: this.clock.now() };
    return bookingView(s, { ...ctx, ...(receiptJws ? { receiptJws } : {}) }, extra);
  }

  private notFound(): UcpAnswer {
    return refuseUcp('not_found', 'no such booking session', 404);
  }

  /** The session as it stands, with the message why the operation did not apply. */
  private async stateAnswer(
    id: string,
    code: UcpSessionCode,
    content: string,
    severity: NonNullable<UcpMessage['severity']> = 'unrecoverable',
    path?: string,
  ): Promise<UcpAnswer> {
    const s = await this.o.store.ucpSession(id);
    if (!s) return this.notFound();
    return { status: 200, body: await this.view(s, [errorMessage(code, content, severity, path)]) };
  }

  /** An offer the agent verified: this node's, unexpired, bookable as signed, for the stay asked, and still at its total now. */
  private async fromOffer(jws: string, stay: UcpBookingRequest['stays'][0]): Promise<Binding | UcpAnswer> {
    const check = checkOwnOffer(jws, await this.o.service.jwks(), this.canonicalDomain, this.clock.now());
    if (!check.ok) return refuseOffer(OFFER_CODES[check.code], check.message);
    const asked =
      stay.stay_dates.start_date === check.stay.check_in &&
      stay.stay_dates.end_date === check.stay.check_out &&
      (stay.occupancy === undefined || stay.occupancy.total === check.stay.guests);
    if (!asked) return refuseOffer('offer_mismatch', 'the stay dates or the party size are not the signed offer’s');
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
  private async fromStay(stay: UcpBookingRequest['stays'][0]): Promise<Binding | UcpAnswer> {
    const { start_date: check_in, end_date: check_out } = stay.stay_dates;
    const nights = Math.round((Date.parse(check_out) - Date.parse(check_in)) / 86_400_000);
    if (!(nights >= 1)) return refuseUcp('invalid_request', 'stays.0.stay_dates.end_date: must be after start_date', 400);
    if (!stay.occupancy) return refuseUcp('invalid_request', 'stays.0.occupancy: required without a signed offer', 400);
    return this.currentOffer({ check_in, check_out, guests: stay.occupancy.total, nights });
  }

  /** The offer the node signs for `stay` now, when it is an available, exactly priced, quotable stay. */
  private async currentOffer(stay: ParsedOfferRequest): Promise<Binding | UcpAnswer> {
    const outcome = await this.o.service.offer(stay);
    if (!outcome.ok) return refuseOffer('stay_not_quotable', `the node does not quote this stay (${outcome.error.code})`);
    const jws = outcome.envelope.signature.jws;
    // Booking, Standard Errors: the stay is taken (a hold, a booking, another channel's calendar).
    if (!outcome.envelope.offer.availability.available) return refuseOffer('inventory_exhausted', 'the stay is no longer available');
    const check = checkOwnOffer(jws, await this.o.service.jwks(), this.canonicalDomain, this.clock.now());
    if (!check.ok) return refuseOffer('offer_not_bookable', 'the stay is not available at an exact price an agent may quote');
    const offer = readOfferPayload(outcome.envelope.offer) ?? check.offer;
    return { jws, offer, stay: check.stay, total: check.agentTotal };
  }
}
