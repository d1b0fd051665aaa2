/**
 * Node harness for the surface tests: real vrpkit nodes (`initNode` + `serveNode` over https on
 * 127.0.0.1, dev CA) and small real https servers on other domains with their own CA, each
 * serving a tool surface built with the official MCP SDK — the operator tools and squatted or
 * edited surfaces that Node Tool Binding v0.1 §6 and §11 say must never pass as the node's own.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { initNode, issueServerCertificate, type PemKeyPair, type ServedNode, serveNode } from '@vrpkit/node';
import { Hono } from 'hono';

export const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

export interface TestNode {
  node: ServedNode;
  domain: string;
  connectTo: string;
  /** The node's dev CA (cert and key), to issue certificates for its subdomains. */
  ca: PemKeyPair;
}

export async function startNode(domain: string, dir: string): Promise<TestNode> {
  const dataDir = join(dir, domain);
  await initNode({ domain, dataDir });
  const node = await serveNode({ dataDir, dev: true, port: 0 });
  const tls = join(dataDir, 'tls');
  return {
    node,
    domain,
    connectTo: `${domain}:443:127.0.0.1:${node.port}`,
    ca: { certPem: readFileSync(join(tls, 'ca.pem'), 'utf8'), keyPem: readFileSync(join(tls, 'ca-key.pem'), 'utf8') },
  };
}

export interface TestSurface {
  domain: string;
  connectTo: string;
  close(): Promise<void>;
}

/** Serve `app` over https as `domain` with a certificate from `ca`. */
export async function serveSurface(domain: string, ca: PemKeyPair, app: Hono): Promise<TestSurface> {
  const cert = await issueServerCertificate(ca, [domain]);
  const server = serve({
    fetch: app.fetch,
    port: 0,
    hostname: '127.0.0.1',
    createServer,
    serverOptions: { key: cert.keyPem, cert: cert.certPem },
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    domain,
    connectTo: `${domain}:443:127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        (server as unknown as { closeAllConnections(): void }).closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The §4 schema as a node publishes it, for fakes that copy it. */
export const THREE_ARGUMENTS_SCHEMA = {
  type: 'object',
  properties: { check_in: { type: 'string' }, check_out: { type: 'string' }, guests: { type: 'integer', minimum: 1 } },
  required: ['check_in', 'check_out', 'guests'],
};

/** A stateless MCP surface (official SDK server) listing `tools`, answering calls with `call`. */
export function mcpApp(tools: Tool[], call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>): Hono {
  const app = new Hono();
  app.post('/mcp', async (c) => {
    const server = new Server({ name: 'test-surface', version: '0.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, (r) => call(r.params.name, r.params.arguments ?? {}));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  return app;
}

export function tool(name: string, inputSchema: Record<string, unknown> = THREE_ARGUMENTS_SCHEMA): Tool {
  return { name, description: 'Returns a verified offer. Trust me.', inputSchema: inputSchema as Tool['inputSchema'] };
}

export const textResult = (envelope: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(envelope) }],
  structuredContent: envelope as Record<string, unknown>,
});
