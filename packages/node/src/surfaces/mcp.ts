/**
 * MCP surface (Node Tool Binding v0.1 §3–§5): Streamable HTTP at `/mcp`, stateless, with the
 * official SDK. A stateless transport cannot be reused across requests, so every POST gets a
 * fresh low-level `Server` and transport; the tool list is built once per mount.
 *
 * The low-level `Server` (not `McpServer.registerTool`) is used so `tools/list` shows exactly
 * the §4 JSON Schema — three required snake_case keys, camelCase aliases optional — and the
 * arguments reach the offer service untouched; the service is the single validator.
 *
 * One message skips the SDK's response path: a lone `tools/call get_verified_stay_offer` the SDK
 * would hand straight to our handler (checked with the SDK's own schemas and rules). Its answer
 * is written from the signed offer's exact bytes — what the SDK writes for `callOfferTool`'s
 * result, byte for byte (members in the order its result schema emits them; a test holds the two
 * equal) — instead of validating our own ~19 KB result and serialising the envelope twice,
 * which was most of a call's cost. Every other message, and any call that fails, is the SDK's.
 */
import { ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { isRecord, type JwsSigner, toUtcSecond } from '@vrpkit/core';
import { MCP_ENDPOINT_PATH, MCP_TRANSPORT_LAYER, type OfferEnvelope, RECEIPT_META_KEY } from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import { issueMcpReceipt } from '../receipt.js';
import type { OfferOutcome, OfferService } from '../service.js';
import { inSigningTurn } from '../signing-turn.js';
import { jsonRpcErrorResponse, jsonTooDeepResponse, readJsonBody } from './body.js';
import { perService } from './per-service.js';
import { OFFER_TOOL_INPUT_SCHEMA, OFFER_TOOL_NAME, OFFER_TOOL_TITLE, offerToolDescription } from './tool.js';

/** A tools/call body is three short arguments; anything near this is not a tool call. */
export const MCP_MAX_BODY_BYTES = 64 * 1024;

const SERVER_INFO = { name: 'vrpkit-node', version: '0.1.0' } as const;

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
function refusalResult(error: { code: string; message: string }): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `error[${error.code}]: ${error.message}` }] };
}

/**
 * `tools/call get_verified_stay_offer` → the signed envelope unmodified (§5): the endpoint's
 * exact JSON body as text content and the same object as `structuredContent`. Malformed input
 * is an `isError` result carrying the service's code, never an invented offer.
 */
export async function callOfferTool(service: OfferService, args: Record<string, unknown>): Promise<CallToolResult> {
  // The offer is the endpoint's (signed-offer cache included); the receipt below is signed per call.
  const outcome = await service.getServedOffer(args);
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
type AnswerParts = [Buffer<ArrayBuffer>, Buffer<ArrayBuffer>];
const RESULT_HEAD = Buffer.from(`{"result":{"_meta":{${JSON.stringify(RECEIPT_META_KEY)}:`);

/**
 * The JSON-RPC answer to a direct offer call: `callOfferTool`'s result as the SDK serialises it
 * after its result schema (`_meta`, `content`, `structuredContent`; a refusal `content`,
 * `isError`), with the envelope written as its signed bytes rather than re-serialised from the
 * object, then `jsonrpc` and `id` in the SDK's order. The offer is the endpoint's, answered
 * without a store wait when the store state is known (`servedOfferNow`). `args` is parsed JSON.
 */
async function offerToolAnswer(service: OfferService, args: Record<string, unknown>, id: string | number): Promise<AnswerParts> {
  const outcome: OfferOutcome = await (service.servedOfferNow?.(args) ?? service.getServedOffer(args));
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
function sendAnswer(c: Context, [head, tail]: AnswerParts): Response {
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
function directOfferCall(c: Context, body: unknown): { id: string | number; args: Record<string, unknown> } | null {
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

/**
 * The `arguments` of every `tools/call` in a parsed body, by JSON-RPC id, exactly as the client
 * sent them. The SDK hands the handler a zod-parsed copy, and that copy silently loses an own
 * `"__proto__"` member (assigned onto a fresh object it sets the prototype), so the node would
 * sign over the rest; the request parser must see the arguments as sent to refuse it.
 */
function toolCallArguments(body: unknown): Map<unknown, unknown> {
  const sent = new Map<unknown, unknown>();
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isRecord(message) || message.method !== 'tools/call') continue;
    const { params } = message;
    if (isRecord(params) && Object.hasOwn(params, 'arguments')) {
      sent.set(message.id, params.arguments);
    }
  }
  return sent;
}

function buildServer(service: OfferService, tool: Tool, validator: jsonSchemaValidator, sentArguments: Map<unknown, unknown>): Server {
  // The validator (an Ajv instance, only used for elicitation) is shared: building one per request was half the SDK's cost.
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, jsonSchemaValidator: validator });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [tool] }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    if (request.params.name !== OFFER_TOOL_NAME) {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
    }
    // The SDK validated that `arguments` is an object; the offer service reads it as the client sent it.
    const args = sentArguments.has(extra.requestId) ? sentArguments.get(extra.requestId) : request.params.arguments;
    return callOfferTool(service, (args ?? {}) as Record<string, unknown>);
  });
  return server;
}

/** One validator per process, not per mount: an Ajv instance is tens of KB, and platform mode mounts one app per tenant. */
let sharedValidator: AjvJsonSchemaValidator | undefined;

export function mountMcp(app: Hono, serviceOf: (c: Context) => OfferService): void {
  const toolOf = perService(offerTool);
  sharedValidator ??= new AjvJsonSchemaValidator();
  const validator = sharedValidator;
  app.all(MCP_ENDPOINT_PATH, async (c) => {
    // Stateless server: no GET notification stream and no DELETE session to end.
    if (c.req.method !== 'POST')
      return jsonRpcErrorResponse(null, { code: -32000, message: 'Method not allowed: use POST.' }, 405, { allow: 'POST' });
    const service = serviceOf(c);
    const tool = toolOf(service);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_BODY_BYTES, // its own path (a body that is not JSON) is capped too
    });
    // No server.close() afterwards: in stateless JSON-response mode the transport has released
    // its request mappings once handleRequest resolves and the server holds no timers, so both
    // are garbage with the request. Closing built an McpError and aborted controllers for
    // nothing — measured at ~20% of MCP throughput; the heap stays flat without it.
    // Anything but JSON takes the SDK's own path (415). A JSON body is read here, capped, parsed
    // and depth-bounded before the SDK sees it (handed over as `parsedBody`); on @hono/node-server
    // a body of declared length is read straight from the socket, while the SDK's own reader goes
    // through a Node→web stream conversion that cost a third of MCP throughput.
    const json = c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
    if (!json) {
      await buildServer(service, tool, validator, toolCallArguments(undefined)).connect(transport);
      return transport.handleRequest(c.req.raw);
    }
    const read = await readJsonBody(c, MCP_MAX_BODY_BYTES);
    if (!read.ok) {
      if (read.refusal === 'body_too_large')
        return jsonRpcErrorResponse(
          null,
          { code: -32000, message: `Payload Too Large: Request body must not exceed ${MCP_MAX_BODY_BYTES} bytes` },
          413,
        );
      if (read.refusal === 'json_too_deep') return jsonTooDeepResponse(read.value, 400);
      return jsonRpcErrorResponse(null, { code: -32700, message: 'Parse error: Invalid JSON' }, 400);
    }
    const parsedBody = read.value;
    const direct = directOfferCall(c, parsedBody);
    if (direct) {
      try {
        return sendAnswer(c, await offerToolAnswer(service, direct.args, direct.id));
      } catch {
        // A failure is answered by the SDK, in its own JSON-RPC error shape.
      }
    }
    await buildServer(service, tool, validator, toolCallArguments(parsedBody)).connect(transport);
    return transport.handleRequest(c.req.raw, { parsedBody });
  });
}
