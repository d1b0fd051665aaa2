/**
 * The production `resolveJwks` for `verifyReceipt` (VRP receipt envelope v1 leaves key resolution to the verifier;
 * vrpkit resolves only from the issuer's own domain, as Node Tool Binding v0.1 §6 does for offers): an
 * attestation's `source` is resolved only when it is an https URL on the issuer's own domain,
 * and only through the agent's JWKS cache (Core VRP v0.1 §3.1: ≤ 300 s, refresh-on-miss, coalescing,
 * no stale fallback). Anything else resolves to `null`, which `verifyReceipt` reports as
 * `unverifiable` / `key_unresolvable` — a receipt never chooses where its keys come from.
 */
import { asRecord, type FetchLike } from '@vrpkit/core';
import { normalizeHost } from '../canonical-domain.js';
import { fetchDiscovery } from '../discovery.js';
import { type JwksCache, jwsHeaderKid } from '../jwks-cache.js';
import type { ResolveSignerJwks } from './mcp-receipt.js';
import type { ResolveReceiptJwks } from './verify.js';

export interface ReceiptJwksResolverOptions {
  /** The domain the verifier expects to have signed (e.g. the offer's `canonical_domain`, the surface host). */
  issuerDomain: string;
  /**
   * The JWKS URL the issuer's discovery document names (Node Tool Binding v0.1 §6), when the caller
   * has it: `source` must then be exactly this URL.
   */
  jwksUrl?: string;
  cache: Pick<JwksCache, 'get'>;
}

/**
 * Whether a receipt attestation's `source` may be fetched for `issuerDomain`: an https URL
 * whose host is the issuer's domain itself (not a subdomain — a node publishes one JWKS, on
 * its canonical host, Core VRP v0.1 §2), on the default port, without credentials.
 */
export function isReceiptSourceOnIssuerDomain(source: unknown, issuerDomain: string): boolean {
  if (typeof source !== 'string') return false;
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    return false;
  }
  const domain = normalizeHost(issuerDomain);
  return (
    domain !== null && url.protocol === 'https:' && url.port === '' && url.username === '' && url.password === '' && url.hostname === domain
  );
}

export function createReceiptJwksResolver(options: ReceiptJwksResolverOptions): ResolveReceiptJwks {
  return async (source, attestation) => {
    if (!isReceiptSourceOnIssuerDomain(source, options.issuerDomain)) return null;
    if (options.jwksUrl !== undefined && source !== options.jwksUrl) return null;
    const lookup = await options.cache.get(source as string, jwsHeaderKid(attestation.signature));
    return lookup.ok ? lookup.jwks : null;
  };
}

/** The issuer domain a receipt names (`issuer.node`, the receipt vectors' shape), or null. */
export function receiptIssuerDomain(receipt: unknown): string | null {
  return normalizeHost(asRecord(asRecord(receipt)?.issuer)?.node);
}

/**
 * The production `resolveSignerJwks` for `verifyMcpReceipt`: the signing domain's keys, read
 * from the `jwks_url` that domain's own discovery document names (Core VRP v0.1 §2, Node Tool Binding
 * §6) through the JWKS cache. Never a receipt's `source` or `issuer`: a domain that republishes
 * another node's key set cannot lend it its name.
 */
export function createSignerJwksResolver(options: { fetch: FetchLike; cache: Pick<JwksCache, 'get'> }): ResolveSignerJwks {
  return async (domain, kid) => {
    const discovery = await fetchDiscovery(domain, { fetch: options.fetch });
    if (!discovery.ok) return null;
    const lookup = await options.cache.get(discovery.discovery.jwks_url, kid);
    return lookup.ok ? lookup.jwks : null;
  };
}

/** `resolveSignerJwks` when the caller already read `domain`'s discovery: its `jwksUrl` for that domain, nothing for any other. */
export function signerJwksOf(options: { domain: string; jwksUrl: string; cache: Pick<JwksCache, 'get'> }): ResolveSignerJwks {
  return async (domain, kid) => {
    if (domain !== options.domain) return null;
    const lookup = await options.cache.get(options.jwksUrl, kid);
    return lookup.ok ? lookup.jwks : null;
  };
}
