/** `vrp verify https://DOMAIN …`: discovery → JWKS → the offer for the stay → safe-to-quote, over HTTPS as an agent reads them. */
import {
  createHardenedFetch,
  type DiscoveryOutcome,
  type EnvelopeOutcome,
  fetchDiscovery,
  fetchOfferEnvelope,
  JwksCache,
  verifyStayOfferEnvelope,
} from '@vrpkit/agent';
import { type Clock, type FetchLike, fixedClock, systemClock } from '@vrpkit/core';
import type { OfferRequestArgs } from '@vrpkit/protocol';
import { CliError } from '../../errors.js';
import { readOptionFile } from '../../options.js';
import { exitCodeFor } from './stay.js';
import { printVerification, renderSummary } from './summary.js';

export interface OnlineOptions {
  json?: boolean;
  connectTo?: string[];
  cacert?: string;
  now?: string;
}

/**
 * Obtain the offer envelope for `args` from the node. This is the one transport-specific step of
 * `vrp verify`: today HTTP (Core §4, the endpoint the discovery document names); other
 * transports (MCP, A2A, WebMCP) branch here and return the same `EnvelopeOutcome`.
 */
export async function obtainEnvelope(discovery: DiscoveryOutcome, args: OfferRequestArgs, fetch: FetchLike): Promise<EnvelopeOutcome> {
  if (!discovery.ok) return { ok: false, code: discovery.code, message: discovery.message, url: null };
  return fetchOfferEnvelope(discovery.discovery, args, { fetch });
}

/** Verify the node's offer for `args`; the exit status is the verdict's (`exitCodeFor`). */
export async function verifyOnline(target: string, args: OfferRequestArgs, o: OnlineOptions): Promise<number> {
  const fetch = createHardenedFetch({
    ...(o.connectTo ? { connectTo: o.connectTo } : {}),
    ...(o.cacert ? { ca: readOptionFile(o.cacert, 'CA') } : {}),
  });
  try {
    const clock: Clock = o.now ? fixedClock(o.now) : systemClock;
    const discovery = await fetchDiscovery(target, { fetch });
    if (!discovery.ok && discovery.code === 'invalid_domain') throw new CliError('invalid_domain', { target });
    const obtained = await obtainEnvelope(discovery, args, fetch);
    const r = await verifyStayOfferEnvelope(discovery, obtained, args, { clock, jwksCache: new JwksCache({ fetch, clock }) });
    const jws = obtained.ok ? (obtained.envelope.signature as { jws?: unknown }).jws : null;
    if (o.json) printVerification(r, typeof jws === 'string' ? jws : null);
    else process.stdout.write(renderSummary(r, args));
    return exitCodeFor(r.status, r.safe_to_quote);
  } finally {
    await fetch.close();
  }
}
