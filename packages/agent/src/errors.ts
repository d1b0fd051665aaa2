/**
 * The agent's one code registry: every code the agent throws, and every code a surface report's
 * `error` carries when the surface could not be read (Node Tool Binding v0.1 §5: an unverified
 * outcome, never a pass). Verification verdicts keep their published vocabularies beside the rules
 * that decide them (`OfferReasonCode` is vrp-verify's, `ReceiptErrorCode` the receipt envelope's,
 * `DiscoveryDocumentCode` protocol's); offer-request codes are protocol's entries, referenced.
 */
import { type ErrorCodeEntry, errorClassFor } from '@vrpkit/core';
import { OFFER_REQUEST_CODES, type OfferRequestErrorCode, PROTOCOL_ERRORS } from '@vrpkit/protocol';

export const AGENT_ERRORS = {
  // Network reads of the hardened fetch. Each is an unknown for the facts that depended on the read (Core VRP v0.1 §9).
  insecure_scheme: { message: 'only https URLs are fetched' },
  redirect_off_domain: { message: 'a redirect left the host domain' },
  too_many_redirects: { message: 'more redirects than the fetch follows' },
  response_too_large: { message: 'the response is larger than the fetch reads' },
  timeout: { message: 'no complete response within the time budget' },
  connect_timeout: { message: 'the connection timed out' },
  dns_failure: { message: 'the host name did not resolve' },
  tls_failure: { message: 'the TLS handshake failed' },
  network_error: { message: 'the request failed' },
  // Usage: options and arguments an agent API refuses.
  invalid_connect_to: { message: 'a connect-to entry is not HOST:PORT:ADDR:PORT' },
  invalid_target: { message: 'a surface target is not an absolute http(s) URL' },
  invalid_domain: { message: 'not a host domain' },
  file_unreadable: { message: 'the file to verify cannot be read' },
  file_not_json: { message: 'the file to verify is not JSON' },
  // Surface reads (`SurfaceReport.error`): why nothing verifiable arrived.
  offer_unreachable: { message: 'the offer endpoint could not be read' },
  offer_http_error: { message: 'the offer endpoint answered an HTTP error' },
  offer_not_json: { message: 'the offer endpoint answered something that is not JSON' },
  mcp_unreachable: { message: 'the MCP endpoint could not be read' },
  mcp_call_failed: { message: 'the MCP tools/call failed' },
  mcp_protocol_error: { message: 'the MCP endpoint broke the protocol' },
  mcp_content_mismatch: { message: 'the MCP result text and structuredContent are not the same envelope' },
  tool_error: { message: 'the tool answered with an error result' },
  a2a_unreachable: { message: 'the A2A agent card could not be read' },
  a2a_call_failed: { message: 'the A2A call failed' },
  task_not_completed: { message: 'the A2A task did not complete' },
  page_unreachable: { message: 'the WebMCP page could not be read' },
  browser_unavailable: { message: 'no browser to read the WebMCP page with' },
  tool_timeout: { message: "no response from the page's tool in time" },
  tool_rejected: { message: "the page's tool rejected the call" },
  no_envelope: { message: 'the surface answered without an offer envelope' },
  // Core VRP v0.1 §4: a request the agent will not send (`checkOfferRequest`), with protocol's codes.
  ...(Object.fromEntries(OFFER_REQUEST_CODES.map((code) => [code, PROTOCOL_ERRORS[code]])) as Record<
    OfferRequestErrorCode,
    ErrorCodeEntry
  >),
} as const satisfies Record<string, ErrorCodeEntry>;

export type AgentErrorCode = keyof typeof AGENT_ERRORS;

/** An error of this package: `code` is always an `AGENT_ERRORS` code; without a message the registry's is used. */
export class AgentError extends errorClassFor(AGENT_ERRORS) {}

/**
 * Why a network read failed. Every one of these is an unknown for the facts that depended on
 * the read (Core VRP v0.1 §9): never a negative, never a pass.
 */
export type NetworkErrorCode =
  | 'insecure_scheme'
  | 'redirect_off_domain'
  | 'too_many_redirects'
  | 'response_too_large'
  | 'timeout'
  | 'connect_timeout'
  | 'dns_failure'
  | 'tls_failure'
  | 'network_error';

/** A network read the hardened fetch refused or could not complete. */
export class NetworkError extends AgentError {
  declare readonly code: NetworkErrorCode;
  constructor(code: NetworkErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(code, message, details, options);
  }
}

/** Invalid options or arguments passed to an agent API (a programmer or usage error). */
export class AgentUsageError extends AgentError {}
