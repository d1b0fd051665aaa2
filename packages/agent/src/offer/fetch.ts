/**
 * `fetchVerifiedStayOffer`, the agent's end-to-end check (Core VRP v0.1 §2–§9): discovery on the host
 * domain, the JWKS through the cache, the offer from the node's endpoint, `verifyOffer`, then
 * safe to quote (Core VRP v0.1 §7, `quote.ts`) and the three-state facts (Core VRP v0.1 §9). Fail closed: any
 * network, HTTP, JSON or shape failure leaves every dependent fact unknown and the offer not
 * safe to quote. `result` is the official verification-result object (`result.ts`) or null.
 */
import { asRecord, type Clock, type FetchLike, systemClock } from '@vrpkit/core';
import {
  CANONICAL_PHRASE,
  type DiscoveryDocument,
  ENVELOPE_KIND,
  type OfferPayload,
  type OfferRequestArgs,
  type OfferRequestInput,
  PROTOCOL_VERSION,
  parseOfferRequest,
  type RefundScheduleRow,
  type VerificationResult,
} from '@vrpkit/protocol';
import { type DiscoveryCache, type DiscoveryOutcome, fetchDiscovery } from '../discovery.js';
import { AgentUsageError } from '../errors.js';
import { getJsonText } from '../http-get.js';
import type { JwksCache } from '../jwks-cache.js';
import { assessFacts, type Fact, type FactName } from '../three-state.js';
import { type StayQuoteFailureCode, stayQuoteFailures } from './quote.js';
import { officialVerificationResult } from './result.js';
import { type OfferStatus, type OfferVerificationResult, readOffer, readOfferKid, verifyReadOffer } from './verify.js';

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
  /** Every failed safe-to-quote condition (empty when safe to quote). */
  failures: StayQuoteFailureCode[];
  /** Core VRP v0.1 §9 facts with their verifiability class. */
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
  /**
   * The verifier's clock; freshness is judged at `clock.now()`. Default: the system clock, as the
   * gate's and the JWKS cache's (issue 36: a caller without one, e.g. JavaScript passing the older
   * `now` option, failed every call with a TypeError as its code).
   */
  clock?: Clock;
  jwksCache: JwksCache;
  /** Discovery documents under the JWKS's cache policy; without one, every verification reads discovery afresh. */
  discoveryCache?: DiscoveryCache;
}

/**
 * Core VRP v0.1 §4 request parameters, checked with the protocol's one request parser (the node's own
 * rules and codes: real calendar dates, guests 1–1000, no unknown key). Today and the booking
 * horizon are the node's to judge. Throws `AgentUsageError` carrying the parser's code.
 */
export function checkOfferRequest(args: OfferRequestInput): OfferRequestArgs {
  const parsed = parseOfferRequest(args);
  if (!parsed.ok) throw new AgentUsageError(parsed.error.code, { reason: parsed.error.message });
  const { check_in, check_out, guests } = parsed.request;
  return { check_in, check_out, guests };
}

/** Characters `application/x-www-form-urlencoded` writes as themselves (WHATWG URL §5.2). */
const FORM_PLAIN = /^[0-9A-Za-z*._-]*$/;
/** The offer endpoint last seen, and its href when it has no query or fragment of its own (else null). */
let lastEndpoint = '';
let lastEndpointHref: string | null = null;

/**
 * The endpoint with the Core VRP v0.1 §4 query set, as `URL.searchParams.set` writes it. Parsing
 * the endpoint and serialising the query three times cost more than the rest of the request's
 * URL handling: for the usual endpoint (no query, no fragment) and plain values (a checked
 * request's dates and guest count) the same string is built directly.
 */
export function offerRequestUrl(endpoint: string, args: OfferRequestArgs): string {
  const guests = String(args.guests);
  if (endpoint !== lastEndpoint) {
    const parsed = new URL(endpoint);
    lastEndpointHref = parsed.href.includes('?') || parsed.href.includes('#') ? null : parsed.href;
    lastEndpoint = endpoint;
  }
  if (lastEndpointHref !== null && FORM_PLAIN.test(args.check_in) && FORM_PLAIN.test(args.check_out) && FORM_PLAIN.test(guests)) {
    return `${lastEndpointHref}?check_in=${args.check_in}&check_out=${args.check_out}&guests=${guests}`;
  }
  const url = new URL(endpoint);
  url.searchParams.set('check_in', args.check_in);
  url.searchParams.set('check_out', args.check_out);
  url.searchParams.set('guests', guests);
  return url.toString();
}

/**
 * GET the envelope from the discovery document's offer endpoint (Core VRP v0.1 §4: snake_case query).
 * The one place the envelope is obtained over HTTP; other transports produce an `EnvelopeOutcome` too.
 */
export async function fetchOfferEnvelope(
  discovery: DiscoveryDocument,
  args: OfferRequestArgs,
  opts: { fetch: FetchLike },
): Promise<EnvelopeOutcome> {
  return (await getOfferEnvelope(discovery, args, opts.fetch)).obtained;
}

/** `fetchOfferEnvelope`, with the response text the envelope was parsed from (undefined when none was). */
async function getOfferEnvelope(
  discovery: DiscoveryDocument,
  args: OfferRequestArgs,
  fetch: FetchLike,
): Promise<{ obtained: EnvelopeOutcome; text?: string }> {
  const href = offerRequestUrl(discovery.verified_stay_offer_endpoint, args);
  const got = await getJsonText(fetch, href, 'offer');
  if (!got.ok) return { obtained: { ok: false, code: 'offer_unreachable', message: got.message, url: href } };
  const { res, text } = got;
  if (res.status !== 200) {
    return { obtained: { ok: false, code: 'offer_http_error', message: `offer endpoint answered HTTP ${res.status}`, url: href } };
  }
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    return { obtained: { ok: false, code: 'offer_not_json', message: 'offer response is not JSON', url: href } };
  }
  return { obtained: checkEnvelopeShape(envelope, href), text };
}

/** Minimal envelope shape (Core VRP v0.1 §5): kind, version, an offer object and a signature object; else unknown. */
export function checkEnvelopeShape(envelope: unknown, url: string | null): EnvelopeOutcome {
  const e = asRecord(envelope);
  if (
    !e ||
    e.kind !== ENVELOPE_KIND ||
    e.protocol_version !== PROTOCOL_VERSION ||
    !asRecord(e.signature)?.jws ||
    // Not `isRecord`: an array `offer` is left for `verifyOffer` to refuse (payload_offer_mismatch), as before.
    typeof e.offer !== 'object' ||
    e.offer === null
  ) {
    return { ok: false, code: 'offer_schema_mismatch', message: `response is not a ${ENVELOPE_KIND} envelope`, url };
  }
  return { ok: true, envelope: e, url };
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
 * read through the cache — never a key set delivered with the envelope (Core VRP v0.1 §3; Node Tool
 * Binding v0.1 §6, §8 rule 1). Never throws: an unusable discovery or JWKS is an outcome.
 * `envelopeText` is the text `envelope` was parsed from, given only when no caller holds the
 * envelope (verify.ts `readOffer`: its offer may then serve as the signed payload).
 */
export async function verifyWithNodeJwks(
  discovery: DiscoveryOutcome,
  envelope: unknown,
  deps: Omit<VerifyDeps, 'fetch'>,
  envelopeText?: string,
): Promise<NodeKeyVerification> {
  if (!discovery.ok) return { ok: false, jwks_url: null, code: discovery.code, message: discovery.message };
  const jwksUrl = discovery.discovery.jwks_url;
  // The JWS is parsed once: key selection is the verifier's (header kid); the cache only needs the kid for refresh-on-miss.
  const read = readOffer({ envelope }, envelopeText);
  const jwks = await deps.jwksCache.get(jwksUrl, readOfferKid(read));
  if (!jwks.ok) return { ok: false, jwks_url: jwksUrl, code: jwks.code, message: jwks.message };
  return {
    ok: true,
    jwks_url: jwksUrl,
    verification: verifyReadOffer(read, jwks.jwks, (deps.clock ?? systemClock).now(), deps.jwksCache.signatureMemo),
  };
}

/**
 * Verify an envelope obtained for `domain` (over HTTP, or through a tool surface) against the
 * JWKS named by the node's own discovery document, and check it is safe to quote for the stay asked. Never throws for a
 * bad artifact or an unreachable node.
 */
export function verifyStayOfferEnvelope(
  discovery: DiscoveryOutcome,
  obtained: EnvelopeOutcome,
  args: OfferRequestArgs,
  deps: Omit<VerifyDeps, 'fetch'>,
): Promise<StayOfferVerification> {
  return verifyObtainedEnvelope(discovery, obtained, args, deps);
}

/** `verifyStayOfferEnvelope`; `envelopeText` as for `verifyWithNodeJwks`. */
async function verifyObtainedEnvelope(
  discovery: DiscoveryOutcome,
  obtained: EnvelopeOutcome,
  args: OfferRequestArgs,
  deps: Omit<VerifyDeps, 'fetch'>,
  envelopeText?: string,
): Promise<StayOfferVerification> {
  const domain = discovery.domain;
  const sources = {
    discovery_url: discovery.url,
    jwks_url: discovery.ok ? discovery.discovery.jwks_url : null,
    offer_url: obtained.url,
  };
  if (!discovery.ok) return unknownOutcome(domain, discovery.code, discovery.message, false, sources);
  if (!obtained.ok) return unknownOutcome(domain, obtained.code, obtained.message, true, sources);

  const keyed = await verifyWithNodeJwks(discovery, obtained.envelope, deps, envelopeText);
  if (!keyed.ok) return unknownOutcome(domain, keyed.code, keyed.message, true, sources);

  const verification = keyed.verification;
  const failures = stayQuoteFailures(verification, domain, args);
  const payload = verification.payload;
  const safe = failures.length === 0;
  // Core VRP v0.1 §9: an offer signed for another stay or another node is not an answer about this one.
  const answersRequest = !failures.includes('offer_request_mismatch') && !failures.includes('offer_domain_mismatch');
  const assessment = assessFacts({ discovered: true, verification, safeToQuote: safe, answersRequest });
  const signedOffer = verification.status === 'verified' || verification.status === 'expired' ? (payload as unknown as OfferPayload) : null;
  const price = asRecord(payload?.price);
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
    result: answersRequest ? officialVerificationResult(domain, verification, safe, failures) : null,
    verification,
    offer: signedOffer,
    quote:
      safe && signedOffer
        ? {
            phrase: CANONICAL_PHRASE,
            currency: price?.currency as string,
            // Quote `agent_total` when present, exact and signed, as the reference agent does.
            total: (price?.agent_total ?? price?.public_total) as number,
            minor_unit: price?.minor_unit === true,
            direct_booking_url: signedOffer.booking.direct_booking_url,
            refund_schedule: Array.isArray(signedOffer.rules?.refund_schedule) ? signedOffer.rules.refund_schedule : null,
          }
        : null,
    sources,
  };
}

/**
 * `fetchVerifiedStayOffer(domain, { check_in, check_out, guests }, { fetch, clock, jwksCache })`:
 * discovery → JWKS (cached) → offer → verification → safe to quote → facts. Throws only for invalid
 * arguments (`invalid_offer_request`); every network or artifact failure is an outcome.
 */
export async function fetchVerifiedStayOffer(domain: string, args: OfferRequestArgs, deps: VerifyDeps): Promise<StayOfferVerification> {
  const request = checkOfferRequest(args);
  const verdict = await verifyStayVia(domain, request, deps, false);
  // A cached discovery document may be out of date: when the verdict failed for a reason a newer one could fix, read it again, once.
  return deps.discoveryCache && NEWER_DISCOVERY_COULD_FIX.has(verdict.code ?? '') ? verifyStayVia(domain, request, deps, true) : verdict;
}

/** Failures a newer discovery document could fix: it may name another offer endpoint or JWKS URL. */
const NEWER_DISCOVERY_COULD_FIX = new Set([
  'offer_unreachable',
  'offer_http_error',
  'offer_not_json',
  'offer_schema_mismatch',
  'jwks_unreachable',
  'jwks_http_error',
  'jwks_not_json',
  'jwks_schema_mismatch',
  'kid_not_in_jwks',
]);

/** One pass: discovery (through the cache when there is one; `refresh` skips its entry) → offer → verification. */
async function verifyStayVia(
  domain: string,
  request: OfferRequestArgs,
  deps: VerifyDeps,
  refresh: boolean,
): Promise<StayOfferVerification> {
  const discovery = deps.discoveryCache
    ? await deps.discoveryCache.get(domain, { refresh })
    : await fetchDiscovery(domain, { fetch: deps.fetch });
  // The envelope is parsed here and handed to no caller, so its text may stand in for a second parse of the signed payload.
  const { obtained, text }: { obtained: EnvelopeOutcome; text?: string } = discovery.ok
    ? await getOfferEnvelope(discovery.discovery, request, deps.fetch)
    : { obtained: { ok: false, code: discovery.code, message: discovery.message, url: null } };
  return verifyObtainedEnvelope(discovery, obtained, request, deps, text);
}
