/**
 * The platform's own surface on its own domain (Node Tool Binding v0.1 §7, §14): an MCP endpoint
 * whose one tool is operator-namespaced, `vrp_get_verified_stay_offer`, taking the tenant's
 * `domain` beside the §4 arguments. It is an operator tool: it never lists the bound name
 * `get_verified_stay_offer` (§7), and it returns the tenant's signed envelope unmodified (§5),
 * so an agent verifies it against the tenant's own JWKS and, by the origin binding (§6), treats
 * it as the platform's relay of the node's offer, never as the node's own voice.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { isRecord } from '@vrpkit/core';
import { HEALTHZ_PATH, offerFor, readMcpBody } from '@vrpkit/node';
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

/** `tenantFor(domain)`: the enabled tenant with that canonical domain, or undefined. */
export function createOperatorApp(operatorDomain: string, tenantFor: (domain: string) => Promise<TenantNode | undefined>): Hono {
  const tool = operatorTool(operatorDomain);
  const app = new Hono();
  app.get(HEALTHZ_PATH, (c) => c.json({ status: 'ok' }, 200, { 'cache-control': 'no-store' }));
  app.all(MCP_ENDPOINT_PATH, async (c) => {
    if (c.req.method !== 'POST')
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed: use POST.' } }, 405);
    const server = new Server(SERVER_INFO, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [tool] }));
    server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
      if (request.params.name !== OPERATOR_TOOL_NAME) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
      const { domain, ...args } = isRecord(request.params.arguments) ? request.params.arguments : {};
      const node = typeof domain === 'string' ? await tenantFor(domain.toLowerCase()) : undefined;
      if (!node || node.domain !== domain)
        return { isError: true, content: [{ type: 'text', text: 'error[unknown_tenant]: this platform serves no such domain' }] };
      const outcome = await offerFor(node.publisher, args);
      if (!outcome.ok)
        return { isError: true, content: [{ type: 'text', text: `error[${outcome.error.code}]: ${outcome.error.message}` }] };
      // §5: the tenant's envelope exactly as signed, as text and as the same structured document.
      return { content: [{ type: 'text', text: outcome.json }], structuredContent: outcome.envelope as unknown as Record<string, unknown> };
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: OPERATOR_MAX_BODY_BYTES,
    });
    await server.connect(transport);
    // Anything but JSON takes the SDK's own path (415); a JSON body is read (capped, depth-bounded,
    // a batch checked against the MCP revision) before the SDK sees it.
    if (c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase() !== 'application/json')
      return transport.handleRequest(c.req.raw);
    const read = await readMcpBody(c, OPERATOR_MAX_BODY_BYTES);
    if (!read.ok) return read.response;
    return transport.handleRequest(c.req.raw, { parsedBody: read.value });
  });
  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'no such resource' } }, 404));
  return app;
}
