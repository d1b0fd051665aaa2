/**
 * The MCP `tools/call get_verified_stay_offer` result (Node Tool Binding v0.1 §3–§5) as the SDK
 * path answers it: the tool as `tools/list` shows it, the signed envelope unmodified as text and
 * `structuredContent`, and the call's receipt (MCP composition profile) in `_meta`.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { type OfferEnvelope, RECEIPT_META_KEY } from '@vrpkit/protocol';
import { issueMcpReceipt } from '../../receipt.js';
import { type OfferService, offerFor } from '../../service/index.js';
import { inSigningTurn } from '../../signing-turn.js';
import { OFFER_TOOL_INPUT_SCHEMA, OFFER_TOOL_NAME, OFFER_TOOL_TITLE, offerToolDescription } from '../tool.js';

/** The node's MCP server identity: `initialize`'s serverInfo (2025) and `_meta`'s serverInfo on every 2026-07-28 result. */
export const MCP_SERVER_INFO = { name: 'vrpkit-node', version: '0.1.0' } as const;

/** A tools/call body is three short arguments; anything near this is not a tool call. */
export const MCP_MAX_BODY_BYTES = 64 * 1024;

/** The `tools/list` entry: §3 name, §4 schema, §5 description; read-only (it only fetches). */
export function offerTool(service: OfferService): Tool {
  return {
    name: OFFER_TOOL_NAME,
    title: OFFER_TOOL_TITLE,
    description: offerToolDescription(service),
    inputSchema: structuredClone(OFFER_TOOL_INPUT_SCHEMA) as unknown as Tool['inputSchema'],
    annotations: { title: OFFER_TOOL_TITLE, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  };
}

/** A refused call: `isError` with the service's code, never an invented offer. */
export function refusalResult(error: { code: string; message: string }): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `error[${error.code}]: ${error.message}` }] };
}

/**
 * `tools/call get_verified_stay_offer` → the signed envelope unmodified (§5): the endpoint's
 * exact JSON body as text content and the same object as `structuredContent`. Malformed input
 * is an `isError` result carrying the service's code, never an invented offer.
 */
export async function callOfferTool(service: OfferService, args: Record<string, unknown>): Promise<CallToolResult> {
  // The offer is the endpoint's (signed-offer cache included); the receipt below is signed per call.
  const outcome = await offerFor(service, args);
  if (!outcome.ok) return refusalResult(outcome.error);
  const receipt = await signedReceipt(service, args, outcome.envelope);
  return {
    content: [{ type: 'text', text: outcome.json }],
    structuredContent: outcome.envelope as unknown as Record<string, unknown>,
    // MCP composition profile: the signed receipt rides in `_meta`, beside the unmodified envelope (docs/receipts.md).
    _meta: { [RECEIPT_META_KEY]: receipt },
  };
}

/** The call's receipt (MCP composition profile), signed per call in this turn's signing batch. */
function signedReceipt(service: OfferService, args: Record<string, unknown>, envelope: OfferEnvelope) {
  return inSigningTurn(() => issueMcpReceipt({ service, tool: OFFER_TOOL_NAME, arguments: args, envelope }));
}
