/**
 * The direct answer to the common call on the 2026-07-28 wire (issue 37 item 3): a lone, plain,
 * stateless `tools/call` the SDK's `createMcpHandler` would hand straight to the agent `Server`'s
 * `tools/call` handler is run through the same call pipeline (pin check, act, the gate's
 * enforce, the downstream call, the journal) without the SDK's per-request `Server` and
 * transport, and the plain `CallToolResult` it comes back with is written as the bytes the SDK
 * writes for it (the encode contract of specification/2026-07-28: `resultType`, then the
 * server's identity in `_meta`). Anything else the call ends with — a thrown error, an
 * `InputRequiredResult`, a result in a shape the SDK would reorder or default — is answered by
 * the SDK itself from that outcome (listen.ts, `replay`), so its wording, status codes and checks
 * stay the SDK's. test/proxy-direct-call.test.ts holds the two paths equal, byte for byte.
 *
 * Learnt from the node's MCP surface (packages/node/src/surfaces/mcp/direct.ts): the request is
 * recognised in its plainest form without the SDK's schemas, and the SDK's own
 * `classifyInboundRequest` verdict on the per-request envelope is reused per envelope text.
 */
import { isJsonContentType } from '@modelcontextprotocol/server';
import { isRecord } from '@vrpkit/core';
import { MODERN_REVISION, type PlainModernCall, plainModernEnvelope } from './plain-call.js';

/**
 * The call, when `message` is a request the SDK's 2026-07-28 handler would hand to the
 * `tools/call` handler with nothing but its result to answer; null for anything else, which the
 * SDK then answers itself:
 * - a JSON content type (the SDK answers any other with 415);
 * - `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method: tools/call` and `Mcp-Name` naming exactly
 *   the body's tool (transports, "Standard request headers"; a mismatch is the SDK's -32020);
 * - the body `{jsonrpc:"2.0", id, method:"tools/call", params:{name, arguments, _meta}}` with
 *   exactly those members, a string or safe-integer id, an object of arguments, and a `_meta`
 *   that is the envelope and nothing else — no progress token (progress streams as SSE: the
 *   SDK's), no `requestState` or `inputResponses` (a retried round: the SDK's);
 * - classified `modern` on 2026-07-28 by the SDK's own `classifyInboundRequest` (which
 *   validates the envelope).
 */
export function plainModernCall(request: Request, message: unknown): PlainModernCall | null {
  const h = request.headers;
  if (h.get('mcp-protocol-version') !== MODERN_REVISION || h.get('mcp-method') !== 'tools/call') return null;
  if (!isJsonContentType(h.get('content-type'))) return null;
  if (!isRecord(message) || Object.keys(message).length !== 4) return null;
  const { jsonrpc, id, method, params } = message;
  if (jsonrpc !== '2.0' || method !== 'tools/call' || !isRecord(params) || Object.keys(params).length !== 3) return null;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== 'string' || h.get('mcp-name') !== name || !isRecord(args) || !isRecord(meta)) return null;
  if (!plainModernEnvelope(meta, name, message)) return null;
  return { id: id as string | number, params: params as PlainModernCall['params'] };
}
