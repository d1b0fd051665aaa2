/**
 * A real MCP server (SDK `McpServer` over Streamable HTTP on 127.0.0.1) that counts, at the
 * HTTP level, every JSON-RPC `tools/call` it receives and, in the tool, every run. Tests use
 * the counts to prove that a denied call never leaves the client.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface CountingMcpServer {
  /** The Streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/prod */
  url: string;
  /** JSON-RPC messages with method tools/call that reached the server. */
  readonly toolsCallRequests: number;
  /** Runs of the repo_deploy tool. */
  readonly deploys: number;
  close(): Promise<void>;
}

export async function startCountingMcpServer(label: string): Promise<CountingMcpServer> {
  let toolsCallRequests = 0;
  let deploys = 0;
  const http: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body: unknown = text ? JSON.parse(text) : undefined;
    for (const m of Array.isArray(body) ? body : [body])
      if ((m as { method?: string } | undefined)?.method === 'tools/call') toolsCallRequests++;
    // Stateless Streamable HTTP: one server + transport per request.
    const mcp = new McpServer({ name: `git-${label}`, version: '1.0.0' });
    mcp.registerTool(
      'repo_deploy',
      { description: 'Deploy a ref to an environment', inputSchema: { env: z.string(), ref: z.string() } },
      async ({ env, ref }) => {
        deploys++;
        return { content: [{ type: 'text', text: `${label} deployed ${ref} to ${env}` }] };
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/prod`,
    get toolsCallRequests() {
      return toolsCallRequests;
    },
    get deploys() {
      return deploys;
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
