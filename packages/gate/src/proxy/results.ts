/** What the agent receives for a `tools/call` the proxy did not answer with the downstream's own result. */

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
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
export function gateRefusal(code: EfCode): McpError {
  const { error } = hostErrorObject(denyDecision(code));
  return new McpError(ErrorCode.InternalError, error.message, error);
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
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout)
    return toolError(
      'downstream_timeout',
      'The downstream MCP server did not answer in time; the call was cancelled and its effect is unknown.',
      true,
    );
  const message = e instanceof Error ? e.message : 'the downstream MCP server failed';
  return toolError('downstream_error', `The downstream MCP server failed during the call: ${message}`, true);
}
