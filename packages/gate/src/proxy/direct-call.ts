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
import {
  type CallToolRequest,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from '@modelcontextprotocol/server';
import { isRecord } from '@vrpkit/core';

/** MCP's stateless revision (specification/2026-07-28): the SDK's `modern` era. */
const MODERN_REVISION = '2026-07-28';

/** A plain 2026-07-28 `tools/call`: its id and its params (name, arguments, the per-request envelope in `_meta`). */
export interface PlainModernCall {
  id: string | number;
  params: CallToolRequest['params'] & { arguments: Record<string, unknown>; _meta: Record<string, unknown> };
}

/** MCP 2026-07-28 (basic/index, "_meta"): the per-request envelope keys a client sends on every request. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]);

/**
 * The SDK's verdict on a plain call's envelope, by the envelope's JSON text (a client sends the
 * same envelope on every call; validating it is a zod parse). Bounded: cleared when full.
 */
const envelopeVerdicts = new Map<string, boolean>();
const ENVELOPE_VERDICTS_MAX = 256;

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
  if (!Object.keys(meta).every((key) => ENVELOPE_KEYS.has(key))) return null;
  // Parsed JSON holds no undefined, function or toJSON member: equal text is an equal envelope.
  const text = JSON.stringify(meta);
  let modern = envelopeVerdicts.get(text);
  if (modern === undefined) {
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: MODERN_REVISION,
      mcpMethodHeader: 'tools/call',
      mcpNameHeader: name,
      body: message,
    });
    modern = route.kind === 'modern' && route.classification.revision === MODERN_REVISION;
    if (envelopeVerdicts.size >= ENVELOPE_VERDICTS_MAX) envelopeVerdicts.clear();
    envelopeVerdicts.set(text, modern);
  }
  return modern ? { id: id as string | number, params: params as PlainModernCall['params'] } : null;
}

/** The members of a `CallToolResult` in the order the SDK's 2026-07-28 result schema emits them. */
const RESULT_MEMBERS = ['_meta', 'content', 'structuredContent', 'isError'] as const;

/**
 * The JSON-RPC answer the SDK writes for `result` to call `id` on 2026-07-28, or null when the
 * result is not in the shape written here (the SDK answers it then). The shape: no member but
 * `_meta`, `content`, `structuredContent` and `isError`; `content` present, every content block
 * a text block with no member but `type` and `text`; an object `structuredContent`, a boolean
 * `isError`, an object `_meta` with no key in a reserved namespace. Written as the SDK's result
 * schema emits it (its members, and each block's, in the schema's order), then the encode
 * contract (specification/2026-07-28, the SDK's `encodeResult`): `resultType: "complete"`, and
 * the server's identity appended to `_meta` (or `_meta` added after `resultType` when there was none).
 */
export function plainResultAnswer(
  result: CallToolResult,
  id: string | number,
  serverInfo: { name: string; version: string },
): string | null {
  if (!isRecord(result)) return null;
  const r = result as Record<string, unknown>;
  if (!Object.keys(r).every((key) => (RESULT_MEMBERS as readonly string[]).includes(key))) return null;
  const { _meta: meta, content, structuredContent, isError } = r;
  if (!Array.isArray(content) || !content.every(isPlainText)) return null;
  // `_meta` keys in a protocol's reserved namespace (a `/`-prefixed key) are checked by the SDK's schema: its answer.
  if ('_meta' in r && (!isRecord(meta) || Object.keys(meta).some((key) => key.includes('/')))) return null;
  if ('structuredContent' in r && !isRecord(structuredContent)) return null;
  if ('isError' in r && typeof isError !== 'boolean') return null;
  const encoded: Record<string, unknown> = {};
  if (meta !== undefined) encoded._meta = { ...meta, [SERVER_INFO_META_KEY]: serverInfo };
  encoded.content = content.map((block: { text: string }) => ({ type: 'text', text: block.text }));
  if (structuredContent !== undefined) encoded.structuredContent = structuredContent;
  if (isError !== undefined) encoded.isError = isError;
  encoded.resultType = 'complete';
  if (meta === undefined) encoded._meta = { [SERVER_INFO_META_KEY]: serverInfo };
  return JSON.stringify({ result: encoded, jsonrpc: '2.0', id });
}

function isPlainText(block: unknown): boolean {
  return isRecord(block) && block.type === 'text' && typeof block.text === 'string' && Object.keys(block).length === 2;
}
