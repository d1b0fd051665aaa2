/**
 * Verify an envelope that arrived through a tool surface (Node Tool Binding v0.1 §6, §8): the key
 * set is the one the offer's own canonical domain names in its discovery document, fetched from
 * that domain — never anything the surface delivered. The surface is only a transport.
 */
import { asRecord, type Clock, type FetchLike, systemClock } from '@vrpkit/core';
import type { OfferRequestArgs } from '@vrpkit/protocol';
import { normalizeHost } from '../canonical-domain.js';
import { fetchDiscovery } from '../discovery.js';
import type { JwksCache } from '../jwks-cache.js';
import type { QuotableTotal, SurfaceError } from '../surfaces/types.js';
import { type NodeKeyVerification, verifyWithNodeJwks } from './fetch.js';
import { type StayQuoteFailureCode, stayQuoteFailures } from './quote.js';
import { type OfferVerificationResult, verifyOffer } from './verify.js';

export interface NodeVerification {
  /** The offer's canonical domain as a normalised host, or null when the envelope has none. */
  canonical_domain: string | null;
  /** The `jwks_url` of the canonical domain's discovery document (null when discovery failed): the node's only key set (§6). */
  jwks_url: string | null;
  verification: OfferVerificationResult;
  /** Why the offer may not be quoted for the stay asked (Core VRP v0.1 §7 and the signed request/domain checks); empty when safe. */
  failures: StayQuoteFailureCode[];
  safe_to_quote: boolean;
  total: QuotableTotal | null;
  /** Why no key set could be read (discovery or JWKS failure): the offer is then unverifiable. */
  key_error: SurfaceError | null;
}

/** The unverified `offer.canonical_domain`: it only says which node's keys to ask for. */
export function claimedCanonicalDomain(envelope: unknown): string | null {
  return normalizeHost(asRecord(asRecord(envelope)?.offer)?.canonical_domain);
}

function quotableTotal(payload: Record<string, unknown> | null): QuotableTotal | null {
  const price = asRecord(payload?.price);
  const amount = price?.agent_total ?? price?.public_total;
  if (typeof amount !== 'number' || typeof price?.currency !== 'string') return null;
  return { amount, currency: price.currency, minor_unit: price.minor_unit === true };
}

export async function verifyEnvelopeFromNode(
  envelope: unknown,
  args: OfferRequestArgs,
  ctx: { fetch: FetchLike; jwksCache: JwksCache; clock?: Clock },
): Promise<NodeVerification> {
  const clock = ctx.clock ?? systemClock;
  const domain = claimedCanonicalDomain(envelope);
  const keyed: NodeKeyVerification = domain
    ? await verifyWithNodeJwks(await fetchDiscovery(domain, { fetch: ctx.fetch }), envelope, { jwksCache: ctx.jwksCache, clock })
    : {
        ok: false,
        jwks_url: null,
        code: 'canonical_domain_missing',
        message: 'the offer names no canonical_domain, so no node key set applies',
      };
  // No usable key set is "no keys": verifyOffer answers kid_not_in_jwks → unverifiable, never invalid.
  const verification = keyed.ok ? keyed.verification : verifyOffer({ envelope, jwks: null, now: clock.now() });
  // The same safe-to-quote check as an offer fetched over HTTPS (Node Tool Binding v0.1 §8, rule 2), including that
  // the signed request is the stay the agent asked the surface for.
  const failures = stayQuoteFailures(verification, domain ?? '', args);
  const safe = failures.length === 0;
  return {
    canonical_domain: domain,
    jwks_url: keyed.jwks_url,
    verification,
    failures,
    safe_to_quote: safe,
    total: safe ? quotableTotal(verification.payload) : null,
    key_error: keyed.ok ? null : { code: keyed.code, message: keyed.message },
  };
}
