/**
 * The signed verified stay offer (Core VRP v0.1 §5). `buildOfferPayload` builds the payload and its
 * text, exactly `JSON.stringify(offer)` (Core VRP v0.1 §5 and the offer vectors: the payload is the
 * offer as serialised, not JCS), from an `OfferTemplate` that holds what one store snapshot's offers
 * share; `signOffer` signs those bytes and builds the response body around them, so the envelope's
 * `offer` is byte-identical to the JWS payload. */
import type { JwsSigner } from '@vrpkit/core';
import { toUtcSecond } from '@vrpkit/core';
import {
  type AgentPermission,
  type AltWindow,
  BOOK_PATH,
  ENVELOPE_KIND,
  OFFER_KIND,
  type OfferEnvelope,
  type OfferPayload,
  type OfferPrice,
  type ParsedOfferRequest,
  PROTOCOL_VERSION,
  type PriceAdjustment,
  type PriceBreakdownNight,
} from '@vrpkit/protocol';
import type { CalendarFreshnessAt, UnavailableReason } from './availability.js';
import { weekdayOf } from './dates.js';
import { type PlanRate, planRate, priceStay, rateForNight, type StayPrice, seasonOf, stayAdjustments } from './pricing.js';
import type { PropertyDescription } from './property.js';

export interface OfferFacts {
  /** The members fixed by the node and its property (one store snapshot's). */
  template: OfferTemplate;
  request: ParsedOfferRequest;
  now: number;
  /** Present when the stay can be had; otherwise the signed-negative reason. */
  outcome: { available: true; price: StayPrice } | { available: false; reason: UnavailableReason };
  freshness: CalendarFreshnessAt;
  offerId: string;
}

/**
 * Core VRP v0.1 §5.1: `https://{canonical_domain}/book?checkIn=…&checkOut=…&guests=…&offer=…`.
 * Every value is parser-checked (YYYY-MM-DD dates, an integer, a UUID): none has a character
 * that form encoding would escape, so the query is written as is.
 */
export function directBookingUrl(domain: string, r: { check_in: string; check_out: string; guests: number }, offerId: string): string {
  return `https://${domain}${BOOK_PATH}?checkIn=${r.check_in}&checkOut=${r.check_out}&guests=${r.guests}&offer=${offerId}`;
}

/**
 * Core VRP v0.1 §7 fail closed: a stay is quoteable only when available, exactly priced
 * (Σ breakdown + Σ adjustments = total) on a safe calendar; the host's opt-in applies on top.
 */
export function isQuoteable(outcome: OfferFacts['outcome'], freshness: CalendarFreshnessAt): boolean {
  return outcome.available && outcome.price.reconciliation.matches_quoted_total && freshness.value.safe === true;
}

/** Core VRP v0.1 §5 `source_authority`: a node is the host's own direct source, commission-free. */
const SOURCE_AUTHORITY = {
  model: 'host_verified_direct_source',
  is_official_source_for_property: true,
  intermediary: 'none',
  payment_recipient: 'host',
  booking_model: 'direct_with_host',
  booking_commission_pct: 0,
} as const;
const SOURCE_AUTHORITY_JSON = JSON.stringify(SOURCE_AUTHORITY);

/** A value and its JSON text. */
interface WithJson<T> {
  value: T;
  json: string;
}
const withJson = <T>(value: T): WithJson<T> => ({ value, json: JSON.stringify(value) });

/**
 * What every offer signed from one store snapshot shares (Core VRP v0.1 §5): the members fixed
 * by the node and its property (`property`, `rules`, both possible `agent_permission` members,
 * the stay-level fees as `price.adjustments`) and each rate plan's night members (a night's rate
 * but its date and weekday), each with its JSON text, built once. An offer's payload text splices
 * these texts in instead of serialising them again, and its payload object holds these same
 * objects: shared between offers, never mutate them.
 */
export class OfferTemplate {
  /** The payload's opening members up to `generated_at`'s value: `{"kind":…,"node_id":…,"generated_at":"`. */
  readonly head: string;
  readonly property: WithJson<NonNullable<OfferPayload['property']>>;
  readonly rules: WithJson<NonNullable<OfferPayload['rules']>>;
  /** `agent_permission` for an offer that is not quoteable ([0]) and one that is ([1]). */
  readonly agentPermission: readonly [WithJson<AgentPermission>, WithJson<AgentPermission>];
  readonly adjustments: WithJson<PriceAdjustment[]>;
  readonly currencyJson: string;
  /**
   * Each rate plan's night members after the weekday with their JSON text (its opening brace cut), by
   * `seasonOf` index + 1 and weekend, built on first use. Per plan, not per night: a loaded tenant's
   * template holds a few entries however many dates its stays ask for (a memo per night grew each
   * tenant's heap by some 400 bytes a date asked, and platform mode holds a template per loaded tenant).
   */
  private readonly plans: ({ value: PlanRate; tail: string } | undefined)[] = [];

  constructor(
    readonly canonicalDomain: string,
    readonly nodeId: string,
    readonly p: PropertyDescription,
  ) {
    this.head = `{"kind":"${OFFER_KIND}","protocol_version":"${PROTOCOL_VERSION}","canonical_domain":${JSON.stringify(canonicalDomain)},"node_id":${JSON.stringify(nodeId)},"generated_at":"`;
    this.property = withJson({
      property_id: p.property_id,
      name: p.name,
      url: p.url ?? `https://${canonicalDomain}/`,
      domain: canonicalDomain,
      city: p.city,
      country: p.country,
    });
    this.rules = withJson({
      pets: p.pets,
      pets_label: p.pets_label,
      check_in_time: p.check_in_time,
      check_out_time: p.check_out_time,
      // Core VRP v0.1 §5.3: relayed verbatim; null = not published (unknown).
      refund_schedule: p.refund_schedule,
    });
    const permission = (quoteable: boolean) =>
      withJson({
        // Core VRP v0.1 §7 fail closed: the host's opt-in only applies to an available, exactly priced stay on a safe calendar.
        may_quote_as_official_direct_offer: quoteable && p.agent_permission.may_quote_as_official_direct_offer,
        must_not_claim_ota_comparison_without_signed_ota_price: true,
        must_not_invent_discounts: true,
        ...(p.agent_permission.wording ? { wording: p.agent_permission.wording } : {}),
      });
    this.agentPermission = [permission(false), permission(true)];
    this.adjustments = withJson(stayAdjustments(p.fees));
    this.currencyJson = JSON.stringify(p.currency);
  }

  /** `planRate` of the property's rate table, from the memo above (the `plans` hook of `rateForNight`). */
  private readonly planOf = (season: number, weekend: boolean) => this.plan(season, weekend).value;

  private plan(season: number, weekend: boolean): { value: PlanRate; tail: string } {
    const i = 2 * (season + 1) + (weekend ? 1 : 0);
    let plan = this.plans[i];
    if (!plan) {
      const value = planRate(this.p.rates, season, weekend);
      plan = { value, tail: JSON.stringify(value).slice(1) };
      this.plans[i] = plan;
    }
    return plan;
  }

  /**
   * `JSON.stringify(n)` of a night `rateForNight` priced under this template's rate table: its date and
   * weekday (a calendar date and a weekday name: nothing to escape), then its plan's text; a night
   * whose members are not its plan's is serialised in full.
   */
  nightJson(n: PriceBreakdownNight): string {
    const { value: v, tail } = this.plan(seasonOf(this.p.rates, n.date), n.is_weekend === true);
    const planned =
      v.is_weekend === n.is_weekend &&
      v.nightly_rate === n.nightly_rate &&
      v.season_name === n.season_name &&
      v.season_type === n.season_type;
    if (!planned) return JSON.stringify(n);
    return `{"date":"${n.date}","day_of_week":"${n.day_of_week}",${tail}`;
  }

  /** The price of the stay of `nights`: each night's rate, the stay-level fees as adjustments. */
  priceStay(nights: string[]): StayPrice {
    const { rates } = this.p;
    return priceStay(
      nights.map((d) => rateForNight(rates, d, this.planOf)),
      this.adjustments.value,
    );
  }
}

/** JSON text of a finite number or of null (JSON has no NaN or infinity: JSON.stringify writes null). */
const numberJson = (n: number | null) => (n === null || !Number.isFinite(n) ? 'null' : `${n}`);

/**
 * Core VRP v0.1 §5 `price`, with its JSON text. A signed negative is not priced: null totals,
 * `exact: false`, no reconciliation.
 */
function priceOf(facts: OfferFacts, checkedAt: string): WithJson<OfferPrice> {
  const t = facts.template;
  const currency = t.p.currency;
  if (!facts.outcome.available) {
    const value: OfferPrice = {
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
    const json = `{"currency":${t.currencyJson},"public_total":null,"agent_total":null,"total":null,"minor_unit":true,"exact":false,"no_add_on_fees":true,"ota_comparison_total":null,"ota_comparison_source":null,"checked_at":"${checkedAt}","package_applied":null,"breakdown":null,"adjustments":[],"reconciliation":null}`;
    return { value, json };
  }
  const p = facts.outcome.price;
  const rec = p.reconciliation;
  const value: OfferPrice = {
    currency,
    public_total: p.total,
    agent_total: p.total,
    total: p.total,
    minor_unit: true,
    // Core VRP v0.1 §5: exact only when Σ breakdown + Σ adjustments = total.
    exact: rec.matches_quoted_total,
    no_add_on_fees: true,
    // Never synthesised: only a signed OTA price could fill these.
    ota_comparison_total: null,
    ota_comparison_source: null,
    checked_at: checkedAt,
    package_applied: null,
    breakdown: p.breakdown,
    adjustments: p.adjustments,
    reconciliation: rec,
  };
  const total = numberJson(p.total);
  // The nights' and the fees' texts are the template's when the price is the template's.
  const breakdown = p.breakdown.map((n) => t.nightJson(n)).join(',');
  const adjustments = p.adjustments === t.adjustments.value ? t.adjustments.json : JSON.stringify(p.adjustments);
  const json = `{"currency":${t.currencyJson},"public_total":${total},"agent_total":${total},"total":${total},"minor_unit":true,"exact":${rec.matches_quoted_total},"no_add_on_fees":true,"ota_comparison_total":null,"ota_comparison_source":null,"checked_at":"${checkedAt}","package_applied":null,"breakdown":[${breakdown}],"adjustments":${adjustments},"reconciliation":{"nightly_subtotal":${numberJson(rec.nightly_subtotal)},"adjustments_total":${numberJson(rec.adjustments_total)},"computed_total":${numberJson(rec.computed_total)},"matches_quoted_total":${rec.matches_quoted_total}}}`;
  return { value, json };
}

/**
 * Build the twelve Core VRP v0.1 §5 payload fields (plus rules, capacity, source_authority) in
 * schema order, and the payload's JSON text: exactly `JSON.stringify(offer)` (the JWS payload is
 * the offer as serialised, not JCS), written member by member beside the object with the
 * template's texts spliced in. Strings written without JSON quoting are ones whose format rules
 * out anything to escape: whole-second UTC times, parser-checked dates and guest counts, weekday
 * names, the reason codes; the rest go through JSON.stringify.
 */
export function buildOfferPayload(facts: OfferFacts): { offer: OfferPayload; json: string } {
  const { template: t, request: r } = facts;
  const lifetimeMs = t.p.offer_lifetime_minutes * 60_000;
  const generated_at = toUtcSecond(facts.now);
  // Core VRP v0.1 §6: valid_until = generated_at + lifetime (both on the same whole second).
  const valid_until = toUtcSecond(Math.floor(facts.now / 1000) * 1000 + lifetimeMs);
  const price = priceOf(facts, generated_at);
  const quoteable = isQuoteable(facts.outcome, facts.freshness);
  const check_in_weekday = weekdayOf(r.check_in);
  const check_out_weekday = weekdayOf(r.check_out);
  const available = facts.outcome.available;
  const reason = facts.outcome.available ? null : facts.outcome.reason;
  const fits = r.guests <= t.p.max_guests;
  const direct_booking_url = directBookingUrl(t.canonicalDomain, r, facts.offerId);
  const agentPermission = t.agentPermission[quoteable ? 1 : 0];
  const offer: OfferPayload = {
    kind: OFFER_KIND,
    protocol_version: PROTOCOL_VERSION,
    canonical_domain: t.canonicalDomain,
    node_id: t.nodeId,
    generated_at,
    valid_until,
    canonical: true,
    request: {
      check_in: r.check_in,
      check_out: r.check_out,
      guests: r.guests,
      check_in_weekday,
      check_out_weekday,
      nights: r.nights,
      ...(r.language ? { language: r.language } : {}),
    },
    property: t.property.value,
    availability: {
      available,
      source: 'official_host_domain',
      reason,
      checked_at: generated_at,
      calendar_freshness: facts.freshness.value,
    },
    capacity: { requested_guests: r.guests, max_guests: t.p.max_guests, fits },
    price: price.value,
    booking: { direct_booking_url, offer_id: facts.offerId },
    rules: t.rules.value,
    agent_permission: agentPermission.value,
    source_authority: SOURCE_AUTHORITY,
  };
  const json =
    `${t.head}${generated_at}","valid_until":"${valid_until}","canonical":true,` +
    `"request":{"check_in":"${r.check_in}","check_out":"${r.check_out}","guests":${r.guests},"check_in_weekday":"${check_in_weekday}","check_out_weekday":"${check_out_weekday}","nights":${r.nights}${r.language ? `,"language":${JSON.stringify(r.language)}` : ''}},` +
    `"property":${t.property.json},` +
    `"availability":{"available":${available},"source":"official_host_domain","reason":${reason === null ? 'null' : `"${reason}"`},"checked_at":"${generated_at}","calendar_freshness":${facts.freshness.json}},` +
    `"capacity":{"requested_guests":${r.guests},"max_guests":${numberJson(t.p.max_guests)},"fits":${fits}},` +
    `"price":${price.json},` +
    `"booking":{"direct_booking_url":${JSON.stringify(direct_booking_url)},"offer_id":${JSON.stringify(facts.offerId)}},` +
    `"rules":${t.rules.json},"agent_permission":${agentPermission.json},"source_authority":${SOURCE_AUTHORITY_JSON}}`;
  return { offer, json };
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
/** The offer JWS's protected header beyond `alg` and `kid`, as the VRP offer vectors have it. */
const OFFER_JWS_HEADER = { typ: 'JWT' };

/**
 * Sign an offer (protected header `{alg:"EdDSA", typ:"JWT", kid}`, as the VRP offer vectors) and
 * assemble the envelope. The body is written once into one buffer: the payload's UTF-8 bytes
 * where the envelope's `offer` goes, then the compact JWS over those same bytes signed in place
 * (its signing input is the buffer's own bytes, nothing is copied to be signed), then the rest.
 */
export function signOffer(
  payload: { offer: OfferPayload; json: string },
  signer: JwsSigner,
  jwksUrl: string,
  alternatives?: HostAlternatives,
): SignedOffer {
  const { offer, json: payloadJson } = payload;
  const payloadLength = Buffer.byteLength(payloadJson);
  const layout = signer.layout(payloadLength, OFFER_JWS_HEADER);
  // The body spells `signature` out rather than stringifying it: `jws` is ~4 KB that
  // JSON.stringify would only scan to find nothing to escape (a compact JWS is base64url and
  // dots), while the kid and the JWKS URL are the only members that take JSON quoting.
  const beforeJws = `,"signature":{"format":"jws_compact","alg":"EdDSA","kid":${JSON.stringify(signer.kid)},"jws":"`;
  const afterJws = `"},"verification":{"jwks_url":${JSON.stringify(jwksUrl)}}${alternatives ? `,"host_alternatives":${JSON.stringify(alternatives)}` : ''}}`;
  const body = Buffer.allocUnsafeSlow(
    BODY_HEAD.length + payloadLength + Buffer.byteLength(beforeJws) + layout.length + Buffer.byteLength(afterJws),
  );
  const payloadAt = body.write(BODY_HEAD, 0, 'latin1');
  const payloadEnd = payloadAt + body.write(payloadJson, payloadAt);
  const jwsAt = payloadEnd + body.write(beforeJws, payloadEnd);
  const jwsEnd = signer.signInto(layout, body.subarray(payloadAt, payloadEnd), body, jwsAt);
  body.write(afterJws, jwsEnd);
  const jws = body.toString('latin1', jwsAt, jwsEnd);
  const signature = { format: 'jws_compact', alg: 'EdDSA', kid: signer.kid, jws } as const;
  const envelope: OfferEnvelope = {
    kind: ENVELOPE_KIND,
    protocol_version: PROTOCOL_VERSION,
    offer,
    signature,
    verification: { jwks_url: jwksUrl },
  };
  if (alternatives) envelope.host_alternatives = alternatives;
  // The same text as the body (a rope of the pieces: flattened only if a surface reads it).
  const json = `${BODY_HEAD}${payloadJson}${beforeJws}${jws}${afterJws}`;
  return { envelope, json, body };
}
