/**
 * MCP surface client: the official SDK v2 `Client` over Streamable HTTP, every request through
 * the agent's hardened fetch. It negotiates the revision (`versionNegotiation: 'auto'`): a
 * `server/discover` probe selects MCP 2026-07-28 with a node that offers it, and a node that
 * does not (an error answer to the probe) gets the 2025 `initialize` handshake instead (issue 32
 * item 1). Reads `tools/list`, calls the bound name only when it is listed exactly (Node Tool
 * Binding v0.1 §3), and takes the envelope from the result (§5); the receipt is read from the
 * result's `_meta` on either revision (docs/receipts.md).
 */

import { type CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { canonicalJson } from '@vrpkit/core';
import { MCP_ENDPOINT_PATH } from '@vrpkit/protocol';
import { boundToolName, errorOf, surfaceUrl, unreachableSurface } from './shared.js';
import type { OfferArgs, SurfaceContext, SurfaceFetch } from './types.js';

const CLIENT_INFO = { name: 'vrpkit-agent', version: '0.1.0' } as const;

/**
 * The envelope of a successful result: the JSON text content and, when present,
 * `structuredContent` — which must then be the same document (a surface that shows one offer
 * and structures another is not returning "the envelope unmodified", §5).
 */
export function envelopeOfToolResult(
  result: CallToolResult,
): { envelope: unknown; error: null } | { envelope: null; error: { code: string; message: string } } {
  const texts = result.content.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text);
  if (result.isError === true) {
    // §5: an error on the surface is an unverified outcome; nothing in it is quoted.
    return { envelope: null, error: { code: 'tool_error', message: texts.join(' ').slice(0, 500) || 'the tool returned isError' } };
  }
  let fromText: unknown;
  if (texts.length === 1) {
    try {
      fromText = JSON.parse(texts[0] as string);
    } catch {
      fromText = undefined;
    }
  }
  const structured = result.structuredContent;
  if (fromText !== undefined && structured !== undefined) {
    let same = false;
    try {
      same = canonicalJson(fromText) === canonicalJson(structured);
    } catch {
      same = false;
    }
    if (!same)
      return {
        envelope: null,
        error: { code: 'mcp_content_mismatch', message: 'text content and structuredContent carry different documents' },
      };
  }
  const envelope = structured ?? fromText;
  if (envelope === undefined) return { envelope: null, error: { code: 'no_envelope', message: 'the result carries no JSON envelope' } };
  return { envelope, error: null };
}

export async function fetchViaMcp(target: string, args: OfferArgs, ctx: SurfaceContext): Promise<SurfaceFetch> {
  const url = surfaceUrl(target, MCP_ENDPOINT_PATH);
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: ctx.fetch }));
  } catch (e) {
    return unreachableSurface(url, e, 'mcp_unreachable');
  }
  const negotiated = client.getNegotiatedProtocolVersion();
  const base = { surface_url: url.href, served_from: [url.hostname], ...(negotiated ? { mcp_protocol_version: negotiated } : {}) };
  try {
    const listed = await client.listTools();
    const tools = listed.tools.map((t) => ({ name: t.name, input_schema: t.inputSchema }));
    const name = boundToolName(tools);
    if (!name) return { ...base, reached: true, tools, tool_name: null, envelope: null, error: null };
    let result: CallToolResult;
    try {
      result = (await client.callTool({ name, arguments: { ...args } })) as CallToolResult;
    } catch (e) {
      return { ...base, reached: true, tools, tool_name: name, envelope: null, error: errorOf(e, 'mcp_call_failed') };
    }
    const { envelope, error } = envelopeOfToolResult(result);
    return { ...base, reached: true, tools, tool_name: name, envelope, error, raw_result: result };
  } catch (e) {
    return { ...base, reached: true, tools: [], tool_name: null, envelope: null, error: errorOf(e, 'mcp_protocol_error') };
  } finally {
    await client.close().catch(() => {});
  }
}
