/**
 * Safe to quote (Core VRP v0.1 §7): conditions 4–11 offline (vrp-verify `quoteChecks`), the booking-URL
 * rules of Core VRP v0.1 §5.1, and the stay check that ties a verified offer to the question asked
 * (`stayQuoteFailures`). Discovery conditions 1–3 belong to `fetchVerifiedStayOffer`, which has
 * the network context.
 */
import { asRecord, isRecord } from '@vrpkit/core';
import type { OfferRequestArgs } from '@vrpkit/protocol';
import { isOnCanonicalDomain } from '../canonical-domain.js';
import { signedAsNonPlainNumber } from './signed-text.js';
import type { OfferVerificationResult } from './verify.js';

/** vrp-verify `QuoteFailureCode`, in the order the reference collects them. */
export type QuoteFailureCode =
  | 'not_verified'
  | 'availability_not_true'
  | 'price_not_exact'
  | 'booking_url_missing'
  | 'booking_url_invalid'
  | 'booking_url_host_mismatch'
  | 'quote_permission_not_granted';

/** Why an offer may not be quoted for the stay asked: vrp-verify's offline codes plus the stay check's own. */
export type StayQuoteFailureCode =
  | QuoteFailureCode
  /** Core VRP v0.1 §7 conditions 1–3 could not be established (discovery failed or unknown). */
  | 'discovery_not_verified'
  /** The signed `canonical_domain` is not the domain asked (an offer from another node). */
  | 'offer_domain_mismatch'
  /** The signed `request` is absent or is not the stay asked for (a replayed or substituted offer). */
  | 'offer_request_mismatch';

export interface QuoteCheckResult {
  ok: boolean;
  failures: QuoteFailureCode[];
}

/** Literally `https://`, then no whitespace, control character or backslash (Core VRP v0.1 §5.1 "absolute https URL"). */
const ABSOLUTE_HTTPS = /^https:\/\/[^\s\\\p{Cc}]+$/u;

/**
 * Core VRP v0.1 §5.1: an absolute https URL on `canonical_domain` (or a subdomain, label boundary), with
 * no userinfo and no port other than 443. Returns the failure code or null.
 */
export function bookingUrlFailure(payload: unknown): QuoteFailureCode | null {
  const p = asRecord(payload);
  const url = asRecord(p?.booking)?.direct_booking_url;
  if (typeof url !== 'string' || url.length === 0) return 'booking_url_missing';
  const domain = p?.canonical_domain;
  // One verification asks twice (quoteChecks, the official result), and a node serves the same
  // signed offer while it caches it: the last answer, for the same two strings, is the answer.
  if (url === lastBookingUrl && domain === lastCanonicalDomain) return lastBookingUrlFailure;
  const failure = urlFailure(url, domain);
  if (typeof domain === 'string') {
    lastBookingUrl = url;
    lastCanonicalDomain = domain;
    lastBookingUrlFailure = failure;
  }
  return failure;
}

let lastBookingUrl = '';
let lastCanonicalDomain = '';
let lastBookingUrlFailure: QuoteFailureCode | null = 'booking_url_missing';

function urlFailure(url: string, canonicalDomain: unknown): QuoteFailureCode | null {
  // The signed string itself is what the guest is sent to, so it must already be an absolute
  // https URL: WHATWG parsing would repair `https:host`, a leading space, a TAB or `host\@evil`
  // into a URL on the canonical host that other parsers (curl, Python) read as another host.
  if (!ABSOLUTE_HTTPS.test(url)) return 'booking_url_invalid';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'booking_url_invalid';
  }
  if (parsed.protocol !== 'https:') return 'booking_url_invalid';
  // Userinfo can make a URL read as one host and go to another; a non-443 port is another service.
  if (parsed.username !== '' || parsed.password !== '' || parsed.port !== '') return 'booking_url_invalid';
  // A missing or unparseable canonical_domain cannot confirm the host: unknown → fail closed.
  if (!isOnCanonicalDomain(parsed.hostname, canonicalDomain)) return 'booking_url_host_mismatch';
  return null;
}

/**
 * Whether `price[member]` is an exact amount: a non-negative safe integer (I-JSON, RFC 7493
 * §2.2: ≤ 2^53−1, so the parsed number is the signed one), written in the signed text as a plain
 * integer. A literal the parse rounded (9007199254740993, 123.0000000000000001, 1e308) is not
 * exact: the node did not sign the number the agent would quote.
 */
export function isExactAmount(payload: unknown, member: 'public_total' | 'agent_total'): boolean {
  const amount = asRecord(asRecord(payload)?.price)?.[member];
  if (!Number.isSafeInteger(amount) || (amount as number) < 0) return false;
  // No signed text means the payload was not parsed from a JWS here (built in memory): its numbers are what they are.
  return !(isRecord(payload) && signedAsNonPlainNumber(payload, ['price', member]));
}

/**
 * Core VRP v0.1 §7 condition 9, tightened by two reference behaviours: the price is exact only when
 * `exact === true`, both totals are exact amounts (`isExactAmount`; the three-state fixture
 * evaluator and the verification-result schema need integers), and
 * `reconciliation.matches_quoted_total` is not `false` (hemmabo forces `exact=false` then).
 */
export function isExactPrice(payload: unknown): boolean {
  const price = asRecord(asRecord(payload)?.price);
  if (price?.exact !== true) return false;
  if (!isExactAmount(payload, 'public_total') || !isExactAmount(payload, 'agent_total')) return false;
  if (typeof price.currency !== 'string' || !/^[A-Z]{3}$/.test(price.currency)) return false;
  return asRecord(price.reconciliation)?.matches_quoted_total !== false;
}

/**
 * Core VRP v0.1 §7 condition 8 plus the calendar rule (SKILL.md): `available === true` and the calendar
 * not declared stale (`calendar_freshness.safe === false` blocks bookability).
 */
export function isAvailable(payload: unknown): boolean {
  const availability = asRecord(asRecord(payload)?.availability);
  return availability?.available === true && asRecord(availability.calendar_freshness)?.safe !== false;
}

/**
 * Evaluate the offline Safe-to-Quote conditions on a `verifyOffer` result. Anything but
 * `verified` is `['not_verified']` alone; otherwise every failed condition, in reference order.
 */
export function quoteChecks(verification: OfferVerificationResult | null | undefined): QuoteCheckResult {
  if (verification?.status !== 'verified') return { ok: false, failures: ['not_verified'] };
  const payload = verification.payload;
  const failures: QuoteFailureCode[] = [];
  if (!isAvailable(payload)) failures.push('availability_not_true');
  if (!isExactPrice(payload)) failures.push('price_not_exact');
  const urlFailure = bookingUrlFailure(payload);
  if (urlFailure) failures.push(urlFailure);
  if (asRecord(asRecord(payload)?.agent_permission)?.may_quote_as_official_direct_offer !== true)
    failures.push('quote_permission_not_granted');
  return { ok: failures.length === 0, failures };
}

/** True only when every offline Safe-to-Quote condition holds. Everything short of that is false (Core VRP v0.1 §8). */
export function safeToQuote(verification: OfferVerificationResult | null | undefined): boolean {
  return quoteChecks(verification).ok;
}

/**
 * The stay check: Core VRP v0.1 §7 (`quoteChecks`) plus the two checks that tie a
 * verified offer to the question asked, whatever transport carried it — the signed offer is
 * `domain`'s own (Node Tool Binding v0.1 §6, Core VRP v0.1 §2), and its signed `request` is the stay asked
 * for (Core VRP v0.1 §5 `request` is a MUST), so an offer for other dates or guests is never quoted.
 */
export function stayQuoteFailures(verification: OfferVerificationResult, domain: string, args: OfferRequestArgs): StayQuoteFailureCode[] {
  const failures: StayQuoteFailureCode[] = [...quoteChecks(verification).failures];
  const payload = verification.payload;
  if (verification.status === 'verified' && payload) {
    if (payload.canonical_domain !== domain) failures.push('offer_domain_mismatch');
    const req = asRecord(payload.request);
    if (req?.check_in !== args.check_in || req?.check_out !== args.check_out || req?.guests !== args.guests)
      failures.push('offer_request_mismatch');
  }
  return failures;
}
