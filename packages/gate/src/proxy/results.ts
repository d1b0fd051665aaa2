/** What the agent receives for a `tools/call` the proxy did not answer with the downstream's own result. */

import { type CallToolResult, ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { canonicalSha256Base64url } from '@vrpkit/core';
import { denyDecision } from '../enforce.js';
import { type EfCode, type EnforceDecision, hostErrorObject } from '../errors.js';
import { mcpDenyResult } from '../vendors/mcp/handle.js';

/**
 * The deny as the agent sees it: an MCP tool error (`isError: true`) carrying the host error
 * object in a text block. No `structuredContent`: it would have to match the tool's declared
 * outputSchema, which an error object does not.
 */
export function denyResult(decision: EnforceDecision) {
  const { structuredContent: _, ...result } = mcpDenyResult(decision);
  return result;
}

/**
 * A request other than `tools/call` the gate refuses (`tools/list` while the store cannot answer):
 * a JSON-RPC internal error carrying the code's own message and, as its data, the host error
 * object's `error` (the refusal a `tools/call` gets) — never the store's message, which names the
 * database role or schema (issue 36 defect 1).
 */
export function gateRefusal(code: EfCode): ProtocolError {
  const { error } = hostErrorObject(denyDecision(code));
  return new ProtocolError(ProtocolErrorCode.InternalError, error.message, error);
}

/** Leading "MCP error -32602: " labels, as SDK v1 servers put them into the wire message. */
const MCP_ERROR_LABEL = /^(?:MCP error -?\d+: )+/;

/**
 * A downstream's JSON-RPC error passed on to the agent with its code and data, its message without
 * the "MCP error N:" label an SDK v1 server wrote into it: the agent's SDK adds its own one
 * (issue 32 item 7: "MCP error -32602: MCP error -32602: …" through the proxy). Anything else
 * (a timeout, a closed connection) passes unchanged.
 */
export function relayedError(e: unknown): unknown {
  if (!(e instanceof ProtocolError) || !MCP_ERROR_LABEL.test(e.message)) return e;
  return new ProtocolError(e.code, e.message.replace(MCP_ERROR_LABEL, ''), e.data);
}

/** The journal keeps a digest of the result, not the result: the store holds no tool output. */
export function digestOrNull(value: unknown): string | null {
  try {
    return canonicalSha256Base64url(value);
  } catch {
    return null;
  }
}

function toolError(code: string, message: string, invoked: boolean): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message, retryable: false, invoked } }) }] };
}

/** A downstream's request for input the proxy would not pass on (downstream-input.ts): the call was sent, so it counts as invoked. */
export function downstreamInputError(code: string, message: string): CallToolResult {
  return toolError(code, message, true);
}

/** The downstream is gone: nothing was sent, nothing was consumed. */
export function downstreamUnavailable(): CallToolResult {
  return toolError('downstream_unavailable', 'The downstream MCP server is not running; the tool call was not sent.', false);
}

/**
 * The call was sent and the downstream failed or did not answer in time (enforce mode: its
 * authority is consumed, so it is not run again). A timeout cancels the downstream request
 * (`notifications/cancelled`), but whether the server acted before it is unknown.
 */
export function downstreamFailure(e: unknown): CallToolResult {
  if (e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout)
    return toolError(
      'downstream_timeout',
      'The downstream MCP server did not answer in time; the call was cancelled and its effect is unknown.',
      true,
    );
  const relayed = relayedError(e);
  const message = relayed instanceof Error ? relayed.message : 'the downstream MCP server failed';
  return toolError('downstream_error', `The downstream MCP server failed during the call: ${message}`, true);
}
