import type { Clock, FetchLike } from '@vrpkit/core';
import type { Surface } from '@vrpkit/protocol';
import type { HardenedFetchOptions } from '../hardened-fetch.js';
import type { JwksCache } from '../jwks-cache.js';
import type { StayQuoteFailureCode } from '../offer/quote.js';
import type { OfferVerificationResult } from '../offer/verify.js';
import type { McpReceiptCheck } from '../receipt/mcp-binding.js';

/**
 * Who answered (Node Tool Binding v0.1 §2, §3, §6, §7) — never whether the answer is good; that is
 * `verification` and `safe_to_quote`:
 * - `node_tool`: the surface listed the exact bound name and, when an offer arrived, it was
 *   served from the offer's `canonical_domain` (or a subdomain);
 * - `operator_tool`: an offer arrived through a surface on another domain (§6, §11) — it may
 *   still verify, as that other domain's offer, never as this surface's own voice;
 * - `not_the_capability`: the surface answered but lists no tool under the exact name (§3);
 * - `unreachable`: the surface could not be read at all.
 */
export type SurfaceClassification = 'node_tool' | 'operator_tool' | 'not_the_capability' | 'unreachable';

/** One capability as a surface lists it. Names and schemas are data, never trust signals (§8). */
export interface ListedTool {
  name: string;
  /** MCP `inputSchema` / WebMCP `inputSchema`; null where the surface has none (an A2A skill). */
  input_schema: unknown;
}

/** The quotable total of a safe-to-quote offer, in the offer's own units. */
export interface QuotableTotal {
  amount: number;
  currency: string;
  minor_unit: boolean;
}

export interface SurfaceError {
  code: string;
  message: string;
}

/** `getOfferVia` result: one row of the `vrp verify --via` table. */
export interface SurfaceReport {
  surface: Surface;
  /** The URL the capability was called at (MCP endpoint, A2A interface, page, offer endpoint). */
  surface_url: string | null;
  reached: boolean;
  /** Every capability the surface listed (MCP tools, A2A skills, WebMCP registered tools). */
  tools: ListedTool[];
  /** The bound name when the surface lists it exactly once, else null (nothing was called). */
  tool_name: string | null;
  /** The offer's `canonical_domain` (unverified until `verification.status` is verified). */
  canonical_domain: string | null;
  /** §6: every host the surface was served from is the offer's canonical domain or a subdomain; null without an offer. */
  origin_bound: boolean | null;
  classification: SurfaceClassification;
  /** Core VRP v0.1 §9 verification against the JWKS named by the canonical domain's own discovery document; null when no offer arrived. */
  verification: OfferVerificationResult | null;
  safe_to_quote: boolean;
  /** Why the offer may not be quoted for the stay asked, as for an offer fetched over HTTPS (Core VRP v0.1 §7 + the signed request/domain checks); empty when none was verified or it is safe. */
  failures: StayQuoteFailureCode[];
  /** Set only when safe to quote (agent_total when present, else public_total). */
  total: QuotableTotal | null;
  /** Why nothing verifiable arrived (surface error, isError result, failed task, rejected promise …). */
  error: SurfaceError | null;
  /** The envelope exactly as received, for audit. */
  envelope: unknown;
  /** MCP only: the raw `CallToolResult` (its `_meta` may carry a transport receipt). */
  raw_result?: unknown;
  /** MCP only: the protocol revision the call was made on (2026-07-28 with a node that offers it, else the 2025 one negotiated). */
  mcp_protocol_version?: string;
  /** MCP only: the receipt verified layer by layer and bound to the call sent (MCP composition profile). */
  receipt?: McpReceiptCheck;
}

/** Chromium for the WebMCP surface. */
export interface BrowserOptions {
  /** Default `VRPKIT_CHROMIUM` or `/usr/bin/chromium`. */
  executablePath?: string;
  /** How long to wait for the page to register its tools (default 5 000 ms). */
  toolWaitMs?: number;
}

export interface SurfaceClientOptions {
  /**
   * The agent's network policy (connect-to map, extra CA): used to build the hardened fetch
   * when `fetch` is not given, and to point Chromium at the same addresses and certificates.
   */
  network?: HardenedFetchOptions;
  /** A fetch to use instead of one built from `network` (give it a `createHardenedFetch`). */
  fetch?: FetchLike;
  /** Shared JWKS cache (Core VRP v0.1 §3.1); one is made per call otherwise. */
  jwksCache?: JwksCache;
  clock?: Clock;
  /** A2A protocol: the SDK client over 1.0 (default), or a raw 0.3 `message/send`. */
  a2aProtocol?: '1.0' | '0.3';
  browser?: BrowserOptions;
}

/** The three arguments of Node Tool Binding v0.1 §4 (snake_case); sent as given, nothing more (§12). */
export interface OfferArgs {
  check_in: string;
  check_out: string;
  guests: number;
}

/** What a surface client brings back before verification. */
export interface SurfaceFetch {
  surface_url: string | null;
  /** Every host the capability was served from; all must be on the offer's domain (§6). */
  served_from: string[];
  reached: boolean;
  tools: ListedTool[];
  tool_name: string | null;
  envelope: unknown;
  error: SurfaceError | null;
  raw_result?: unknown;
  mcp_protocol_version?: string;
}

export interface SurfaceContext {
  fetch: FetchLike;
  options: SurfaceClientOptions;
}
