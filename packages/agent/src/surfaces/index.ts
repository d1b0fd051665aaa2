/**
 * `getOfferVia(surface, target, args, options)`: fetch a node's signed offer through one
 * surface and judge it exactly as an offer fetched over HTTPS (Node Tool Binding v0.1 §6, §8):
 * verified against the JWKS the offer's own canonical domain publishes, with the
 * safe-to-quote check, plus the origin check that says whose voice the surface is.
 */
import { type FetchLike, systemClock } from '@vrpkit/core';
import type { Surface } from '@vrpkit/protocol';
import { isOnCanonicalDomain } from '../canonical-domain.js';
import { createHardenedFetch } from '../hardened-fetch.js';
import { JwksCache } from '../jwks-cache.js';
import { verifyEnvelopeFromNode } from '../offer/verify-relayed.js';
import { checkMcpCallReceipt, createReceiptJwksResolver, signerJwksOf } from '../receipt/index.js';
import { fetchViaA2a } from './a2a.js';
import { fetchViaHttp } from './http.js';
import { fetchViaMcp } from './mcp.js';
import type { OfferArgs, SurfaceClassification, SurfaceClientOptions, SurfaceContext, SurfaceFetch, SurfaceReport } from './types.js';
import { fetchViaWebMcp } from './webmcp.js';

// The ways an agent asks a node for its offer (Node Tool Binding v0.1 §2): protocol's one list.
export { SURFACES, type Surface } from '@vrpkit/protocol';
// Node Tool Binding v0.1: the surface client's shapes (§3–§8).
export type {
  BrowserOptions,
  ListedTool,
  OfferArgs,
  QuotableTotal,
  SurfaceClassification,
  SurfaceClientOptions,
  SurfaceError,
  SurfaceReport,
} from './types.js';
// WebMCP through Chromium: the browser settings the CLI and the test kit share.
export {
  CHROMIUM_BASE_ARGS,
  CHROMIUM_ENV,
  chromiumExecutable,
  chromiumNetworkArgs,
  chromiumUnavailable,
  DEFAULT_CHROMIUM,
  spkiSha256,
} from './webmcp.js';

const FETCHERS: Record<Surface, (target: string, args: OfferArgs, ctx: SurfaceContext) => Promise<SurfaceFetch>> = {
  http: fetchViaHttp,
  mcp: fetchViaMcp,
  a2a: fetchViaA2a,
  webmcp: fetchViaWebMcp,
};

/** §6: every host the surface was served from is the offer's canonical domain or a subdomain. */
function originBound(servedFrom: string[], canonicalDomain: string | null): boolean {
  return canonicalDomain !== null && servedFrom.length > 0 && servedFrom.every((host) => isOnCanonicalDomain(host, canonicalDomain));
}

function classify(fetched: SurfaceFetch, surface: Surface, bound: boolean | null): SurfaceClassification {
  if (!fetched.reached) return 'unreachable';
  // The plain endpoint has no tool list; every tool surface must list the exact name (§3).
  if (surface !== 'http' && fetched.tool_name === null) return 'not_the_capability';
  // §6, §7: an offer from another domain's surface is an operator tool's result, whatever the name.
  return bound === false ? 'operator_tool' : 'node_tool';
}

/** The MCP-only members of a fetch (the raw result, the revision used), carried into the report when present. */
function mcpOnly({ raw_result, mcp_protocol_version }: SurfaceFetch): Pick<SurfaceReport, 'raw_result' | 'mcp_protocol_version'> {
  return { ...(raw_result !== undefined ? { raw_result } : {}), ...(mcp_protocol_version !== undefined ? { mcp_protocol_version } : {}) };
}

export async function getOfferVia(
  surface: Surface,
  target: string,
  args: OfferArgs,
  options: SurfaceClientOptions = {},
): Promise<SurfaceReport> {
  const owned = options.fetch ? null : createHardenedFetch(options.network);
  const fetch: FetchLike = options.fetch ?? (owned as FetchLike);
  try {
    const fetched = await FETCHERS[surface](target, args, { fetch, options });
    const base = {
      surface,
      surface_url: fetched.surface_url,
      reached: fetched.reached,
      tools: fetched.tools,
      tool_name: fetched.tool_name,
      envelope: fetched.envelope,
      ...mcpOnly(fetched),
    };
    if (fetched.envelope === null || fetched.envelope === undefined) {
      return {
        ...base,
        canonical_domain: null,
        origin_bound: null,
        classification: classify(fetched, surface, null),
        verification: null,
        safe_to_quote: false,
        failures: [],
        total: null,
        error: fetched.error,
      };
    }
    const jwksCache = options.jwksCache ?? new JwksCache({ fetch, ...(options.clock ? { clock: options.clock } : {}) });
    const verified = await verifyEnvelopeFromNode(fetched.envelope, args, {
      fetch,
      jwksCache,
      ...(options.clock ? { clock: options.clock } : {}),
    });
    const bound = originBound(fetched.served_from, verified.canonical_domain);
    // MCP composition profile: verify the call's receipt and bind it to the call sent (docs/receipts.md).
    const receipt =
      surface === 'mcp' && fetched.raw_result !== undefined
        ? await checkMcpCallReceipt({
            callResult: fetched.raw_result,
            sentCall: { tool: fetched.tool_name ?? '', arguments: { ...args } },
            envelope: fetched.envelope,
            surfaceHost: fetched.served_from[0] ?? '',
            // Node Tool Binding v0.1 §6: receipt keys come only from the jwks_url the node's discovery names; without one, none resolve.
            resolveJwks:
              verified.jwks_url === null
                ? () => null
                : createReceiptJwksResolver({
                    issuerDomain: verified.canonical_domain ?? '',
                    jwksUrl: verified.jwks_url,
                    cache: jwksCache,
                  }),
            resolveSignerJwks:
              verified.jwks_url === null || verified.canonical_domain === null
                ? () => null
                : signerJwksOf({ domain: verified.canonical_domain, jwksUrl: verified.jwks_url, cache: jwksCache }),
            now: (options.clock ?? systemClock).now(),
          })
        : undefined;
    return {
      ...base,
      ...(receipt ? { receipt } : {}),
      canonical_domain: verified.canonical_domain,
      origin_bound: bound,
      classification: classify(fetched, surface, bound),
      verification: verified.verification,
      // §6/§7: only the node's own voice is quoted as the node's offer.
      safe_to_quote: verified.safe_to_quote && bound,
      failures: verified.failures,
      total: bound ? verified.total : null,
      error: fetched.error ?? verified.key_error,
    };
  } finally {
    await owned?.close();
  }
}
