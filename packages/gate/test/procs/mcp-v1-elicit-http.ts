/**
 * A 2025-11-25 downstream over Streamable HTTP with sessions, on the official SDK v1 (as
 * server-everything is): its tool `ask_topic {topic}` sends `elicitation/create` on the call's own
 * response stream (the SDK relates it to the request) and answers with what it got. Several calls
 * on the one session the proxy holds are in flight together: each elicitation must reach the agent
 * of its own call (downstream-link.ts routes by the response stream's async context).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitResultSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

function askServer(): McpServer {
  const server = new McpServer({ name: 'v1-elicit-fixture', version: '1.0.0' });
  server.registerTool(
    'ask_topic',
    { description: 'Asks for a name for the topic', inputSchema: { topic: z.string() } },
    async ({ topic }, extra) => {
      const answer = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            message: `Who writes about ${topic}?`,
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          },
        },
        ElicitResultSchema,
      );
      return { content: [{ type: 'text', text: `${topic}: ${answer.action} ${String(answer.content?.name ?? '')}` }] };
    },
  );
  return server;
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

/** The server on 127.0.0.1, one SDK v1 session transport per `initialize`. */
export async function startV1ElicitHttpServer() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    const parsed = req.method === 'POST' ? await body(req) : undefined;
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport && req.method === 'POST' && isInitializeRequest(parsed)) {
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (s) => void sessions.set(s, t),
      });
      await askServer().connect(t);
      transport = t;
    }
    if (!transport) {
      res.writeHead(400).end();
      return;
    }
    await transport.handleRequest(req, res, parsed);
  });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async close() {
      for (const t of sessions.values()) await t.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((ok) => http.close(() => ok()));
    },
  };
}
