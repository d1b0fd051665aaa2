/**
 * The `mcp` surface (Node Tool Binding v0.1 §3–§5): Streamable HTTP at `/mcp`, stateless, with the
 * official SDK. A stateless transport cannot be reused across requests, so every POST gets a
 * fresh low-level `Server` and transport; the tool list is built once per offer service.
 *
 * The low-level `Server` (not `McpServer.registerTool`) is used so `tools/list` shows exactly
 * the §4 JSON Schema — three required snake_case keys, camelCase aliases optional — and the
 * arguments reach the protocol's parser untouched. One message skips the SDK's response path:
 * the lone offer call (direct.ts). Every other message, and any call that fails, is the SDK's.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { isRecord, mcpBatchRefusal } from '@vrpkit/core';
import { MCP_ENDPOINT_PATH } from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import { jsonRpcErrorResponse, jsonTooDeepResponse, readJsonBody } from '../../http/body.js';
import type { OfferService } from '../../service/index.js';
import { perService } from '../per-service.js';
import { OFFER_TOOL_NAME } from '../tool.js';
import type { ServiceOf } from '../types.js';
import { directOfferCall, offerToolAnswer, sendAnswer } from './direct.js';
import { callOfferTool, MCP_MAX_BODY_BYTES, offerTool } from './result.js';

const SERVER_INFO = { name: 'vrpkit-node', version: '0.1.0' } as const;

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
  const batch = mcpBatchRefusal(read.value, c.req.header('mcp-protocol-version'));
  if (batch) return { ok: false, response: jsonRpcErrorResponse(null, { code: -32600, message: batch }, 400) };
  return read;
}

/** One validator per process, not per mount: an Ajv instance is tens of KB, and platform mode mounts one app per tenant. */
let sharedValidator: AjvJsonSchemaValidator | undefined;

export function mountMcp(app: Hono, serviceOf: ServiceOf): void {
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
    const read = await readMcpBody(c, MCP_MAX_BODY_BYTES);
    if (!read.ok) return read.response;
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
