/**
 * A session as a UCP Lodging booking (`lodging/booking.json` with the cancellation-policy extension):
 * the `ucp` envelope, the one `property`, the one `stays[]` entry (the accommodation type, the rate
 * plan, the dates, the party and the stay's totals), the party as the platform sent it (`booker`,
 * `guests[]` with their ids unchanged), `totals[]`, `payment.terms`, `policies[]`, `links[]`,
 * `messages[]`, `continue_url` while the session is open, `confirmation` once completed, and the
 * signed offer (and then the signed booking receipt) under `dev.vrpkit.lodging`. Everything priced
 * comes from the bound offer's signed payload (terms.ts).
 */
import { jwsPayloadJson, parseCompactJws } from '@vrpkit/core';
import {
  type OfferPayload,
  readOfferPayload,
  UCP_BOOKING_CAPABILITY,
  UCP_CANCELLATION_POLICY_TYPE,
  UCP_CONTINUE_PATH,
  UCP_LODGING_KEY,
  UCP_RATE_PLAN_ID,
  UCP_VERSION,
  type UcpMessage,
  type UcpSessionCode,
  ucpStayId,
} from '@vrpkit/protocol';
import type { PropertyView } from '../service/types.js';
import { legalLinks } from './legal.js';
import { leadOf, type UcpParty, type UcpSessionRecord } from './ports.js';
import { atPropertyDisclosure, cancellationTerms, offerTotals, paymentTerms } from './terms.js';

/** The `ucp` member of every booking response (`ucp.json#/$defs/response_booking_schema`). */
export const BOOKING_ENVELOPE = {
  version: UCP_VERSION,
  capabilities: {
    [UCP_BOOKING_CAPABILITY]: [{ version: UCP_VERSION }],
    [UCP_CANCELLATION_POLICY_TYPE]: [{ version: UCP_VERSION, extends: UCP_BOOKING_CAPABILITY }],
  },
  // The node takes no payment: the host collects at the property (terms.ts).
  payment_handlers: {},
};

/** The signed payload of an offer JWS the node already checked when the session was made. */
export function boundOffer(offerJws: string): OfferPayload {
  const parsed = parseCompactJws(offerJws);
  const offer = parsed.ok ? readOfferPayload(jwsPayloadJson(parsed.jws)) : null;
  // A stored session's offer passed checkOwnOffer before the row was written: anything else is a corrupted store.
  if (!offer) throw new Error('a stored UCP session holds an offer that does not parse');
  return offer;
}

/** A refusal as a UCP error message with its stable code. */
export function errorMessage(
  code: UcpSessionCode,
  content: string,
  severity: NonNullable<UcpMessage['severity']>,
  path?: string,
): UcpMessage {
  return { type: 'error', code, content, severity, ...(path ? { path } : {}) };
}

/** The guest's page for session `id` on the node's own origin. */
export const continueUrl = (origin: string, id: string) => `${origin}${UCP_CONTINUE_PATH}/${encodeURIComponent(id)}`;

/** The stored party (`party_json`): what the platform last sent, kept as sent. */
export const partyOf = (s: Pick<UcpSessionRecord, 'party_json'>): UcpParty => (s.party_json ? (JSON.parse(s.party_json) as UcpParty) : {});

/**
 * What the session needs before the guest can confirm (Business guidelines: no `ready_for_complete`
 * without an identified lead): a booker, or a primary guest, with a full name and an email (the
 * one-time code goes there).
 */
export function missingLead(party: UcpParty): UcpMessage[] {
  if (leadOf(party)) return [];
  return [
    errorMessage(
      'missing',
      'The lead guest is required: a booker (or a guest assigned as primary) with first name, last name and email',
      'recoverable',
      '$.booker',
    ),
  ];
}

/** The messages a session carries in its status, before any the operation adds. */
function statusMessages(s: UcpSessionRecord): UcpMessage[] {
  if (s.status === 'incomplete') return missingLead(partyOf(s));
  if (s.status === 'requires_escalation')
    return [
      errorMessage(
        'guest_confirmation_required',
        'The guest reviews the stay and confirms with a code sent to their email on the host’s page (continue_url); no night is held before that.',
        'requires_buyer_review',
      ),
    ];
  // The host declined the hold the guest's confirmation made (`vrp node bookings decline --reason`): why, as the host wrote it.
  if (s.status === 'canceled' && s.cancel_reason)
    return [{ type: 'info', code: 'declined_by_host', content: `The host declined this stay: ${s.cancel_reason}` }];
  return [];
}

/** The property as the session shows it (`lodging/types/property.json`: id, name, address). */
export function propertyView(p: PropertyView): Record<string, unknown> {
  const address = { ...(p.city ? { address_locality: p.city } : {}), ...(p.country ? { address_country: p.country } : {}) };
  return { id: p.property_id, name: p.name, ...(Object.keys(address).length > 0 ? { address } : {}) };
}

/** The node's one accommodation type (its id is the property id) and its capacity (Core VRP `max_guests`). */
export const accommodationType = (p: PropertyView) => ({
  id: p.property_id,
  title: p.name,
  capacity: { adults: p.max_guests, total: p.max_guests },
});

/** The node's one rate plan; its title and description state the material terms (Business guidelines). */
export const ratePlan = (p: PropertyView) => ({
  id: UCP_RATE_PLAN_ID,
  title: 'Standard rate, paid to the host at the property',
  description: `The host is paid at ${p.name} on arrival; nothing is charged when you book. Cancellation terms are in the session's policies.`,
});

export interface SessionViewContext {
  origin: string;
  property: PropertyView;
  now: number;
  /** The signed booking receipt, once the session is completed. */
  receiptJws?: string;
}

/** Session `s` as a UCP Lodging booking response, with `extra` messages after those of its status. */
export function bookingView(s: UcpSessionRecord, ctx: SessionViewContext, extra: readonly UcpMessage[] = []): Record<string, unknown> {
  const offer = boundOffer(s.offer_jws);
  const total = Number(s.total);
  const totals = offerTotals(offer, total);
  const party = partyOf(s);
  const cancellation = cancellationTerms(offer, { check_in: s.check_in, time_zone: ctx.property.time_zone }, ctx.now);
  const open = s.status === 'incomplete' || s.status === 'requires_escalation' || s.status === 'ready_for_complete';
  const page = continueUrl(ctx.origin, s.session_id);
  return {
    ucp: BOOKING_ENVELOPE,
    id: s.session_id,
    status: s.status,
    property: propertyView(ctx.property),
    stays: [
      {
        id: ucpStayId(s.property_id),
        accommodation_type: accommodationType(ctx.property),
        rate_plan: ratePlan(ctx.property),
        occupancy: party.occupancy ?? { total: Number(s.guests) },
        stay_dates: { start_date: s.check_in, end_date: s.check_out },
        ...(party.guest_assignments ? { guest_assignments: party.guest_assignments } : {}),
        totals,
      },
    ],
    ...(party.booker ? { booker: party.booker } : {}),
    ...(party.guests ? { guests: party.guests } : {}),
    ...(party.travel_purpose ? { travel_purpose: party.travel_purpose } : {}),
    currency: s.currency,
    totals,
    payment: paymentTerms(offer, total, s.check_in),
    policies: [{ ...cancellation.policy, applies_to: ['$.stays[0]'], url: `${page}#cancellation` }],
    links: [
      ...legalLinks(ctx.property, ctx.origin),
      { type: 'cancellation_policy', url: `${page}#cancellation` },
      { type: 'dev.vrpkit.property', url: ctx.property.url, title: ctx.property.name },
    ],
    messages: [...statusMessages(s), ...extra, cancellation.warning, atPropertyDisclosure(offer, s.check_in)],
    expires_at: s.expires_at,
    // Continue URL, Availability: on every non-terminal status, omitted on terminal ones.
    ...(open ? { continue_url: page } : {}),
    ...(s.status === 'completed' && s.booking_id ? { confirmation: { id: s.booking_id, permalink_url: page } } : {}),
    [UCP_LODGING_KEY]: {
      offer_jws: s.offer_jws,
      offer_jws_sha256: s.offer_jws_sha256,
      ...(s.booking_id ? { booking_id: s.booking_id } : {}),
      ...(ctx.receiptJws ? { booking_receipt_jws: ctx.receiptJws } : {}),
    },
  };
}

/** No session exists to show (UCP `common/types/error_response.json`): the refusal alone. */
export function errorResponseBody(message: UcpMessage): Record<string, unknown> {
  return { ucp: { version: UCP_VERSION, status: 'error' }, messages: [message] };
}
