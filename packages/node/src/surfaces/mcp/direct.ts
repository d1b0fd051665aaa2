/**
 * The direct answer to the common MCP call: a lone `tools/call get_verified_stay_offer` the SDK
 * would hand straight to the offer tool's handler (checked with the SDK's own schemas and rules,
 * on 2025-11-25 and older revisions and on 2026-07-28) is answered from the signed offer's exact
 * bytes, byte for byte what the SDK writes for `callOfferTool`'s result on that revision (members
 * in the order its result schema and wire codec emit them; a test holds the two equal per
 * revision), instead of validating our own ~19 KB result and serialising the envelope twice.
 */
import { ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJSONRPCRequest,
  isSpecType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { isRecord, type JwsSigner, toUtcSecond } from '@vrpkit/core';
import { MCP_TRANSPORT_LAYER, type OfferEnvelope, RECEIPT_META_KEY } from '@vrpkit/protocol';
import type { Context } from 'hono';
import { issueMcpReceipt } from '../../receipt.js';
import type { OfferOutcome, OfferService } from '../../service/index.js';
import { inSigningTurn } from '../../signing-turn.js';
import { argumentsOfferFor } from '../offer-parses.js';
import { OFFER_TOOL_NAME } from '../tool.js';
import { MCP_SERVER_INFO, refusalResult } from './result.js';

/**
 * Per signed offer, its answers' bytes: the content members
 * (`,"content":[{"type":"text","text":…}],"structuredContent":…`, the envelope's exact bytes as a
 * JSON string literal, then as they are), built once, and per revision the last answer up to its
 * JSON-RPC tail with what its receipt was issued for. The signed-offer cache hands every call for
 * a stay the same envelope object.
 */
interface OfferAnswerBytes {
  content: Buffer<ArrayBuffer>;
  last: Partial<Record<McpEra, IssuedAnswer>>;
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
/**
 * An answer as two pieces: the bytes before the JSON-RPC tail (shared between calls) and the tail
 * with the call's id, as text (a few dozen bytes the socket encodes as it writes them, rather than
 * a buffer made per call).
 */
export type AnswerParts = [Buffer<ArrayBuffer>, string];
const RESULT_HEAD = Buffer.from(`{"result":{"_meta":{${JSON.stringify(RECEIPT_META_KEY)}:`);
/**
 * What the SDK's 2026-07-28 encoder adds to a result (its wire codec's `encodeResult`):
 * `resultType` last, and its serverInfo in `_meta` after the keys the handler wrote (the receipt).
 */
const MODERN_RESULT_TYPE = { resultType: 'complete' } as const;
const MODERN_SERVER_INFO = { [SERVER_INFO_META_KEY]: MCP_SERVER_INFO };
/** Per revision, the bytes closing `_meta` after the receipt, and closing the result after the content. */
const RESULT_JOINTS: Record<McpEra, { metaEnd: Buffer<ArrayBuffer>; resultEnd: Buffer<ArrayBuffer> }> = {
  legacy: { metaEnd: Buffer.from('}'), resultEnd: Buffer.from('}') },
  modern: {
    metaEnd: Buffer.from(`,${JSON.stringify(MODERN_SERVER_INFO).slice(1)}`),
    resultEnd: Buffer.from(`,${JSON.stringify(MODERN_RESULT_TYPE).slice(1)}`),
  },
};

/**
 * The JSON-RPC answer to a direct offer call on revision `era`: `callOfferTool`'s result as the
 * SDK serialises it after its result schema (`_meta`, `content`, `structuredContent`; a refusal
 * `content`, `isError`) and, on 2026-07-28, its encoder's additions, with the envelope written
 * as its signed bytes rather than re-serialised from the object, then `jsonrpc` and `id` in the
 * SDK's order. The offer is the endpoint's, answered without a store wait when the store state
 * is known (`OfferService.offer`); when that offer's answer was issued already (`IssuedAnswer`)
 * the answer is given in the same turn, without a promise. `args` is parsed JSON.
 */
export function offerToolAnswer(service: OfferService, { args, id, era }: DirectOfferCall): AnswerParts | Promise<AnswerParts> {
  // The receipt check below compares the arguments by this text too.
  const argsText = JSON.stringify(args);
  const outcome = offerForArguments(service, args, argsText);
  const call = { args, argsText, id, era };
  return outcome instanceof Promise ? outcome.then((o) => answerTo(service, o, call)) : answerTo(service, outcome, call);
}

/** `offerFor` with the offer tool's accepted argument parses remembered (offer-parses.ts). */
const offerForArguments = argumentsOfferFor();

function answerTo(
  service: OfferService,
  outcome: OfferOutcome,
  call: { args: Record<string, unknown>; argsText: string; id: string | number; era: McpEra },
): AnswerParts | Promise<AnswerParts> {
  const { argsText, id, era } = call;
  const tail = `,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
  if (!outcome.ok) {
    const { content, isError } = refusalResult(outcome.error);
    const result = era === 'legacy' ? { content, isError } : { content, isError, ...MODERN_RESULT_TYPE, _meta: MODERN_SERVER_INFO };
    return [Buffer.from(`{"result":${JSON.stringify(result)}`), tail];
  }
  const { envelope } = outcome;
  let bytes = answerBytes.get(envelope);
  if (bytes === undefined) {
    const content = Buffer.from(`,"content":[{"type":"text","text":${JSON.stringify(outcome.json)}}],"structuredContent":${outcome.json}`);
    bytes = { content, last: {} };
    answerBytes.set(envelope, bytes);
  }
  const last = bytes.last[era];
  if (last?.argsText === argsText && last.signer === service.activeSigner() && last.servedAt === toUtcSecond(service.now())) {
    return [last.untilTail, tail];
  }
  return issueAnswer(service, envelope, bytes, call).then((untilTail): AnswerParts => [untilTail, tail]);
}

/** A new receipt for `envelope` (signed in this turn's signing batch) and the answer's bytes up to its JSON-RPC tail, kept as `bytes.last`. */
async function issueAnswer(
  service: OfferService,
  envelope: OfferEnvelope,
  bytes: OfferAnswerBytes,
  call: { args: Record<string, unknown>; argsText: string; era: McpEra },
): Promise<Buffer<ArrayBuffer>> {
  const { args, argsText, era } = call;
  const { receipt, signer } = await inSigningTurn(() => ({
    signer: service.activeSigner(),
    receipt: issueMcpReceipt({ service, tool: OFFER_TOOL_NAME, arguments: args, envelope }),
  }));
  const { metaEnd, resultEnd } = RESULT_JOINTS[era];
  const untilTail = Buffer.concat([RESULT_HEAD, Buffer.from(JSON.stringify(receipt)), metaEnd, bytes.content, resultEnd]);
  const servedAt = receipt.attestations.find((a) => a.layer === MCP_TRANSPORT_LAYER)?.valid_from;
  if (typeof servedAt === 'string') bytes.last[era] = { argsText, servedAt, signer, untilTail };
  return untilTail;
}

/**
 * Send a direct answer (the MCP surface's and the A2A surface's, surfaces/a2a/direct.ts). On
 * @hono/node-server (`c.env.outgoing`) its pieces are written to the Node response as they are,
 * corked into one write with the headers: the shared bytes (~19 KB on MCP, the ~7 KB envelope on
 * A2A) are not copied into a new buffer per call. Elsewhere (`app.request`, another server) it is
 * one Response.
 */
export function sendAnswer(c: Context, pieces: readonly (Uint8Array<ArrayBuffer> | string)[]): Response {
  const length = pieces.reduce((sum, piece) => sum + (typeof piece === 'string' ? Buffer.byteLength(piece) : piece.byteLength), 0);
  const headers = { 'content-type': 'application/json', 'content-length': String(length) };
  const out = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
  if (!(out instanceof ServerResponse) || out.headersSent) {
    return new Response(Buffer.concat(pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece))), {
      status: 200,
      headers,
    });
  }
  out.cork();
  out.writeHead(200, headers);
  // A string piece is written as UTF-8, the encoding its length was counted in.
  for (let i = 0; i < pieces.length - 1; i++) out.write(pieces[i] as Uint8Array | string);
  out.end(pieces.at(-1));
  out.uncork();
  return RESPONSE_ALREADY_SENT;
}

/** MCP's stateless revision (specification/2026-07-28): the SDK's `modern` era. */
export const MCP_MODERN_REVISION = '2026-07-28';
/** The MCP revision a direct call was made on: the SDK's era split (`legacy` is 2025-11-25 and older). */
export type McpEra = 'legacy' | 'modern';
/** A call answered directly: its id, its arguments as sent, and the revision to answer it on. */
export interface DirectOfferCall {
  id: string | number;
  args: Record<string, unknown>;
  era: McpEra;
}
/** MCP 2026-07-28 (basic/index, "_meta"): the per-request envelope keys a client sends on every request. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]);

/**
 * The id and the arguments (as sent) of a body the SDK would hand straight to the offer tool's
 * handler and answer with nothing but its result; null for anything else, which the SDK then
 * answers itself. The checks are the SDK's, per revision:
 * - 2025-era: its Accept and protocol-version rules (the transport is stateless, so there is no
 *   session to check), one JSON-RPC request (not a batch, not `initialize`), and its `tools/call`
 *   schema; a call asking for a task or carrying `_meta` (progress, related task) stays on the
 *   SDK's path.
 * - 2026-07-28: the plain call whose `_meta` is the per-request envelope and nothing else
 *   (protocol version, client capabilities, client info), sent with the `MCP-Protocol-Version`,
 *   `Mcp-Method` and `Mcp-Name` headers naming exactly what the body names (transports, "Standard
 *   request headers"), and classified `modern` by the SDK's own `classifyInboundRequest` (which
 *   validates the envelope); anything else (a progress token, a mismatch the spec answers with
 *   -32020, another header set) is the SDK's.
 */
export function directOfferCall(c: Context, body: unknown): DirectOfferCall | null {
  const accept = c.req.header('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  const version = c.req.header('mcp-protocol-version');
  if (version === MCP_MODERN_REVISION) return modernOfferCall(c, body);
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  const plain = plainOfferCall(body, 'legacy');
  if (plain) return plain;
  if (!isJSONRPCRequest(body) || body.method !== 'tools/call') return null;
  if (!isSpecType.CallToolRequest(body)) return null;
  const { params } = body;
  if (params.name !== OFFER_TOOL_NAME || params.task !== undefined || params._meta !== undefined) return null;
  // The arguments as sent, not the schema's copy (see `toolCallArguments`).
  const sent = (body.params as Record<string, unknown>).arguments as Record<string, unknown> | undefined;
  return { id: body.id, args: sent ?? {}, era: 'legacy' };
}

/**
 * The SDK's verdict on a plain offer call's envelope, by the envelope's JSON text. With the
 * headers fixed and the body in its plainest form, `classifyInboundRequest` decides on the
 * `_meta` envelope alone (its schema validation of client info and capabilities), and a client
 * sends the same envelope on every call: the verdict is reused instead of validating it again
 * (about 20 µs a call on a loaded core). Bounded: cleared when it holds `ENVELOPE_VERDICTS_MAX`.
 */
const envelopeVerdicts = new Map<string, boolean>();
const ENVELOPE_VERDICTS_MAX = 256;

function modernOfferCall(c: Context, body: unknown): DirectOfferCall | null {
  if (c.req.header('mcp-method') !== 'tools/call' || c.req.header('mcp-name') !== OFFER_TOOL_NAME) return null;
  const plain = plainOfferCall(body, 'modern');
  if (!plain) return null;
  const meta = ((body as { params: Record<string, unknown> }).params as { _meta?: unknown })._meta;
  if (!isRecord(meta) || !Object.keys(meta).every((key) => ENVELOPE_KEYS.has(key))) return null;
  // Parsed JSON holds no undefined, function or toJSON member: equal text is an equal envelope.
  const text = JSON.stringify(meta);
  let modern = envelopeVerdicts.get(text);
  if (modern === undefined) {
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: MCP_MODERN_REVISION,
      mcpMethodHeader: 'tools/call',
      mcpNameHeader: OFFER_TOOL_NAME,
      body,
    });
    modern = route.kind === 'modern' && route.classification.revision === MCP_MODERN_REVISION;
    if (envelopeVerdicts.size >= ENVELOPE_VERDICTS_MAX) envelopeVerdicts.clear();
    envelopeVerdicts.set(text, modern);
  }
  return modern ? plain : null;
}

/**
 * The common call in its plainest form, recognised without the SDK's schemas (a zod parse of
 * the whole body cost about as much as the rest of a cached answer):
 * `{jsonrpc:"2.0", id, method:"tools/call", params:{name, arguments}}` with exactly those
 * members (and `_meta` on 2026-07-28, where it carries the envelope and is checked by the
 * caller), a string or safe-integer id and an object of arguments. Every such body passes the
 * SDK's strict JSON-RPC request schema and its `tools/call` schema without `task`; anything else
 * (another member, a missing one, another id type) is left to them. The call is built here, for
 * `era`, in one object literal (a spread copy of it measured about 2 µs a call).
 */
function plainOfferCall(body: unknown, era: McpEra): DirectOfferCall | null {
  const paramCount = era === 'modern' ? 3 : 2;
  if (!isRecord(body)) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== 'tools/call' || !isRecord(params) || Object.keys(body).length !== 4) return null;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  const { name, arguments: args } = params;
  if (name !== OFFER_TOOL_NAME || !isRecord(args) || Object.keys(params).length !== paramCount) return null;
  if (paramCount === 3 && !Object.hasOwn(params, '_meta')) return null;
  return { id: id as string | number, args, era };
}
