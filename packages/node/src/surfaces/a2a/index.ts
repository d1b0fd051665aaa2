/**
 * The `a2a` surface (Node Tool Binding v0.1 §3–§6) with `@a2a-js/sdk` 1.3 (A2A protocol 1.0) and the 0.3
 * legacy binding. The SDK ships Express handlers only; this mirrors what its `jsonRpcHandler`
 * and `agentCardHandler` do (dist/server/express) on the node's Hono app, with the SDK's own
 * `JsonRpcTransportHandler` / `LegacyJsonRpcTransportHandler` doing the JSON-RPC work. The card is
 * card.ts, the agent behind it executor.ts. One message skips the SDK's response path on either
 * binding: the plain offer call whose reply is the signed envelope (direct.ts); every other
 * message, and any call that is refused or fails, is the SDK's.
 */
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER, Extensions, HTTP_EXTENSION_HEADER } from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION } from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import {
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  type ServerCallContext,
  UnauthenticatedUser,
  validateVersion,
} from '@a2a-js/sdk/server';
import { isRecord } from '@vrpkit/core';
import { A2A_JSONRPC_PATH, AGENT_CARD_PATH } from '@vrpkit/protocol';
import type { Hono } from 'hono';
import { jsonRpcErrorResponse, jsonTooDeepResponse, readJsonBody } from '../../http/body.js';
import type { OfferService } from '../../service/index.js';
import { sendAnswer } from '../mcp/direct.js';
import { perService } from '../per-service.js';
import type { ServiceOf } from '../types.js';
import { buildAgentCard, toLegacyAgentCard } from './card.js';
import { directSendMessage, sendMessageAnswer } from './direct.js';
import { OfferExecutor, RequestScopedTaskStore } from './executor.js';

export const A2A_MAX_BODY_BYTES = 64 * 1024;
const JSON_RPC_PARSE_ERROR = -32700;
const JSON_RPC_INVALID_REQUEST = -32600;
const JSON_RPC_INVALID_PARAMS = -32602;
/** The A2A 1.0 methods that carry a message to the agent. */
const MESSAGE_METHODS = new Set(['SendMessage', 'SendStreamingMessage']);

/**
 * Why a parsed body is refused before the SDK sees it, as JSON-RPC errors (issue 36 defect 14):
 * not a JSON-RPC 2.0 Request object (JSON-RPC 2.0 §4: `jsonrpc` exactly "2.0", `method` a
 * string, `id` a string, number or null) is -32600 Invalid Request — the SDK answers it -32602;
 * an A2A 1.0 message without parts is -32602 Invalid params (A2A 1.0, the Message object: `parts`
 * holds at least one Part, and a server must reject a message without) — the SDK would run it
 * into a failed task.
 */
function refusedRequest(body: Record<string, unknown>, legacy: boolean): { code: number; message: string } | undefined {
  const { id, method } = body;
  const idOk = id === undefined || id === null || typeof id === 'string' || typeof id === 'number';
  if (body.jsonrpc !== '2.0' || typeof method !== 'string' || method === '' || !idOk)
    return { code: JSON_RPC_INVALID_REQUEST, message: 'Invalid Request: not a JSON-RPC 2.0 request object' };
  if (legacy || !MESSAGE_METHODS.has(method)) return undefined;
  const message = isRecord(body.params) ? body.params.message : undefined;
  const parts = isRecord(message) ? message.parts : undefined;
  if (!Array.isArray(parts) || parts.length === 0)
    return { code: JSON_RPC_INVALID_PARAMS, message: 'Invalid params: a message must contain at least one part' };
  return undefined;
}

function isLegacyRequest(version: string | undefined): boolean {
  // The SDK's rule: an absent header means 0.3.
  return (version || A2A_LEGACY_PROTOCOL_VERSION) === A2A_LEGACY_PROTOCOL_VERSION;
}

/** The card and the SDK's request handlers of one offer service. */
function a2aAgent(service: OfferService) {
  const card = buildAgentCard(service);
  const requestHandler = new DefaultRequestHandler(card, new RequestScopedTaskStore(), new OfferExecutor(service));
  return {
    card,
    cardJson: JSON.stringify(card),
    legacyCardJson: JSON.stringify(toLegacyAgentCard(card)),
    v1: new JsonRpcTransportHandler(requestHandler),
    legacy: new LegacyJsonRpcTransportHandler(requestHandler),
  };
}

export function mountA2a(app: Hono, serviceOf: ServiceOf): void {
  const agentOf = perService(a2aAgent);

  app.get(AGENT_CARD_PATH, (c) => {
    const { cardJson, legacyCardJson } = agentOf(serviceOf(c));
    const body = isLegacyRequest(c.req.header(A2A_VERSION_HEADER)) ? legacyCardJson : cardJson;
    return c.body(body, 200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300', vary: A2A_VERSION_HEADER });
  });

  app.post(A2A_JSONRPC_PATH, async (c) => {
    const requestedVersion = c.req.header(A2A_VERSION_HEADER) || undefined;
    const useLegacy = isLegacyRequest(requestedVersion);
    const mapToError = useLegacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
    const mediaType = (c.req.header('content-type') ?? 'application/json').split(';', 1)[0]?.trim().toLowerCase();
    if (mediaType !== 'application/json')
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32005, message: 'expected application/json' } }, 415);
    const read = await readJsonBody(c, A2A_MAX_BODY_BYTES);
    if (!read.ok) {
      if (read.refusal === 'body_too_large')
        return jsonRpcErrorResponse(null, { code: -32000, message: `request body exceeds ${A2A_MAX_BODY_BYTES} bytes` }, 413);
      if (read.refusal === 'json_too_deep') return jsonTooDeepResponse(read.value, 200);
      return jsonRpcErrorResponse(null, { code: JSON_RPC_PARSE_ERROR, message: 'Invalid JSON payload.' });
    }
    const body = read.value;
    if (!isRecord(body)) return jsonRpcErrorResponse(null, { code: JSON_RPC_PARSE_ERROR, message: 'Invalid JSON payload.' });
    const refused = refusedRequest(body, useLegacy);
    if (refused) return jsonRpcErrorResponse(body.id, refused);
    const service = serviceOf(c);
    // The plain offer call skips the SDK's response path (direct.ts) on a version the card lists
    // (any other the SDK refuses), unless extensions are asked for (the SDK's context then filters
    // them); a refused stay or a failure is the SDK's to answer.
    const era = useLegacy ? 'legacy' : requestedVersion === A2A_PROTOCOL_VERSION ? 'v1' : null;
    const direct = era && c.req.header(HTTP_EXTENSION_HEADER) === undefined ? directSendMessage(body, era) : null;
    if (direct) {
      try {
        const pending = sendMessageAnswer(service, direct);
        const answer = pending instanceof Promise ? await pending : pending;
        if (answer) return sendAnswer(c, answer);
      } catch {
        // Answered below by the SDK, in its own JSON-RPC error shape.
      }
    }
    const { card, v1, legacy } = agentOf(service);
    try {
      const context: ServerCallContext = defaultServerCallContextBuilder({
        extensions: Extensions.parseServiceParameter(c.req.header(HTTP_EXTENSION_HEADER)),
        user: new UnauthenticatedUser(),
        headers: c.req.header(),
        requestedVersion,
      });
      validateVersion(context.requestedVersion, card, 'JSONRPC');
      const result = await (useLegacy ? legacy : v1).handle(body, context);
      // The card declares streaming: false, so a stream is never the answer here.
      if (result && typeof (result as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
        await (result as AsyncGenerator).return(undefined);
        return jsonRpcErrorResponse(body.id, { code: -32004, message: 'streaming is not supported by this agent' });
      }
      return c.json(result);
    } catch (error) {
      return jsonRpcErrorResponse(body.id, mapToError(error));
    }
  });
}
