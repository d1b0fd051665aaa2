/**
 * Three-state facts (Core VRP v0.1 §9; the vrp-spec fixture `three-state-verification.v0.1.json`).
 * Affirmed and negated come only from fresh, signature-verified values; everything absent,
 * unsigned, stale, unreachable, malformed or failed is unknown. Unknown is never reported as
 * true or false, and nothing is inferred from it. Each fact carries its verifiability class
 * (Core VRP v0.1 §5.4), which follows where the value was read: the signed payload → `verifiable`, the
 * discovery document → `attested`; an unknown fact was read from nowhere trustworthy → null.
 */
import { asRecord } from '@vrpkit/core';
import type { ThreeState, VerifiabilityClass } from '@vrpkit/protocol';
import { isAvailable, isExactPrice } from './offer/quote.js';
import type { OfferVerificationResult } from './offer/verify.js';

export const FACT_NAMES = [
  'canonical_domain',
  'verified_stay_offer_endpoint',
  'signature',
  'offer_freshness',
  'availability',
  'price',
  'direct_booking_url',
  'agent_permission',
  'refund_schedule',
] as const;
export type FactName = (typeof FACT_NAMES)[number];

export interface Fact {
  value: ThreeState;
  /** Where the value was read (Core VRP v0.1 §5.4); null when it is unknown. */
  class: VerifiabilityClass | null;
  /** The document it was read from, for humans: `discovery`, `jws`, `signed_payload`, or `none`. */
  read_from: 'discovery' | 'jws' | 'signed_payload' | 'none';
}

export interface ThreeStateAssessment {
  facts: Record<FactName, Fact>;
  safe_to_quote_official_direct_offer: boolean;
  /** A fresh, verified, explicit `available: false` (a signed negative). */
  safe_to_cite_verified_unavailable: boolean;
  /** Nothing fresh and verified is in hand. */
  must_fetch_fresh_offer: boolean;
}

export interface AssessFactsInput {
  /** Discovery outcome: true = checked (Core VRP v0.1 §7 1–3), false = failed/unreachable, null = not fetched (offline). */
  discovered: boolean | null;
  /** The offer verification, or null when no envelope was obtained. */
  verification: OfferVerificationResult | null;
  /** The safe-to-quote verdict (offline: `safeToQuote`; online: discovery + the stay check). */
  safeToQuote: boolean;
  /**
   * Whether the signed offer answers the question asked (its signed `request` is the stay asked
   * and its `canonical_domain` the node asked). An offer for another stay or node says nothing
   * about this one: its stay facts stay unknown and a fresh offer must be fetched. Default true
   * (offline verification has no question beyond the offer itself).
   */
  answersRequest?: boolean;
}

const UNKNOWN: Fact = { value: 'unknown', class: null, read_from: 'none' };
const signed = (value: ThreeState): Fact => (value === 'unknown' ? UNKNOWN : { value, class: 'verifiable', read_from: 'signed_payload' });

/** The Core VRP v0.1 §9 facts for one verification, per the reference fixture evaluator's semantics. */
export function assessFacts({ discovered, verification, safeToQuote, answersRequest = true }: AssessFactsInput): ThreeStateAssessment {
  const facts = {} as Record<FactName, Fact>;
  for (const n of FACT_NAMES) facts[n] = UNKNOWN;
  if (discovered === true) {
    facts.canonical_domain = { value: 'affirmed', class: 'attested', read_from: 'discovery' };
    facts.verified_stay_offer_endpoint = { value: 'affirmed', class: 'attested', read_from: 'discovery' };
  }
  const status = verification?.status;
  // invalid: the artifact failed (signature negated); everything inside it is unknown.
  if (status === 'invalid') facts.signature = { value: 'negated', class: 'verifiable', read_from: 'jws' };
  if (status === 'expired' || status === 'verified') facts.signature = { value: 'affirmed', class: 'verifiable', read_from: 'jws' };
  if (status === 'expired') facts.offer_freshness = signed('negated');
  if (status === 'verified') facts.offer_freshness = signed('affirmed');
  if (status === 'verified' && verification && answersRequest) {
    const p = verification.payload;
    const available = asRecord(asRecord(p)?.availability);
    // A stale calendar (`calendar_freshness.safe === false`) makes availability unknown either way.
    const calendarStale = asRecord(available?.calendar_freshness)?.safe === false;
    const availability: ThreeState = calendarStale
      ? 'unknown'
      : available?.available === true
        ? 'affirmed'
        : available?.available === false
          ? 'negated'
          : 'unknown';
    facts.availability = signed(availability);
    facts.price = signed(isAvailable(p) && isExactPrice(p) ? 'affirmed' : 'unknown');
    facts.direct_booking_url = signed(safeToQuote ? 'affirmed' : 'unknown');
    const mayQuote = asRecord(asRecord(p)?.agent_permission)?.may_quote_as_official_direct_offer;
    facts.agent_permission = signed(mayQuote === true ? 'affirmed' : mayQuote === false ? 'negated' : 'unknown');
    facts.refund_schedule = signed(Array.isArray(asRecord(asRecord(p)?.rules)?.refund_schedule) ? 'affirmed' : 'unknown');
  }
  return {
    facts,
    safe_to_quote_official_direct_offer: status === 'verified' && answersRequest && safeToQuote,
    safe_to_cite_verified_unavailable: facts.availability.value === 'negated',
    must_fetch_fresh_offer: status !== 'verified' || !answersRequest,
  };
}
