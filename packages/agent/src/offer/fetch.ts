/**
 * The agent's end-to-end check (Core §2–§9): discovery on the host domain, the JWKS through
 * the cache, the offer from the node's endpoint, `verifyOffer`, then the full Safe-to-Quote
 * gate (§7) and the three-state facts (§9). Fail closed: any network, HTTP, JSON or shape
 * failure leaves every dependent fact unknown and the offer not safe to quote.
 *
 * Result shape (open question 19): `result` is exactly the official
 * `verified-stay-offer-verification-result` object — that schema is closed, so vrpkit's
 * additions (status/code, failures, three-state facts, sources) live beside it, never inside
 * it. `result` is null when the official shape cannot be filled without inventing a value:
 * nothing verified and fresh, or a verified payload whose summary fields the schema cannot
 * carry (e.g. a signed negative with `public_total: null`).
 */
import { type Clock, type FetchLike, toUtcSecond } from '@vrpkit/core';
import {
  CANONICAL_PHRASE,
  type DiscoveryDocument,
  ENVELOPE_KIND,
  type OfferPayload,
  type OfferRequestArgs,
  PROTOCOL_VERSION,
  type RefundScheduleRow,
} from '@vrpkit/protocol';
import { type DiscoveryOutcome, fetchDiscovery } from '../discovery.js';
import { AgentUsageError } from '../errors.js';
import { getJsonText } from '../http-get.js';
import { type JwksCache, jwsHeaderKid } from '../jwks-cache.js';
import { assessFacts, type Fact, type FactName } from '../three-state.js';
import { bookingUrlFailure, isAvailable, isExactPrice, type QuoteFailureCode, quoteChecks } from './quote.js';
import { type OfferStatus, type OfferVerificationResult, verifyOffer } from './verify.js';

/** The official verification-result object (`verified-stay-offer-verification-result-v0.1`). */
export interface VerificationResult {
  domain: string;
  verified: boolean;
  protocol_version: '0.1';
  fresh: boolean;
  payload_matches_offer: boolean;
  signature: { alg: 'EdDSA'; verified: boolean };
  agent_citation: {
    may_quote_as_official_direct_offer: boolean;
    safe_to_quote_as_official_direct_offer: boolean;
    quote_status: 'official_host_domain_verified_offer' | 'not_quoteable';
    blocked_reason: string | null;
  };
  official_offer_summary: {
    availability: { available: boolean; source: 'official_host_domain' };
    price: { currency: string; public_total: number; agent_total: number; minor_unit: boolean; exact: boolean };
    direct_booking_url: string;
    valid_until: string;
    bookable: boolean;
  };
  agent_guardrails: { safe_to_quote: boolean; must_quote_from_signed_offer: true; required_phrase_when_safe: string };
}

/** Gate failures beyond vrp-verify's offline `quoteChecks` codes. */
export type GateFailureCode =
  | QuoteFailureCode
  /** Core §7 conditions 1–3 could not be established (discovery failed or unknown). */
  | 'discovery_not_verified'
  /** The signed `canonical_domain` is not the domain asked (an offer from another node). */
  | 'offer_domain_mismatch'
  /** The signed `request` is absent or is not the stay asked for (a replayed or substituted offer). */
  | 'offer_request_mismatch';

export type EnvelopeFailureCode = 'offer_unreachable' | 'offer_http_error' | 'offer_not_json' | 'offer_schema_mismatch';

/** How the envelope was obtained. Any failure is unknown. */
export type EnvelopeOutcome =
  | { ok: true; envelope: Record<string, unknown>; url: string | null }
  | { ok: false; code: EnvelopeFailureCode | string; message: string; url: string | null };

export interface StayOfferVerification {
  domain: string;
  /** vrp-verify status, or `unknown` when no verdict could be reached (network, discovery, JWKS, shape). */
  status: OfferStatus | 'unknown';
  /** The offer reason code, or the discovery/JWKS/network code behind `unknown`; null when the signature verified. */
  code: string | null;
  reason: string;
  safe_to_quote: boolean;
  /** Every failed gate condition (empty when safe to quote). */
  failures: GateFailureCode[];
  /** Core §9 facts with their verifiability class. */
  facts: Record<FactName, Fact>;
  safe_to_cite_verified_unavailable: boolean;
  must_fetch_fresh_offer: boolean;
  /** The official verification-result object, or null (see module doc). */
  result: VerificationResult | null;
  /** The verifier's own result (statuses and codes of vrp-verify). */
  verification: OfferVerificationResult | null;
  /** The signed payload — the authoritative offer — when the signature verified; never the plaintext copy. */
  offer: OfferPayload | null;
  /** What to say when (and only when) safe to quote: the canonical phrase and signed values, verbatim. */
  quote: {
    phrase: string;
    currency: string;
    total: number;
    minor_unit: boolean;
    direct_booking_url: string;
    refund_schedule: RefundScheduleRow[] | null;
  } | null;
  sources: { discovery_url: string | null; jwks_url: string | null; offer_url: string | null };
}

export interface VerifyDeps {
  fetch: FetchLike;
  /** Injected clock (epoch ms) for freshness. */
  now: Clock | (() => number);
  jwksCache: JwksCache;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const nowOf = (now: VerifyDeps['now']) => (typeof now === 'function' ? now() : now.now());

/** Core §4 request parameters as hemmabo validates them agent-side. Throws `invalid_offer_request` (a usage error). */
export function checkOfferRequest(args: OfferRequestArgs): OfferRequestArgs {
  const { check_in, check_out, guests } = args;
  if (typeof check_in !== 'string' || !DATE.test(check_in) || Number.isNaN(Date.parse(check_in))) {
    throw new AgentUsageError('invalid_offer_request', 'check_in must be YYYY-MM-DD');
  }
  if (typeof check_out !== 'string' || !DATE.test(check_out) || Number.isNaN(Date.parse(check_out))) {
    throw new AgentUsageError('invalid_offer_request', 'check_out must be YYYY-MM-DD');
  }
  if (check_out <= check_in) throw new AgentUsageError('invalid_offer_request', 'check_out must be after check_in');
  if (!Number.isInteger(guests) || guests < 1) throw new AgentUsageError('invalid_offer_request', 'guests must be an integer ≥ 1');
  return { check_in, check_out, guests };
}

/**
 * GET the envelope from the discovery document's offer endpoint (Core §4: snake_case query).
 * The one place the envelope is obtained over HTTP; other transports produce an `EnvelopeOutcome` too.
 */
export async function fetchOfferEnvelope(
  discovery: DiscoveryDocument,
  args: OfferRequestArgs,
  opts: { fetch: FetchLike },
): Promise<EnvelopeOutcome> {
  const url = new URL(discovery.verified_stay_offer_endpoint);
  url.searchParams.set('check_in', args.check_in);
  url.searchParams.set('check_out', args.check_out);
  url.searchParams.set('guests', String(args.guests));
  const href = url.toString();
  const got = await getJsonText(opts.fetch, href, 'offer');
  if (!got.ok) return { ok: false, code: 'offer_unreachable', message: got.message, url: href };
  const { res, text } = got;
  if (res.status !== 200) return { ok: false, code: 'offer_http_error', message: `offer endpoint answered HTTP ${res.status}`, url: href };
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    return { ok: false, code: 'offer_not_json', message: 'offer response is not JSON', url: href };
  }
  return checkEnvelopeShape(envelope, href);
}

/** Minimal envelope shape (Core §5): kind, version, an offer object and a signature object; else unknown. */
export function checkEnvelopeShape(envelope: unknown, url: string | null): EnvelopeOutcome {
  const e = obj(envelope);
  if (
    e.kind !== ENVELOPE_KIND ||
    e.protocol_version !== PROTOCOL_VERSION ||
    !obj(e.signature).jws ||
    typeof e.offer !== 'object' ||
    e.offer === null
  ) {
    return { ok: false, code: 'offer_schema_mismatch', message: `response is not a ${ENVELOPE_KIND} envelope`, url };
  }
  return { ok: true, envelope: e, url };
}

function officialResult(
  domain: string,
  v: OfferVerificationResult,
  safe: boolean,
  gateFailures: GateFailureCode[],
): VerificationResult | null {
  if (v.status !== 'verified' || !v.payload) return null;
  const p = v.payload;
  const availability = obj(p.availability);
  const price = obj(p.price);
  const url = obj(p.booking).direct_booking_url;
  const validUntil = Date.parse(String(p.valid_until));
  const amount = (x: unknown) => Number.isInteger(x) && (x as number) >= 0;
  if (
    typeof availability.available !== 'boolean' ||
    availability.source !== 'official_host_domain' ||
    typeof price.currency !== 'string' ||
    !/^[A-Z]{3}$/.test(price.currency) ||
    !amount(price.public_total) ||
    !amount(price.agent_total) ||
    typeof price.minor_unit !== 'boolean' ||
    typeof price.exact !== 'boolean' ||
    typeof url !== 'string' ||
    !/^https:\/\/\S+$/.test(url)
  ) {
    return null;
  }
  const mayQuote = obj(p.agent_permission).may_quote_as_official_direct_offer === true;
  // hemmabo `quoteBlockedReason` order, then vrpkit's own gate codes.
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
            : (gateFailures[0] ?? 'not_quoteable');
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

/** Assemble the outcome when no verdict could be reached (everything dependent is unknown). */
function unknownOutcome(
  domain: string,
  code: string,
  reason: string,
  discovered: boolean,
  sources: StayOfferVerification['sources'],
): StayOfferVerification {
  const assessment = assessFacts({ discovered, verification: null, safeToQuote: false });
  return {
    domain,
    status: 'unknown',
    code,
    reason,
    safe_to_quote: false,
    failures: discovered ? ['not_verified'] : ['discovery_not_verified', 'not_verified'],
    facts: assessment.facts,
    safe_to_cite_verified_unavailable: false,
    must_fetch_fresh_offer: true,
    result: null,
    verification: null,
    offer: null,
    quote: null,
    sources,
  };
}

/** `verifyOffer` against the node's own key set, or why that key set could not be read (discovery or JWKS failure). */
export type NodeKeyVerification =
  | { ok: true; jwks_url: string; verification: OfferVerificationResult }
  /** `jwks_url` is the discovery document's when discovery succeeded and only the JWKS fetch failed. */
  | { ok: false; jwks_url: string | null; code: string; message: string };

/**
 * Verify `envelope` against the JWKS the node's own discovery document names (`jwks_url`),
 * read through the cache — never a key set delivered with the envelope (Core §3; Node Tool
 * Binding §6, §8 item 1). Never throws: an unusable discovery or JWKS is an outcome.
 */
export async function verifyWithNodeJwks(
  discovery: DiscoveryOutcome,
  envelope: unknown,
  deps: Omit<VerifyDeps, 'fetch'>,
): Promise<NodeKeyVerification> {
  if (!discovery.ok) return { ok: false, jwks_url: null, code: discovery.code, message: discovery.message };
  const jwksUrl = discovery.discovery.jwks_url;
  // Key selection is the verifier's (header kid); the cache only needs it for refresh-on-miss.
  const jwks = await deps.jwksCache.get(jwksUrl, jwsHeaderKid(obj(obj(envelope).signature).jws));
  if (!jwks.ok) return { ok: false, jwks_url: jwksUrl, code: jwks.code, message: jwks.message };
  return { ok: true, jwks_url: jwksUrl, verification: verifyOffer({ envelope, jwks: jwks.jwks, now: nowOf(deps.now) }) };
}

/**
 * The full gate for one asked-for stay: Core §7 (`quoteChecks`) plus the two checks that tie a
 * verified offer to the question asked, whatever transport carried it — the signed offer is
 * `domain`'s own (Node Tool Binding §6, Core §2), and its signed `request` is the stay asked
 * for (Core §5 `request` is a MUST), so an offer for other dates or guests is never quoted.
 */
export function stayGateFailures(verification: OfferVerificationResult, domain: string, args: OfferRequestArgs): GateFailureCode[] {
  const failures: GateFailureCode[] = [...quoteChecks(verification).failures];
  const payload = verification.payload;
  if (verification.status === 'verified' && payload) {
    if (payload.canonical_domain !== domain) failures.push('offer_domain_mismatch');
    const req = obj(payload.request);
    if (req.check_in !== args.check_in || req.check_out !== args.check_out || req.guests !== args.guests)
      failures.push('offer_request_mismatch');
  }
  return failures;
}

/**
 * Verify an envelope obtained for `domain` (over HTTP, or through a tool surface) against the
 * JWKS named by the node's own discovery document, and apply the full gate. Never throws for a
 * bad artifact or an unreachable node.
 */
export async function verifyStayOfferEnvelope(
  discovery: DiscoveryOutcome,
  obtained: EnvelopeOutcome,
  args: OfferRequestArgs,
  deps: Omit<VerifyDeps, 'fetch'>,
): Promise<StayOfferVerification> {
  const domain = discovery.domain;
  const sources = {
    discovery_url: discovery.url,
    jwks_url: discovery.ok ? discovery.discovery.jwks_url : null,
    offer_url: obtained.url,
  };
  if (!discovery.ok) return unknownOutcome(domain, discovery.code, discovery.message, false, sources);
  if (!obtained.ok) return unknownOutcome(domain, obtained.code, obtained.message, true, sources);

  const keyed = await verifyWithNodeJwks(discovery, obtained.envelope, deps);
  if (!keyed.ok) return unknownOutcome(domain, keyed.code, keyed.message, true, sources);

  const verification = keyed.verification;
  const failures = stayGateFailures(verification, domain, args);
  const payload = verification.payload;
  const safe = failures.length === 0;
  // Core §9: an offer signed for another stay or another node is not an answer about this one.
  const answersRequest = !failures.includes('offer_request_mismatch') && !failures.includes('offer_domain_mismatch');
  const assessment = assessFacts({ discovered: true, verification, safeToQuote: safe, answersRequest });
  const signedOffer = verification.status === 'verified' || verification.status === 'expired' ? (payload as unknown as OfferPayload) : null;
  const price = obj(payload?.price);
  return {
    domain,
    status: verification.status,
    code: verification.code,
    reason: verification.reason,
    safe_to_quote: safe,
    failures,
    facts: assessment.facts,
    safe_to_cite_verified_unavailable: assessment.safe_to_cite_verified_unavailable,
    must_fetch_fresh_offer: assessment.must_fetch_fresh_offer,
    result: answersRequest ? officialResult(domain, verification, safe, failures) : null,
    verification,
    offer: signedOffer,
    quote:
      safe && signedOffer
        ? {
            phrase: CANONICAL_PHRASE,
            currency: price.currency as string,
            // Quote `agent_total` when present, exact and signed (vrp-protocol.md §3.3).
            total: (price.agent_total ?? price.public_total) as number,
            minor_unit: price.minor_unit === true,
            direct_booking_url: signedOffer.booking.direct_booking_url,
            refund_schedule: Array.isArray(signedOffer.rules?.refund_schedule) ? signedOffer.rules.refund_schedule : null,
          }
        : null,
    sources,
  };
}

/**
 * `fetchVerifiedStayOffer(domain, { check_in, check_out, guests }, { fetch, now, jwksCache })`:
 * discovery → JWKS (cached) → offer → verification → gate → facts. Throws only for invalid
 * arguments (`invalid_offer_request`); every network or artifact failure is an outcome.
 */
export async function fetchVerifiedStayOffer(domain: string, args: OfferRequestArgs, deps: VerifyDeps): Promise<StayOfferVerification> {
  const request = checkOfferRequest(args);
  const discovery = await fetchDiscovery(domain, { fetch: deps.fetch });
  const obtained: EnvelopeOutcome = discovery.ok
    ? await fetchOfferEnvelope(discovery.discovery, request, { fetch: deps.fetch })
    : { ok: false, code: discovery.code, message: discovery.message, url: null };
  return verifyStayOfferEnvelope(discovery, obtained, request, deps);
}
