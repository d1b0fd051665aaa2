/**
 * The agent's one code table (core's `CodeTable`): every code the agent throws, and every code a
 * surface report's `error` carries when the surface could not be read (Node Tool Binding v0.1 §5:
 * an unverified outcome, never a pass). Verification verdicts keep their published vocabularies
 * beside the rules that decide them (`OfferReasonCode` is vrp-verify's, `ReceiptErrorCode` the
 * receipt envelope's, `DiscoveryDocumentCode` protocol's).
 */
import { type CodeArgs, type CodeTable, codedErrorClass } from '@vrpkit/core';
import { OFFER_REQUEST_CODES, type OfferRequestErrorCode } from '@vrpkit/protocol';

/** Network reads of the hardened fetch. Each is an unknown for the facts that depended on the read (Core VRP v0.1 §9). */
const NETWORK_CODES = {
  insecure_scheme: { message: 'refusing {scheme} URL (https only)' },
  redirect_off_domain: { message: 'redirect from {from} to {to} leaves the host domain' },
  too_many_redirects: { message: 'more than {max} redirects from {host}', details: ['host'] },
  response_too_large: { message: 'response from {host} {problem}', details: ['host'] },
  timeout: { message: 'no complete response from {host} within the time budget', details: ['host'] },
  connect_timeout: { message: 'connect to {host} timed out', details: ['host'] },
  dns_failure: { message: 'cannot resolve {host}', details: ['host'] },
  tls_failure: { message: 'TLS with {host} failed: {reason}', details: ['host'] },
  network_error: { message: 'request to {host} failed: {reason}', details: ['host'] },
} as const satisfies CodeTable;

/** A refusal of the protocol's request parser, raised as the agent's own: the parser's message. */
const OFFER_REQUEST_REFUSALS = Object.fromEntries(OFFER_REQUEST_CODES.map((code) => [code, { message: '{reason}' }])) as {
  readonly [C in OfferRequestErrorCode]: { readonly message: '{reason}' };
};

export const AGENT_CODES = {
  ...NETWORK_CODES,
  // Usage: options and arguments an agent API refuses (Core VRP v0.1 §4 arguments with protocol's codes).
  invalid_connect_to: { message: 'connect-to entry is not {form}: {entry}' },
  invalid_target: { message: 'not {what}: {target}' },
  ...OFFER_REQUEST_REFUSALS,
  // Surface reads (`SurfaceReport.error`): why nothing verifiable arrived.
  offer_unreachable: { message: 'the offer endpoint could not be read' },
  offer_http_error: { message: 'the offer endpoint answered an HTTP error' },
  offer_not_json: { message: 'the offer endpoint answered something that is not JSON' },
  mcp_unreachable: { message: 'the MCP endpoint could not be read' },
  mcp_call_failed: { message: 'the MCP tools/call failed' },
  mcp_protocol_error: { message: 'the MCP endpoint broke the protocol' },
  mcp_content_mismatch: { message: 'the MCP result text and structuredContent are not the same envelope' },
  tool_error: { message: 'the tool answered with an error result' },
  a2a_unreachable: { message: 'agent card answered HTTP {status}' },
  a2a_call_failed: { message: 'the A2A call failed' },
  task_not_completed: { message: 'the A2A task did not complete' },
  page_unreachable: { message: '{reason}' },
  browser_unavailable: { message: '{reason}' },
  tool_timeout: { message: "no response from the page's tool in time" },
  tool_rejected: { message: "the page's tool rejected the call" },
  no_envelope: { message: 'the surface answered without an offer envelope' },
} as const satisfies CodeTable;

/** An error of this package: `code` is always an `AGENT_CODES` code, its message the table's template filled in. */
export class AgentError extends codedErrorClass(AGENT_CODES) {}
export type AgentCode = AgentError['code'];

/**
 * Why a network read failed. Every one of these is an unknown for the facts that depended on
 * the read (Core VRP v0.1 §9): never a negative, never a pass.
 */
export type NetworkErrorCode = keyof typeof NETWORK_CODES;

/** A network read the hardened fetch refused or could not complete. */
export class NetworkError extends AgentError {
  declare readonly code: NetworkErrorCode;
  constructor(...args: CodeArgs<typeof NETWORK_CODES>) {
    super(...(args as CodeArgs<typeof AGENT_CODES>));
  }
}

/** Invalid options or arguments passed to an agent API (a programmer or usage error). */
export class AgentUsageError extends AgentError {}
