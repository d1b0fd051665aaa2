/**
 * The `mcp` surface (Node Tool Binding v0.1 §3–§5): Streamable HTTP at `/mcp`, stateless, with the
 * official SDK v2 serving both MCP revisions on one endpoint (issue 32 item 2):
 * - 2026-07-28 (per-request `_meta` envelope, `server/discover`, `resultType`, the
 *   `Mcp-Method`/`Mcp-Name`/`MCP-Protocol-Version` headers checked against the body) through the
 *   SDK's `createMcpHandler`, one per offer service;
 * - 2025-11-25 and the older revisions the SDK supports, statelessly as before: a fresh low-level
 *   `Server` and JSON-response transport per POST. `isLegacyRequest` (the SDK's own routing
 *   step) splits the two, so the node and the SDK can never disagree on a request's revision.
 *
 * The low-level `Server` (not `McpServer.registerTool`) is used so `tools/list` shows exactly
 * the §4 JSON Schema — three required snake_case keys, camelCase aliases optional — and the
 * arguments reach the protocol's parser untouched. One message skips the SDK's response path on
 * either revision: the lone offer call (direct.ts). Every other message, and any call that fails,
 * is the SDK's.
 *
 * With UCP booking sessions (app.ts), the same endpoint serves the UCP Lodging Booking MCP binding
 * (ucp.ts): its five tools answer any `tools/call` (a UCP platform knows them from mcp.openrpc.json and
 * names itself in `meta["ucp-agent"]`), and `tools/list` shows them beside the offer tool to a request
 * that carries the `UCP-Agent` header (signatures.md, MCP Transport: it "works identically to REST"),
 * with a private cache hint. Any other client sees the one offer tool, exactly as before.
 */
import {
  type CacheHint,
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type Tool,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { isRecord, mcpBatchRefusal } from '@vrpkit/core';
import { MCP_ENDPOINT_PATH } from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import { clientAddress } from '../../booking/http.js';
import { jsonRpcErrorResponse, jsonTooDeepResponse, readJsonBody } from '../../http/body.js';
import type { OfferService } from '../../service/index.js';
import { perService } from '../per-service.js';
import { OFFER_TOOL_NAME } from '../tool.js';
import type { ServiceOf } from '../types.js';
import { directOfferCall, offerToolAnswer, sendAnswer } from './direct.js';
import { callOfferTool, MCP_MAX_BODY_BYTES, MCP_SERVER_INFO, offerTool } from './result.js';
import { callUcpBookingTool, isUcpBookingTool, UCP_BOOKING_TOOL_LIST, type UcpMcpBinding } from './ucp.js';

/** The UCP Booking binding a request is answered with (a node with booking sessions), or none. */
export type UcpBindingFor = (c: Context) => UcpMcpBinding | undefined;

/** What one request brings to its `Server` beside the service: its arguments as sent and, with UCP, the binding. */
interface RequestScope {
  sentArguments: Map<unknown, unknown>;
  ucp?: {
    binding: UcpMcpBinding;
    /** The booking rate limit's key. */
    client: string;
    /** The request carries `UCP-Agent`: `tools/list` shows the Booking tools. */
    listed: boolean;
  };
}

/**
 * `ttlMs`/`cacheScope` on a 2026-07-28 `tools/list` and `server/discover` (SEP-2549
 * `CacheableResult`; specification/2026-07-28 server/tools). Both are functions of the node
 * alone — the same one tool, schema and description, the same revisions and capabilities for
 * every client, no per-principal filtering — so a shared cache may keep them (`public`). The tool's
 * description names the node's domain and JWKS path, which change only with the node's
 * configuration (a restart or a tenant reload); five minutes bounds how long a client keeps a stale
 * description after such a change, while sparing a `tools/list` before every call.
 */
export const NODE_LIST_CACHE_HINT: CacheHint = { ttlMs: 5 * 60 * 1000, cacheScope: 'public' };

/** The Booking tools' list varies with the `UCP-Agent` header: only the requester may cache it. */
const UCP_LIST_CACHE_HINT: CacheHint = { ttlMs: NODE_LIST_CACHE_HINT.ttlMs ?? 0, cacheScope: 'private' };

/**
 * The `arguments` of every `tools/call` in a parsed body, by JSON-RPC id, exactly as the client
 * sent them. The SDK hands the handler a zod-parsed copy, and that copy silently loses an own
 * `"__proto__"` member (assigned onto a fresh object it sets the prototype), so the node would
 * sign over the rest; the request parser must see the arguments as sent to refuse it.
 */
export function toolCallArguments(body: unknown): Map<unknown, unknown> {
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

/** One validator per process, not per mount: an Ajv instance is tens of KB, and platform mode mounts one app per tenant. */
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * The node's `Server` for one request of either revision: the SDK picks the wire (2025 results
 * as they are; 2026 ones with `resultType`, the cache hint on `tools/list` and its serverInfo in
 * `_meta`), the handlers are era-blind.
 */
function buildServer(service: OfferService, tool: Tool, scope: RequestScope): Server {
  const { sentArguments, ucp } = scope;
  const listHint = ucp?.listed ? UCP_LIST_CACHE_HINT : NODE_LIST_CACHE_HINT;
  // The validator (an Ajv instance, only used for elicitation) is shared: building one per request was half the SDK's cost.
  sharedValidator ??= new AjvJsonSchemaValidator();
  const server = new Server(MCP_SERVER_INFO, {
    capabilities: { tools: {} },
    jsonSchemaValidator: sharedValidator,
    cacheHints: { 'tools/list': listHint, 'server/discover': NODE_LIST_CACHE_HINT },
  });
  server.setRequestHandler('tools/list', () => ({ tools: ucp?.listed ? [tool, ...UCP_BOOKING_TOOL_LIST] : [tool] }));
  server.setRequestHandler('tools/call', (request, ctx) => {
    const { name } = request.params;
    if (ucp && isUcpBookingTool(name)) {
      const sent = sentArguments.has(ctx.mcpReq.id) ? sentArguments.get(ctx.mcpReq.id) : request.params.arguments;
      return callUcpBookingTool(ucp.binding, name, isRecord(sent) ? sent : {}, ucp.client);
    }
    if (name !== OFFER_TOOL_NAME) {
      // The SDK's ProtocolError carries the bare message; the client adds its one "MCP error -32602:" prefix.
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
    }
    // The SDK validated that `arguments` is an object; the offer service reads it as the client sent it.
    const id = ctx.mcpReq.id;
    const args = sentArguments.has(id) ? sentArguments.get(id) : request.params.arguments;
    return callOfferTool(service, (args ?? {}) as Record<string, unknown>);
  });
  return server;
}

/**
 * An MCP POST's JSON body, read before the SDK sees it: capped at `maxBytes` (413), parsed
 * (-32700), depth-bounded (`json_too_deep`) and, for a batch, checked against the request's MCP
 * revision (`mcpBatchRefusal`: -32600, HTTP 400), each refusal as the JSON-RPC answer to send.
 * The node's surface and the platform's operator surface read their bodies through it.
 */
export async function readMcpBody(c: Context, maxBytes: number): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const read = await readJsonBody(c, maxBytes);
  if (!read.ok) {
    const refused = (error: { code: number; message: string }, status: number) => ({
      ok: false as const,
      response: jsonRpcErrorResponse(null, error, status),
    });
    if (read.refusal === 'body_too_large')
      return refused({ code: -32000, message: `Payload Too Large: Request body must not exceed ${maxBytes} bytes` }, 413);
    if (read.refusal === 'json_too_deep') return { ok: false, response: jsonTooDeepResponse(read.value, 400) };
    return refused({ code: -32700, message: 'Parse error: Invalid JSON' }, 400);
  }
  // Only a batch needs the revision's header.
  const batch = Array.isArray(read.value) ? mcpBatchRefusal(read.value, c.req.header('mcp-protocol-version')) : undefined;
  if (batch) return { ok: false, response: jsonRpcErrorResponse(null, { code: -32600, message: batch }, 400) };
  return read;
}

/**
 * The arguments as sent of the 2026-07-28 request being served, by the request object the SDK
 * hands the server factory (`McpRequestContext.requestInfo` is the `Request` given to `fetch`).
 */
const modernScopes = new WeakMap<Request, RequestScope>();

/** Per offer service, the SDK's 2026-07-28 handler: its factory builds the node's `Server` per request. */
function modernHandler(service: OfferService, tool: Tool): McpHttpHandler {
  return createMcpHandler(
    ({ requestInfo }) => buildServer(service, tool, (requestInfo && modernScopes.get(requestInfo)) ?? { sentArguments: new Map() }),
    // 2025-era traffic never reaches it (routed below with the SDK's own predicate); `auto`
    // answers one JSON body, since the handlers emit nothing before their result.
    { legacy: 'reject', maxRequestBodySize: MCP_MAX_BODY_BYTES },
  );
}

/** A 2025-era request, served statelessly as before: a fresh `Server` and JSON-response transport per POST. */
async function serveLegacy(
  service: OfferService,
  tool: Tool,
  request: Request,
  ucp: RequestScope['ucp'],
  parsedBody?: unknown,
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MCP_MAX_BODY_BYTES, // its own path (a body that is not JSON) is capped too
  });
  // No server.close() afterwards: in stateless JSON-response mode the transport has released
  // its request mappings once handleRequest resolves and the server holds no timers, so both
  // are garbage with the request. Closing built an error and aborted controllers for
  // nothing — measured at ~20% of MCP throughput; the heap stays flat without it.
  await buildServer(service, tool, { sentArguments: toolCallArguments(parsedBody), ...(ucp ? { ucp } : {}) }).connect(transport);
  return parsedBody === undefined ? transport.handleRequest(request) : transport.handleRequest(request, { parsedBody });
}

/** With UCP booking sessions, what a request brings to its `Server`: the binding, the client's rate-limit key and whether it carries `UCP-Agent`. */
function ucpScope(c: Context, ucpOf: UcpBindingFor | undefined): RequestScope['ucp'] {
  const binding = ucpOf?.(c);
  return binding ? { binding, client: clientAddress(c), listed: c.req.header('ucp-agent') !== undefined } : undefined;
}

export function mountMcp(app: Hono, serviceOf: ServiceOf, ucpOf?: UcpBindingFor): void {
  const toolOf = perService(offerTool);
  const modernOf = perService((service: OfferService) => modernHandler(service, toolOf(service)));
  app.all(MCP_ENDPOINT_PATH, async (c) => {
    // Stateless server: no GET notification stream and no DELETE session to end.
    if (c.req.method !== 'POST')
      return jsonRpcErrorResponse(null, { code: -32000, message: 'Method not allowed: use POST.' }, 405, { allow: 'POST' });
    const service = serviceOf(c);
    // Anything but JSON takes the SDK's own path (415). A JSON body is read here, capped, parsed
    // and depth-bounded before the SDK sees it (handed over as `parsedBody`); on @hono/node-server
    // a body of declared length is read straight from the socket, while the SDK's own reader goes
    // through a Node→web stream conversion that cost a third of MCP throughput.
    const json = c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
    if (!json) return serveLegacy(service, toolOf(service), c.req.raw, ucpScope(c, ucpOf));
    const read = await readMcpBody(c, MCP_MAX_BODY_BYTES);
    if (!read.ok) return read.response;
    const parsedBody = read.value;
    const direct = directOfferCall(c, parsedBody);
    if (direct) {
      try {
        const answer = offerToolAnswer(service, direct);
        return sendAnswer(c, answer instanceof Promise ? await answer : answer);
      } catch {
        // A failure is answered by the SDK, in its own JSON-RPC error shape.
      }
    }
    // The tool and the UCP scope are the SDK path's alone: a direct answer takes neither.
    const tool = toolOf(service);
    const ucp = ucpScope(c, ucpOf);
    if (await isLegacyRequest(c.req.raw, parsedBody, { maxRequestBodySize: MCP_MAX_BODY_BYTES })) {
      return serveLegacy(service, tool, c.req.raw, ucp, parsedBody);
    }
    modernScopes.set(c.req.raw, { sentArguments: toolCallArguments(parsedBody), ...(ucp ? { ucp } : {}) });
    return modernOf(service).fetch(c.req.raw, { parsedBody });
  });
}
