/**
 * The UCP Lodging Booking capability's MCP binding (`docs/specification/lodging/booking/mcp.md`,
 * `services/lodging/mcp.openrpc.json`) on the node's `/mcp`: the five tools `create_booking_session`,
 * `get_booking_session`, `update_booking_session`, `complete_booking_session` and
 * `cancel_booking_session`, their arguments as the OpenRPC methods' params (`meta` always; `id` for an
 * existing session, never inside `booking`; `booking` for Create, Update and Complete), each answered
 * by the same `UcpSessions` as the REST binding (`run`: one code path, one Idempotency-Key store):
 * - a business outcome is a JSON-RPC result whose `structuredContent` is the Booking (or, when no
 *   session could be created, the error response) and whose one text content is its JSON (mcp.md,
 *   Error Handling, Business Outcomes);
 * - a protocol error is a JSON-RPC error (mcp.md, Error Handling; Overview, Error Codes): `-32001`
 *   for a missing or malformed `meta["ucp-agent"]` (`invalid_profile_url`), `-32602` for arguments
 *   that are not a request (`invalid_request`, `invalid_idempotency_key`), `-32000` otherwise (an
 *   unknown session, a conflicting Idempotency-Key, too many requests with `data.retry_after`), its
 *   `data` the stable `code` and `content`.
 * Create, Update, Complete and Cancel count against the booking rate limit per client address, as on REST.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { canonicalJson, isRecord, sha256Hex } from '@vrpkit/core';
import { MAX_UCP_REQUEST_BYTES } from '@vrpkit/protocol';
import type { BookingDesk } from '../../booking/desk.js';
import type { UcpAnswer, UcpChangeOperation } from '../../ucp/idempotency.js';
import { mcpMetadata } from '../../ucp/metadata.js';
import { admitUcp, refuseUcp, type UcpSessions } from '../../ucp/sessions.js';

/** The tools (mcp.md, Tools: "UCP Capabilities map 1:1 to MCP Tools") and the operation each is. */
export const UCP_BOOKING_TOOLS = {
  create_booking_session: 'create',
  get_booking_session: 'get',
  update_booking_session: 'update',
  complete_booking_session: 'complete',
  cancel_booking_session: 'cancel',
} as const satisfies Record<string, UcpChangeOperation | 'get'>;
export type UcpBookingToolName = keyof typeof UCP_BOOKING_TOOLS;

export const isUcpBookingTool = (name: string): name is UcpBookingToolName => Object.hasOwn(UCP_BOOKING_TOOLS, name);

/** What a node's `/mcp` answers the Booking tools with: its sessions and the booking desk's rate limit. */
export interface UcpMcpBinding {
  sessions: UcpSessions;
  desk: Pick<BookingDesk, 'admit'>;
}

/** `components.schemas.meta` of mcp.openrpc.json; Complete and Cancel also require `idempotency-key`. */
function metaSchema(keyRequired: boolean) {
  return {
    type: 'object',
    description: 'Request metadata (UCP MCP binding, Request Metadata).',
    required: keyRequired ? ['ucp-agent', 'idempotency-key'] : ['ucp-agent'],
    additionalProperties: true,
    properties: {
      'ucp-agent': {
        type: 'object',
        description: 'Platform agent identification. Maps to HTTP UCP-Agent header.',
        required: ['profile'],
        properties: { profile: { type: 'string', format: 'uri', description: "URL to the platform's UCP profile document." } },
      },
      'idempotency-key': {
        type: 'string',
        format: 'uuid',
        description: 'Unique key for retry safety. Maps to HTTP Idempotency-Key header.',
      },
    },
  };
}

const ID = { type: 'string', description: 'The booking session id (`booking.id` of the answer that created it).' };
const BOOKING = {
  type: 'object',
  description:
    'A UCP Lodging Booking request (https://ucp.dev/schemas/lodging/booking.json as the operation sees it; no `id`). ' +
    'This host’s ids are in its /.well-known/ucp profile; the Core VRP offer JWS it signed goes under `dev.vrpkit.lodging.offer_jws`.',
};

const SUMMARIES: Record<UcpBookingToolName, string> = {
  create_booking_session:
    'Create a booking session (UCP Lodging Booking). No night is held until the guest confirms on the host’s page (continue_url).',
  get_booking_session: 'Get a booking session.',
  update_booking_session: 'Update a booking session (a full replacement: the party may change, the stay may not).',
  complete_booking_session: 'Complete the booking session and confirm the stay reservation, once the guest confirmed.',
  cancel_booking_session: 'Cancel a booking session.',
};

/** One tool as `tools/list` shows it: the OpenRPC method's params as the input schema. */
function bookingTool(name: UcpBookingToolName): Tool {
  const operation = UCP_BOOKING_TOOLS[name];
  const keyRequired = operation === 'complete' || operation === 'cancel';
  const properties: Record<string, unknown> = { meta: metaSchema(keyRequired) };
  if (operation !== 'create') properties.id = ID;
  if (operation === 'create' || operation === 'update' || operation === 'complete') properties.booking = BOOKING;
  return {
    name,
    description: SUMMARIES[name],
    inputSchema: { type: 'object', required: Object.keys(properties), properties } as Tool['inputSchema'],
    annotations: {
      readOnlyHint: operation === 'get',
      destructiveHint: operation === 'cancel',
      // With the same `meta["idempotency-key"]` a repeat answers as the first call did.
      idempotentHint: operation !== 'create' && operation !== 'update',
      openWorldHint: false,
    },
  };
}

/** The five tools, in the order mcp.md lists them. */
export const UCP_BOOKING_TOOL_LIST: readonly Tool[] = (Object.keys(UCP_BOOKING_TOOLS) as UcpBookingToolName[]).map(bookingTool);

/** A refusal with no result to give as a JSON-RPC error: its code by kind, its stable UCP code and words in `data`. */
function protocolError(answer: UcpAnswer): ProtocolError {
  const message = (answer.body.messages as { code: string; content: string }[] | undefined)?.[0];
  const code = message?.code ?? 'invalid_request';
  const content = message?.content ?? 'refused';
  const jsonRpc = code === 'invalid_profile_url' ? -32001 : answer.status === 400 ? ProtocolErrorCode.InvalidParams : -32000;
  // Overview, Error Codes: a 429 carries `error.data.retry_after`, the seconds until the rate limit's window ends.
  return new ProtocolError(jsonRpc, content, {
    code,
    content,
    ...(answer.retryAfterSeconds ? { retry_after: answer.retryAfterSeconds } : {}),
  });
}

/** The tool's answer, or the refusal as a UcpAnswer (thrown as a JSON-RPC error by the caller). */
async function answer(b: UcpMcpBinding, name: UcpBookingToolName, args: Record<string, unknown>, client: string): Promise<UcpAnswer> {
  const operation = UCP_BOOKING_TOOLS[name];
  const limited = operation === 'get' ? null : admitUcp(b.desk, client);
  if (limited) return limited;
  const meta = mcpMetadata(args.meta, operation);
  if (!meta.ok) return refuseUcp(meta.refusal.code, meta.refusal.content, 400);
  const { id, booking } = args;
  if (operation !== 'create' && typeof id !== 'string') return refuseUcp('invalid_request', 'id: required, the booking session id', 400);
  if (operation === 'get') return b.sessions.run({ operation, id: id as string });
  if (operation !== 'cancel' && !isRecord(booking)) return refuseUcp('invalid_request', 'booking: required, an object', 400);
  // mcp.md, Identifier Pattern: the session is named by the top-level `id`; `booking` MUST NOT carry one.
  if (isRecord(booking) && Object.hasOwn(booking, 'id'))
    return refuseUcp('invalid_request', 'booking.id: not accepted, the session is named by the top-level id', 400);
  const request = canonicalJson({ ...(typeof id === 'string' ? { id } : {}), ...(booking !== undefined ? { booking } : {}) });
  if (Buffer.byteLength(request) > MAX_UCP_REQUEST_BYTES)
    return refuseUcp('body_too_large', `a session request is limited to ${MAX_UCP_REQUEST_BYTES} bytes`, 413);
  return b.sessions.run({
    operation,
    ...(typeof id === 'string' ? { id } : {}),
    body: operation === 'cancel' ? {} : booking,
    // The request digest a repeated key is compared by: the arguments but `meta`, as RFC 8785 JSON (one JSON-RPC body differs from the next by its id).
    requestSha256: sha256Hex(request),
    ...(meta.value.idempotencyKey ? { idempotencyKey: meta.value.idempotencyKey } : {}),
  });
}

/** `tools/call` of a Booking tool: the Booking (or error response) as `structuredContent` and text, or a JSON-RPC error. */
export async function callUcpBookingTool(
  b: UcpMcpBinding,
  name: UcpBookingToolName,
  args: Record<string, unknown>,
  client: string,
): Promise<CallToolResult> {
  const a = await answer(b, name, args, client);
  if (a.status >= 400) throw protocolError(a);
  return { content: [{ type: 'text', text: JSON.stringify(a.body) }], structuredContent: a.body };
}
