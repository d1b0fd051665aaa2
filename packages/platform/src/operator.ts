/**
 * The platform's own surface on its own domain (Node Tool Binding v0.1 §7, §14): an MCP endpoint
 * whose one tool is operator-namespaced, `vrp_get_verified_stay_offer`, taking the tenant's
 * `domain` beside the §4 arguments. It is an operator tool: it never lists the bound name
 * `get_verified_stay_offer` (§7), and it returns the tenant's signed envelope unmodified (§5),
 * so an agent verifies it against the tenant's own JWKS and, by the origin binding (§6), treats
 * it as the platform's relay of the node's offer, never as the node's own voice.
 */
import { type CallToolResult, createMcpHandler, ProtocolError, ProtocolErrorCode, Server, type Tool } from '@modelcontextprotocol/server';
import { isRecord } from '@vrpkit/core';
import { HEALTHZ_PATH, NODE_LIST_CACHE_HINT, offerFor, readMcpBody, toolCallArguments } from '@vrpkit/node';
import { JWKS_PATH, MCP_ENDPOINT_PATH, offerToolInputSchema } from '@vrpkit/protocol';
import { Hono } from 'hono';
import type { TenantNode } from './tenant-node.js';

/** §7, §14: the operator's own name for the relayed capability. */
export const OPERATOR_TOOL_NAME = 'vrp_get_verified_stay_offer';

const SERVER_INFO = { name: 'vrpkit-platform', version: '0.1.0' } as const;
const OPERATOR_MAX_BODY_BYTES = 64 * 1024;

function operatorTool(operatorDomain: string): Tool {
  const schema = offerToolInputSchema() as { properties: Record<string, unknown>; required: string[] } & Record<string, unknown>;
  return {
    name: OPERATOR_TOOL_NAME,
    title: 'Get a hosted node’s verified stay offer (operator relay)',
    description:
      `Operated by ${operatorDomain}: relays the signed verified stay offer of the host domain named by \`domain\`, unmodified. ` +
      `This tool does NOT verify the signature and is not the node's own surface: verify signature.jws against the JWKS at ` +
      `https://DOMAIN${JWKS_PATH} before quoting anything.`,
    inputSchema: {
      ...schema,
      properties: {
        domain: { type: 'string', description: 'the host domain (canonical_domain) whose offer to relay' },
        ...schema.properties,
      },
      required: ['domain', ...schema.required],
    } as unknown as Tool['inputSchema'],
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  };
}

type TenantFor = (domain: string) => Promise<TenantNode | undefined>;

/**
 * `tools/call vrp_get_verified_stay_offer`: the named tenant's signed envelope unmodified (§5), or
 * an `isError` result with the tenant's (or `unknown_tenant`) code. `args` are the arguments as the
 * client sent them (see `toolCallArguments`), so the offer parser sees an own `__proto__` member.
 */
async function relayOffer(tenantFor: TenantFor, sent: unknown): Promise<CallToolResult> {
  const { domain, ...args } = isRecord(sent) ? sent : {};
  const node = typeof domain === 'string' ? await tenantFor(domain.toLowerCase()) : undefined;
  if (!node || node.domain !== domain)
    return { isError: true, content: [{ type: 'text', text: 'error[unknown_tenant]: this platform serves no such domain' }] };
  const outcome = await offerFor(node.publisher, args);
  if (!outcome.ok) return { isError: true, content: [{ type: 'text', text: `error[${outcome.error.code}]: ${outcome.error.message}` }] };
  // §5: the tenant's envelope exactly as signed, as text and as the same structured document.
  return { content: [{ type: 'text', text: outcome.json }], structuredContent: outcome.envelope as unknown as Record<string, unknown> };
}

/**
 * The operator's `Server` for one request of either MCP revision (the SDK picks the wire, the
 * handlers are era-blind, as on the node's surface). The one tool list is the same for every
 * client, so it carries the node's `public` cache hint on 2026-07-28.
 */
function operatorServer(tool: Tool, tenantFor: TenantFor, sentArguments: Map<unknown, unknown>): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    cacheHints: { 'tools/list': NODE_LIST_CACHE_HINT, 'server/discover': NODE_LIST_CACHE_HINT },
  });
  server.setRequestHandler('tools/list', () => ({ tools: [tool] }));
  server.setRequestHandler('tools/call', (request, ctx) => {
    // The SDK's ProtocolError carries the bare message; the client adds its one "MCP error -32602:" prefix.
    if (request.params.name !== OPERATOR_TOOL_NAME)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
    const id = ctx.mcpReq.id;
    return relayOffer(tenantFor, sentArguments.has(id) ? sentArguments.get(id) : request.params.arguments);
  });
  return server;
}

/**
 * `tenantFor(domain)`: the enabled tenant with that canonical domain, or undefined. `/mcp` serves
 * both MCP revisions through the SDK v2's `createMcpHandler` (issue 32 item 1): 2026-07-28 per
 * request, 2025-era traffic by its stateless fallback, one factory for both.
 */
export function createOperatorApp(operatorDomain: string, tenantFor: TenantFor): Hono {
  const tool = operatorTool(operatorDomain);
  // The arguments as sent, per request (the factory gets the `Request` given to `fetch` on either revision).
  const sent = new WeakMap<Request, Map<unknown, unknown>>();
  const mcp = createMcpHandler(({ requestInfo }) => operatorServer(tool, tenantFor, (requestInfo && sent.get(requestInfo)) ?? new Map()), {
    legacy: 'stateless',
    maxRequestBodySize: OPERATOR_MAX_BODY_BYTES,
  });
  const app = new Hono();
  app.get(HEALTHZ_PATH, (c) => c.json({ status: 'ok' }, 200, { 'cache-control': 'no-store' }));
  app.all(MCP_ENDPOINT_PATH, async (c) => {
    if (c.req.method !== 'POST')
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed: use POST.' } }, 405, {
        allow: 'POST',
      });
    // Anything but JSON takes the SDK's own path (415); a JSON body is read (capped, depth-bounded,
    // a batch checked against the MCP revision) before the SDK sees it.
    if (c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase() !== 'application/json') return mcp.fetch(c.req.raw);
    const read = await readMcpBody(c, OPERATOR_MAX_BODY_BYTES);
    if (!read.ok) return read.response;
    sent.set(c.req.raw, toolCallArguments(read.value));
    return mcp.fetch(c.req.raw, { parsedBody: read.value });
  });
  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'no such resource' } }, 404));
  return app;
}
