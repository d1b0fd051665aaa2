/**
 * The direct answer to the common MCP call: a lone `tools/call get_verified_stay_offer` the SDK
 * would hand straight to the offer tool's handler (checked with the SDK's own schemas and rules)
 * is answered from the signed offer's exact bytes, byte for byte what the SDK writes for
 * `callOfferTool`'s result (members in the order its result schema emits them; a test holds the two
 * equal), instead of validating our own ~19 KB result and serialising the envelope twice.
 */
import { ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { CallToolRequestSchema, isJSONRPCRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { isRecord, type JwsSigner, toUtcSecond } from '@vrpkit/core';
import { MCP_TRANSPORT_LAYER, type OfferEnvelope, RECEIPT_META_KEY } from '@vrpkit/protocol';
import type { Context } from 'hono';
import { issueMcpReceipt } from '../../receipt.js';
import { type OfferOutcome, type OfferService, offerFor } from '../../service/index.js';
import { inSigningTurn } from '../../signing-turn.js';
import { OFFER_TOOL_NAME } from '../tool.js';
import { refusalResult } from './result.js';

/**
 * Per signed offer, its answers' bytes: what follows the receipt
 * (`},"content":[{"type":"text","text":…}],"structuredContent":…}`, the envelope's exact bytes as a
 * JSON string literal, then as they are), built once, and the last answer up to its JSON-RPC tail
 * with what its receipt was issued for. The signed-offer cache hands every call for a stay the
 * same envelope object.
 */
interface OfferAnswerBytes {
  afterReceipt: Buffer<ArrayBuffer>;
  last: IssuedAnswer | null;
}
/**
 * A receipt is a function of the envelope, the arguments, the `served_at` second and the signing
 * key (`issueMcpReceipt`; Ed25519 signatures are deterministic, RFC 8032 §5.1.6): a call with the
 * same arguments as sent, in the same second, under the same key, gets the bytes issuing would
 * give again.
 */
interface IssuedAnswer {
  argsText: string;
  servedAt: string;
  signer: JwsSigner;
  untilTail: Buffer<ArrayBuffer>;
}
const answerBytes = new WeakMap<OfferEnvelope, OfferAnswerBytes>();
/** An answer as two pieces: the bytes before the JSON-RPC tail (shared between calls) and the tail with the call's id. */
export type AnswerParts = [Buffer<ArrayBuffer>, Buffer<ArrayBuffer>];
const RESULT_HEAD = Buffer.from(`{"result":{"_meta":{${JSON.stringify(RECEIPT_META_KEY)}:`);

/**
 * The JSON-RPC answer to a direct offer call: `callOfferTool`'s result as the SDK serialises it
 * after its result schema (`_meta`, `content`, `structuredContent`; a refusal `content`,
 * `isError`), with the envelope written as its signed bytes rather than re-serialised from the
 * object, then `jsonrpc` and `id` in the SDK's order. The offer is the endpoint's, answered
 * without a store wait when the store state is known (`OfferService.offer`). `args` is parsed JSON.
 */
export async function offerToolAnswer(service: OfferService, args: Record<string, unknown>, id: string | number): Promise<AnswerParts> {
  const outcome: OfferOutcome = await offerFor(service, args);
  const tail = Buffer.from(`,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`);
  if (!outcome.ok) {
    const { content, isError } = refusalResult(outcome.error);
    return [Buffer.from(`{"result":${JSON.stringify({ content, isError })}`), tail];
  }
  const { envelope } = outcome;
  let bytes = answerBytes.get(envelope);
  if (bytes === undefined) {
    const afterReceipt = Buffer.from(
      `},"content":[{"type":"text","text":${JSON.stringify(outcome.json)}}],"structuredContent":${outcome.json}}`,
    );
    bytes = { afterReceipt, last: null };
    answerBytes.set(envelope, bytes);
  }
  // Parsed JSON holds no undefined, function or toJSON member: equal text is equal arguments.
  const argsText = JSON.stringify(args);
  const { last } = bytes;
  if (last?.argsText === argsText && last.signer === service.activeSigner() && last.servedAt === toUtcSecond(service.now())) {
    return [last.untilTail, tail];
  }
  const { receipt, signer } = await inSigningTurn(() => ({
    signer: service.activeSigner(),
    receipt: issueMcpReceipt({ service, tool: OFFER_TOOL_NAME, arguments: args, envelope }),
  }));
  const untilTail = Buffer.concat([RESULT_HEAD, Buffer.from(JSON.stringify(receipt)), bytes.afterReceipt]);
  const servedAt = receipt.attestations.find((a) => a.layer === MCP_TRANSPORT_LAYER)?.valid_from;
  if (typeof servedAt === 'string') bytes.last = { argsText, servedAt, signer, untilTail };
  return [untilTail, tail];
}

/**
 * Send a direct answer. On @hono/node-server (`c.env.outgoing`) its two pieces are written to the
 * Node response as they are, corked into one write with the headers: the shared ~19 KB is not
 * copied into a new buffer per call. Elsewhere (`app.request`, another server) it is one Response.
 */
export function sendAnswer(c: Context, [head, tail]: AnswerParts): Response {
  const headers = { 'content-type': 'application/json', 'content-length': String(head.byteLength + tail.byteLength) };
  const out = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
  if (!(out instanceof ServerResponse) || out.headersSent) return new Response(Buffer.concat([head, tail]), { status: 200, headers });
  out.cork();
  out.writeHead(200, headers);
  out.write(head);
  out.end(tail);
  out.uncork();
  return RESPONSE_ALREADY_SENT;
}

/**
 * The id and the arguments (as sent) of a body the SDK would hand straight to the offer tool's
 * handler and answer with nothing but its result; null for anything else, which the SDK then
 * answers itself. The checks are the SDK's: its Accept and protocol-version rules (the transport
 * is stateless, so there is no session to check), one JSON-RPC request (not a batch, not
 * `initialize`), and its `tools/call` schema; a call asking for a task or carrying `_meta`
 * (progress, related task) stays on the SDK's path.
 */
export function directOfferCall(c: Context, body: unknown): { id: string | number; args: Record<string, unknown> } | null {
  const accept = c.req.header('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  const version = c.req.header('mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  const plain = plainOfferCall(body);
  if (plain) return plain;
  if (!isJSONRPCRequest(body) || body.method !== 'tools/call') return null;
  const call = CallToolRequestSchema.safeParse(body);
  if (!call.success) return null;
  const { params } = call.data;
  if (params.name !== OFFER_TOOL_NAME || params.task !== undefined || params._meta !== undefined) return null;
  // The arguments as sent, not the schema's copy (see `toolCallArguments`).
  const sent = (body.params as Record<string, unknown>).arguments as Record<string, unknown> | undefined;
  return { id: body.id, args: sent ?? {} };
}

/**
 * The common call in its plainest form, recognised without the SDK's schemas (a zod parse of
 * the whole body cost about as much as the rest of a cached answer):
 * `{jsonrpc:"2.0", id, method:"tools/call", params:{name, arguments}}` with exactly those
 * members, a string or safe-integer id and an object of arguments. Every such body passes
 * `JSONRPCRequestSchema` (strict) and `CallToolRequestSchema` without `task` or `_meta`; anything
 * else (another member, a missing one, another id type) is left to them.
 */
function plainOfferCall(body: unknown): { id: string | number; args: Record<string, unknown> } | null {
  if (!isRecord(body)) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== 'tools/call' || !isRecord(params) || Object.keys(body).length !== 4) return null;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  const { name, arguments: args } = params;
  if (name !== OFFER_TOOL_NAME || !isRecord(args) || Object.keys(params).length !== 2) return null;
  return { id: id as string | number, args };
}
