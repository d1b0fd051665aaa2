/**
 * A downstream MCP server on the official SDK v2 for the proxy's revision tests, on one revision
 * or both, whose tool list the test can grow (a `notifications/tools/list_changed` on 2025-11-25,
 * an event on the `subscriptions/listen` streams on 2026-07-28):
 *
 * - `modern`: 2026-07-28 only (`createMcpHandler`/`serveStdio` with `legacy: 'reject'`);
 * - `dual`: both (`createMcpHandler` stateless 2025 leg, `serveStdio` pinning either era);
 * - `legacy`: 2025-11-25 only (stdio: a hand-built `Server` on the stdio transport);
 * - `exits-on-probe`: `legacy`, but it exits on any first message other than `initialize`, as
 *   servers on some SDKs do.
 *
 * In this process (`startV2HttpServer`) over Streamable HTTP, or as a child over stdio (run with
 * tsx: `mcp-v2-server.ts '{"era":"modern","spawnLog":FILE}'`), which appends a line to `spawnLog`
 * each time it starts: the test counts how often the proxy started it.
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { type CacheHint, createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

export type FixtureEra = 'modern' | 'dual' | 'legacy' | 'exits-on-probe';

/** What the fixture shows and counts; `grown` adds `read_extra` to the list. */
export interface FixtureState {
  grown: boolean;
  calls: number;
}

function addExtra(server: McpServer): void {
  server.registerTool('read_extra', { description: 'A tool added later', inputSchema: z.object({}) }, async () => ({
    content: [{ type: 'text', text: 'extra' }],
  }));
}

/** One `McpServer` with the fixture's tools; `read_grow` grows the list and `onGrow` announces it. */
function fixtureServer(state: FixtureState, cacheHint: CacheHint | undefined, onGrow: (server: McpServer) => void): McpServer {
  const server = new McpServer(
    { name: 'v2-fixture', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } }, ...(cacheHint ? { cacheHints: { 'tools/list': cacheHint } } : {}) },
  );
  server.registerTool('read_echo', { description: 'Echo a text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => {
    state.calls++;
    return { content: [{ type: 'text', text: `echo: ${text}` }] };
  });
  server.registerTool('read_grow', { description: 'Add read_extra to the tool list', inputSchema: z.object({}) }, async () => {
    if (!state.grown) addExtra(server);
    state.grown = true;
    onGrow(server);
    return { content: [{ type: 'text', text: 'grown' }] };
  });
  // An instance serving a whole connection (stdio) grows itself; one per HTTP request is made grown.
  if (state.grown) addExtra(server);
  return server;
}

/** The fixture over Streamable HTTP on 127.0.0.1 (`modern` or `dual`); `grow()` changes its list as `read_grow` does. */
export async function startV2HttpServer(era: 'modern' | 'dual', cacheHint?: CacheHint) {
  const state: FixtureState = { grown: false, calls: 0 };
  /** The JSON-RPC method of every POST, in order. */
  const methods: string[] = [];
  const handler = createMcpHandler(() => fixtureServer(state, cacheHint, () => handler.notify.toolsChanged()), {
    legacy: era === 'modern' ? 'reject' : 'stateless',
  });
  const http = createServer(
    getRequestListener(async (request) => {
      if (request.method === 'POST') {
        const body = (await request
          .clone()
          .json()
          .catch(() => undefined)) as { method?: unknown } | undefined;
        if (typeof body?.method === 'string') methods.push(body.method);
      }
      return handler.fetch(request);
    }),
  );
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  return {
    state,
    methods,
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    grow() {
      state.grown = true;
      handler.notify.toolsChanged();
    },
    async close() {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((ok) => http.close(() => ok()));
    },
  };
}

/** The child process: serve the fixture over stdio on the era asked for. */
function main(config: { era: FixtureEra; spawnLog?: string; ttlMs?: number }): void {
  if (config.spawnLog) appendFileSync(config.spawnLog, `${process.pid}\n`);
  const state: FixtureState = { grown: false, calls: 0 };
  const hint: CacheHint | undefined = config.ttlMs === undefined ? undefined : { ttlMs: config.ttlMs, cacheScope: 'private' };
  const announce = (server: McpServer) => void server.sendToolListChanged();
  if (config.era === 'exits-on-probe') {
    // The first line decides; the rest goes to the transport through a pipe of its own.
    const input = new PassThrough();
    let first = true;
    process.stdin.on('data', (chunk: Buffer) => {
      if (first && !chunk.toString('utf8').includes('"method":"initialize"')) process.exit(0);
      first = false;
      input.write(chunk);
    });
    void fixtureServer(state, hint, announce).connect(new StdioServerTransport(input, process.stdout));
    return;
  }
  if (config.era === 'legacy') {
    // A hand-built server on the stdio transport speaks 2025-11-25 only.
    void fixtureServer(state, hint, announce).connect(new StdioServerTransport());
    return;
  }
  serveStdio(() => fixtureServer(state, hint, announce), { legacy: config.era === 'modern' ? 'reject' : 'serve' });
}

if (process.argv[2]) main(JSON.parse(process.argv[2]));
