/**
 * The official verification-result object (`verified-stay-offer-verification-result-v0.1`,
 * closed): what an agent may publish about one verified offer. vrpkit's own additions (status
 * and code, failures, three-state facts, sources) live beside it in `StayOfferVerification`,
 * never inside it. It is built only from the signed payload, and only when every member can be
 * filled without inventing a value.
 */
import { asRecord, toUtcSecond } from '@vrpkit/core';
import { CANONICAL_PHRASE, type VerificationResult } from '@vrpkit/protocol';
import { bookingUrlFailure, isAvailable, isExactAmount, isExactPrice, type StayQuoteFailureCode } from './quote.js';
import type { OfferVerificationResult } from './verify.js';

/**
 * The official result for a verification, or null when the official shape cannot be filled
 * without inventing a value: nothing verified and fresh, or a verified payload whose summary
 * fields the schema cannot carry (e.g. a signed negative with `public_total: null`).
 * `blocked_reason` follows hemmabo's `quoteBlockedReason` order, then the first stay-check failure.
 */
export function officialVerificationResult(
  domain: string,
  v: OfferVerificationResult,
  safe: boolean,
  failures: StayQuoteFailureCode[],
): VerificationResult | null {
  if (v.status !== 'verified' || !v.payload) return null;
  const p = v.payload;
  const availability = asRecord(p.availability);
  const price = asRecord(p.price);
  const url = asRecord(p.booking)?.direct_booking_url;
  const validUntil = Date.parse(String(p.valid_until));
  if (
    !availability ||
    !price ||
    typeof availability.available !== 'boolean' ||
    availability.source !== 'official_host_domain' ||
    typeof price.currency !== 'string' ||
    !/^[A-Z]{3}$/.test(price.currency) ||
    // A rounded total would be an invented value (quote.ts `isExactAmount`).
    !isExactAmount(p, 'public_total') ||
    !isExactAmount(p, 'agent_total') ||
    typeof price.minor_unit !== 'boolean' ||
    typeof price.exact !== 'boolean' ||
    typeof url !== 'string' ||
    !/^https:\/\/\S+$/.test(url)
  ) {
    return null;
  }
  const mayQuote = asRecord(p.agent_permission)?.may_quote_as_official_direct_offer === true;
  // hemmabo `quoteBlockedReason` order, then vrpkit's own stay-check codes.
  const blocked_reason = safe
    ? null
    : !mayQuote
      ? 'agent_permission_denied'
      : !isAvailable(p)
        ? 'not_available'
        : !isExactPrice(p)
          ? 'price_not_exact'
          : bookingUrlFailure(p)
            ? 'direct_booking_url_missing'
            : (failures[0] ?? 'not_quoteable');
  return {
    domain,
    verified: true,
    protocol_version: '0.1',
    fresh: true,
    payload_matches_offer: v.payloadMatchesOffer !== false,
    signature: { alg: 'EdDSA', verified: true },
    agent_citation: {
      may_quote_as_official_direct_offer: mayQuote,
      safe_to_quote_as_official_direct_offer: safe,
      quote_status: safe ? 'official_host_domain_verified_offer' : 'not_quoteable',
      blocked_reason,
    },
    official_offer_summary: {
      availability: { available: availability.available, source: 'official_host_domain' },
      price: {
        currency: price.currency,
        public_total: price.public_total as number,
        agent_total: price.agent_total as number,
        minor_unit: price.minor_unit,
        exact: price.exact,
      },
      direct_booking_url: url,
      // The schema's dateTime has no fractional seconds: floor (an earlier expiry, never a later one).
      valid_until: toUtcSecond(validUntil),
      bookable: isAvailable(p) && bookingUrlFailure(p) === null,
    },
    agent_guardrails: { safe_to_quote: safe, must_quote_from_signed_offer: true, required_phrase_when_safe: CANONICAL_PHRASE },
  };
}
