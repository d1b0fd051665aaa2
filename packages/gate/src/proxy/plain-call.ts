/**
 * What the proxy's direct paths (stdio-call.ts, and direct-call.ts on HTTP) need
 * to answer a plain `tools/call` as the SDK would, without the SDK's schemas: the SDK's verdict on a
 * 2026-07-28 per-request envelope, remembered per envelope text, and a plain `CallToolResult`
 * written as the SDK writes it (its members in its result schema's order, then its encoder's additions);
 * and the types proxy.ts shares with them (here, so proxy.ts imports neither direct path).
 */
import {
  type CallToolRequest,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  type InputRequiredResult,
  PROTOCOL_VERSION_META_KEY,
  type RequestId,
  SERVER_INFO_META_KEY,
  type Server,
} from '@modelcontextprotocol/server';
import { isRecord } from '@vrpkit/core';

/** The era an agent connection speaks (SDK v2 vocabulary): 2026-07-28 is `modern`, 2025-11-25 and older `legacy`. */
export type AgentEra = 'legacy' | 'modern';

/** A plain 2025-11-25 `tools/call`: its id and its params (name and arguments, nothing else). */
export interface PlainLegacyCall {
  id: string | number;
  params: { name: string; arguments: Record<string, unknown> };
}

/** A plain 2026-07-28 `tools/call`: its id and its params (name, arguments, the per-request envelope in `_meta`). */
export interface PlainModernCall {
  id: string | number;
  params: CallToolRequest['params'] & { arguments: Record<string, unknown>; _meta: Record<string, unknown> };
}

/** What the agent `Server`s of a stdio connection ask of its direct path (proxy.ts `createAgentServer`). */
export interface StdioReplays {
  /** `server` ran one of the proxy's request handlers: the SDK pinned it to the connection and it is serving. */
  served(server: Server): void;
  /** The outcome of the call `id` the direct path already ran, once; undefined for any other request. */
  take(id: RequestId): (() => Promise<CallToolResult | InputRequiredResult>) | undefined;
}

/** MCP's stateless revision (specification/2026-07-28): the SDK's `modern` era. */
export const MODERN_REVISION = '2026-07-28';

/** MCP 2026-07-28 (basic/index, "_meta"): the per-request envelope keys a client sends on every request. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]);

/** The SDK's verdict on an envelope, by its JSON text (a client sends the same one on every call). Bounded: cleared when full. */
const envelopeVerdicts = new Map<string, boolean>();
const ENVELOPE_VERDICTS_MAX = 256;

/**
 * True when `meta`, the `_meta` of the `tools/call` `message` for tool `name`, is the per-request
 * envelope and nothing else, and the SDK's own `classifyInboundRequest` classifies the call
 * `modern` on 2026-07-28 (it validates the envelope); the verdict is remembered per envelope text.
 */
export function plainModernEnvelope(meta: unknown, name: string, message: unknown): boolean {
  if (!isRecord(meta) || !Object.keys(meta).every((key) => ENVELOPE_KEYS.has(key))) return false;
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
  return modern;
}

/**
 * A plain `CallToolResult`'s members as the SDK's result schema emits them (`_meta`, `content`,
 * `structuredContent`, `isError`, each block as `type` then `text`), or null when `result` is not
 * plain: a member other than those four; `content` absent or with a block other than a text block
 * of `type` and `text` only; a `structuredContent` that is not an object, an `isError` that is not
 * a boolean, a `_meta` that is not an object or has a key in a reserved namespace (a `/`-prefixed
 * key, which the SDK's schema checks).
 */
export function plainResultMembers(result: CallToolResult | InputRequiredResult): Record<string, unknown> | null {
  if (!isRecord(result)) return null;
  const r = result as Record<string, unknown>;
  for (const key in r) if (key !== '_meta' && key !== 'content' && key !== 'structuredContent' && key !== 'isError') return null;
  const { _meta: meta, content, structuredContent, isError } = r;
  if (!Array.isArray(content) || !content.every(isPlainText)) return null;
  if ('_meta' in r && (!isRecord(meta) || Object.keys(meta).some((key) => key.includes('/')))) return null;
  if ('structuredContent' in r && !isRecord(structuredContent)) return null;
  if ('isError' in r && typeof isError !== 'boolean') return null;
  const members: Record<string, unknown> = {};
  if (meta !== undefined) members._meta = meta;
  members.content = content.map((block: { text: string }) => ({ type: 'text', text: block.text }));
  if (structuredContent !== undefined) members.structuredContent = structuredContent;
  if (isError !== undefined) members.isError = isError;
  return members;
}

/**
 * The JSON-RPC line the SDK writes for `result` to call `id` on `era`, or null when the result is
 * not plain (`plainResultMembers`; the SDK answers it then): its members as the SDK's result schema
 * emits them; on 2026-07-28 then the encode contract (specification/2026-07-28, the SDK's
 * `encodeResult`): `resultType: "complete"`, and the server's identity appended to `_meta` (or
 * `_meta` added after `resultType` when there was none). The 2025-11-25 encode adds nothing to a
 * `tools/call` result.
 */
export function plainAnswer(
  result: CallToolResult | InputRequiredResult,
  id: string | number,
  era: AgentEra,
  serverInfo: { name: string; version: string },
): string | null {
  const members = plainResultMembers(result);
  if (!members) return null;
  if (era === 'modern') {
    if (members._meta !== undefined) members._meta = { ...(members._meta as object), [SERVER_INFO_META_KEY]: serverInfo };
    members.resultType = 'complete';
    if (members._meta === undefined) members._meta = { [SERVER_INFO_META_KEY]: serverInfo };
  }
  return JSON.stringify({ result: members, jsonrpc: '2.0', id });
}

function isPlainText(block: unknown): boolean {
  return isRecord(block) && block.type === 'text' && typeof block.text === 'string' && Object.keys(block).length === 2;
}
