/**
 * The signed verified stay offer (Core VRP v0.1 §5). `buildOfferPayload` is pure; `signOffer` signs the
 * exact bytes of `JSON.stringify(offer)` (Core VRP v0.1 §5 and the offer vectors: the payload is the offer as serialised, not JCS) and builds the response
 * body around those same bytes, so the envelope's `offer` is byte-identical to the JWS payload.
 */
import type { JwsSigner } from '@vrpkit/core';
import { toUtcSecond } from '@vrpkit/core';
import {
  type AltWindow,
  type CalendarFreshness,
  ENVELOPE_KIND,
  OFFER_KIND,
  type OfferEnvelope,
  type OfferPayload,
  type OfferPrice,
  type ParsedOfferRequest,
  PROTOCOL_VERSION,
} from '@vrpkit/protocol';
import type { UnavailableReason } from './availability.js';
import { weekdayOf } from './dates.js';
import type { StayPrice } from './pricing.js';
import type { PropertyDescription } from './property.js';

export interface OfferFacts {
  canonicalDomain: string;
  nodeId: string;
  property: PropertyDescription;
  request: ParsedOfferRequest;
  now: number;
  /** Present when the stay can be had; otherwise the signed-negative reason. */
  outcome: { available: true; price: StayPrice } | { available: false; reason: UnavailableReason };
  freshness: CalendarFreshness;
  offerId: string;
}

/**
 * Core VRP v0.1 §5.1: `https://{canonical_domain}/book?checkIn=…&checkOut=…&guests=…&offer=…`.
 * Every value is parser-checked (YYYY-MM-DD dates, an integer, a UUID): none has a character
 * that form encoding would escape, so the query is written as is.
 */
export function directBookingUrl(domain: string, r: { check_in: string; check_out: string; guests: number }, offerId: string): string {
  return `https://${domain}/book?checkIn=${r.check_in}&checkOut=${r.check_out}&guests=${r.guests}&offer=${offerId}`;
}

function priceOf(facts: OfferFacts, checkedAt: string): OfferPrice {
  const currency = facts.property.currency;
  if (!facts.outcome.available) {
    // A signed negative is not priced: null totals, `exact: false`, no reconciliation.
    return {
      currency,
      public_total: null,
      agent_total: null,
      total: null,
      minor_unit: true,
      exact: false,
      no_add_on_fees: true,
      ota_comparison_total: null,
      ota_comparison_source: null,
      checked_at: checkedAt,
      package_applied: null,
      breakdown: null,
      adjustments: [],
      reconciliation: null,
    };
  }
  const p = facts.outcome.price;
  return {
    currency,
    public_total: p.total,
    agent_total: p.total,
    total: p.total,
    minor_unit: true,
    // Core VRP v0.1 §5: exact only when Σ breakdown + Σ adjustments = total.
    exact: p.reconciliation.matches_quoted_total,
    no_add_on_fees: true,
    // Never synthesised: only a signed OTA price could fill these.
    ota_comparison_total: null,
    ota_comparison_source: null,
    checked_at: checkedAt,
    package_applied: null,
    breakdown: p.breakdown,
    adjustments: p.adjustments,
    reconciliation: p.reconciliation,
  };
}

/** Build the twelve Core VRP v0.1 §5 payload fields (plus rules, capacity, source_authority) in schema order. */
export function buildOfferPayload(facts: OfferFacts): OfferPayload {
  const { property: p, request: r, canonicalDomain } = facts;
  const lifetimeMs = p.offer_lifetime_minutes * 60_000;
  const generated_at = toUtcSecond(facts.now);
  const price = priceOf(facts, generated_at);
  const quoteable = facts.outcome.available && price.exact && facts.freshness.safe === true;
  return {
    kind: OFFER_KIND,
    protocol_version: PROTOCOL_VERSION,
    canonical_domain: canonicalDomain,
    node_id: facts.nodeId,
    generated_at,
    // Core VRP v0.1 §6: valid_until = generated_at + lifetime (both on the same whole second).
    valid_until: toUtcSecond(Math.floor(facts.now / 1000) * 1000 + lifetimeMs),
    canonical: true,
    request: {
      check_in: r.check_in,
      check_out: r.check_out,
      guests: r.guests,
      check_in_weekday: weekdayOf(r.check_in),
      check_out_weekday: weekdayOf(r.check_out),
      nights: r.nights,
      ...(r.language ? { language: r.language } : {}),
    },
    property: {
      property_id: p.property_id,
      name: p.name,
      url: p.url ?? `https://${canonicalDomain}/`,
      domain: canonicalDomain,
      city: p.city,
      country: p.country,
    },
    availability: {
      available: facts.outcome.available,
      source: 'official_host_domain',
      reason: facts.outcome.available ? null : facts.outcome.reason,
      checked_at: generated_at,
      calendar_freshness: facts.freshness,
    },
    capacity: { requested_guests: r.guests, max_guests: p.max_guests, fits: r.guests <= p.max_guests },
    price,
    booking: { direct_booking_url: directBookingUrl(canonicalDomain, r, facts.offerId), offer_id: facts.offerId },
    rules: {
      pets: p.pets,
      pets_label: p.pets_label,
      check_in_time: p.check_in_time,
      check_out_time: p.check_out_time,
      // Core VRP v0.1 §5.3: relayed verbatim; null = not published (unknown).
      refund_schedule: p.refund_schedule,
    },
    agent_permission: {
      // Core VRP v0.1 §7 fail closed: the host's opt-in only applies to an available, exactly priced stay on a safe calendar.
      may_quote_as_official_direct_offer: quoteable && p.agent_permission.may_quote_as_official_direct_offer,
      must_not_claim_ota_comparison_without_signed_ota_price: true,
      must_not_invent_discounts: true,
      ...(p.agent_permission.wording ? { wording: p.agent_permission.wording } : {}),
    },
    source_authority: {
      model: 'host_verified_direct_source',
      is_official_source_for_property: true,
      intermediary: 'none',
      payment_recipient: 'host',
      booking_model: 'direct_with_host',
      booking_commission_pct: 0,
    },
  };
}

/** Envelope `host_alternatives`: the host's own nearest open windows (never another property). */
export interface HostAlternatives {
  note: string;
  shorten_to: AltWindow | null;
  next_available: AltWindow | null;
}

/** A signed offer response. The signed-offer cache shares one between requests: never mutate it. */
export interface SignedOffer {
  envelope: OfferEnvelope;
  /** The exact response body; its `offer` member is the JWS payload's bytes. */
  json: string;
  /** `json` as UTF-8 bytes: what the offer endpoint writes, in one piece. */
  body: Uint8Array<ArrayBuffer>;
}

/** The envelope body before the offer (`kind`, `protocol_version`): constant, ASCII. */
const BODY_HEAD = `{"kind":"${ENVELOPE_KIND}","protocol_version":"${PROTOCOL_VERSION}","offer":`;

/** Sign an offer (protected header `{alg:"EdDSA", typ:"JWT", kid}`, as the VRP offer vectors) and assemble the envelope. */
export function signOffer(offer: OfferPayload, signer: JwsSigner, jwksUrl: string, alternatives?: HostAlternatives): SignedOffer {
  const payload = JSON.stringify(offer);
  // The payload's UTF-8 bytes, encoded once: the signer takes them as they are (the JWS payload
  // is these bytes), and the body copies them instead of encoding the whole body again.
  const payloadBytes = Buffer.from(payload);
  const jws = signer.sign(payloadBytes, { typ: 'JWT' });
  const signature = { format: 'jws_compact', alg: 'EdDSA', kid: signer.kid, jws } as const;
  const verification = { jwks_url: jwksUrl };
  const envelope: OfferEnvelope = { kind: ENVELOPE_KIND, protocol_version: PROTOCOL_VERSION, offer, signature, verification };
  if (alternatives) envelope.host_alternatives = alternatives;
  // The body spells `signature` out rather than re-stringifying it: `jws` is ~4 KB that
  // JSON.stringify would only scan to find nothing to escape (a compact JWS is base64url and
  // dots), while the kid and the JWKS URL are the only members that take JSON quoting.
  const beforeJws = `,"signature":{"format":"jws_compact","alg":"EdDSA","kid":${JSON.stringify(signer.kid)},"jws":"`;
  const afterJws = `"},"verification":{"jwks_url":${JSON.stringify(jwksUrl)}}${alternatives ? `,"host_alternatives":${JSON.stringify(alternatives)}` : ''}}`;
  const json = `${BODY_HEAD}${payload}${beforeJws}${jws}${afterJws}`;
  // The same bytes as Buffer.from(json), written piece by piece (BODY_HEAD and the JWS are ASCII).
  const body = Buffer.allocUnsafeSlow(
    BODY_HEAD.length + payloadBytes.byteLength + Buffer.byteLength(beforeJws) + jws.length + Buffer.byteLength(afterJws),
  );
  let at = body.write(BODY_HEAD, 0, 'latin1');
  at += payloadBytes.copy(body, at);
  at += body.write(beforeJws, at);
  at += body.write(jws, at, 'latin1');
  body.write(afterJws, at);
  return { envelope, json, body };
}
