/**
 * Verify an envelope that arrived through a tool surface (Node Tool Binding §6, §8): the key
 * set is the one the offer's own canonical domain names in its discovery document, fetched from
 * that domain — never anything the surface delivered. The surface is only a transport.
 */
import { type Clock, type FetchLike, parseCompactJws, systemClock } from '@vrpkit/core';
import { normalizeHost } from '../canonical-domain.js';
import { fetchDiscovery } from '../discovery.js';
import type { JwksCache } from '../jwks-cache.js';
import { quoteChecks } from '../quote.js';
import { type OfferVerificationResult, verifyOffer } from '../verify-offer.js';
import type { QuotableTotal, SurfaceError } from './types.js';

export interface NodeVerification {
  /** The offer's canonical domain as a normalised host, or null when the envelope has none. */
  canonical_domain: string | null;
  verification: OfferVerificationResult;
  safe_to_quote: boolean;
  total: QuotableTotal | null;
  /** Why no key set could be read (discovery or JWKS failure): the offer is then unverifiable. */
  key_error: SurfaceError | null;
}

const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The unverified `offer.canonical_domain`: it only says which node's keys to ask for. */
export function claimedCanonicalDomain(envelope: unknown): string | null {
  return normalizeHost(obj(obj(envelope).offer).canonical_domain);
}

function quotableTotal(payload: Record<string, unknown> | null): QuotableTotal | null {
  const price = obj(obj(payload).price);
  const amount = price.agent_total ?? price.public_total;
  if (typeof amount !== 'number' || typeof price.currency !== 'string') return null;
  return { amount, currency: price.currency, minor_unit: price.minor_unit === true };
}

export async function verifyEnvelopeFromNode(
  envelope: unknown,
  ctx: { fetch: FetchLike; jwksCache: JwksCache; clock?: Clock },
): Promise<NodeVerification> {
  const clock = ctx.clock ?? systemClock;
  const domain = claimedCanonicalDomain(envelope);
  // No usable key set is "no keys": verifyOffer answers kid_not_in_jwks → unverifiable, never invalid.
  let jwks: unknown = null;
  let keyError: SurfaceError | null = null;
  if (!domain) {
    keyError = { code: 'canonical_domain_missing', message: 'the offer names no canonical_domain, so no node key set applies' };
  } else {
    const discovery = await fetchDiscovery(domain, { fetch: ctx.fetch });
    if (!discovery.ok) {
      keyError = { code: discovery.code, message: discovery.message };
    } else {
      const parsed = parseCompactJws(obj(obj(envelope).signature).jws);
      const kid = parsed.ok && typeof parsed.jws.header.kid === 'string' ? parsed.jws.header.kid : undefined;
      const lookup = await ctx.jwksCache.get(discovery.discovery.jwks_url, kid);
      if (lookup.ok) jwks = lookup.jwks;
      else keyError = { code: lookup.code, message: lookup.message };
    }
  }
  const verification = verifyOffer({ envelope, jwks, now: clock.now() });
  const safe = quoteChecks(verification).ok;
  return {
    canonical_domain: domain,
    verification,
    safe_to_quote: safe,
    total: safe ? quotableTotal(verification.payload) : null,
    key_error: keyError,
  };
}
