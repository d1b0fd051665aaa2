/**
 * A downstream MCP server on the official SDK v2 whose tools ask the user for input (issue 32 item
 * 5), written once in the 2026-07-28 style (`inputRequired(...)`, `ctx.mcpReq.inputResponses`): served
 * on 2026-07-28 it answers with `InputRequiredResult`s; served on 2025-11-25 the SDK's legacy shim
 * sends real `elicitation/create` requests on the connection and re-enters the tool.
 *
 * - `ask_note {topic}`: two form rounds (a name, then a confirmation), then the effect (counted);
 * - `open_link {url}`: one URL-mode round; answers with the action it received;
 * - `ask_model`: asks for sampling (the proxy never forwards it).
 *
 * In this process over Streamable HTTP, 2026-07-28 only (`startElicitHttpServer`), or as a child
 * over stdio on 2025-11-25 only (run with tsx: `mcp-elicit-server.ts '{"effectsLog":FILE}'`),
 * which appends a line to `effectsLog` per effect.
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { type CallToolResult, createMcpHandler, type InputRequiredResult, inputRequired, McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

/** What the fixture counts: tool entries (every round) and effects (a confirmed note). */
export interface ElicitState {
  rounds: number;
  effects: string[];
  /** The actions `open_link` received, in order. */
  links: string[];
}

type Answer = { action?: string; content?: Record<string, unknown> } | undefined;

function text(t: string): CallToolResult {
  return { content: [{ type: 'text', text: t }] };
}

export function elicitServer(state: ElicitState, onEffect: (note: string) => void = () => {}): McpServer {
  const server = new McpServer({ name: 'elicit-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'ask_note',
    { description: 'Save a note after asking who you are', inputSchema: z.object({ topic: z.string() }) },
    async ({ topic }, ctx): Promise<CallToolResult | InputRequiredResult> => {
      state.rounds++;
      const responses = (ctx.mcpReq.inputResponses ?? {}) as Record<string, Answer>;
      const previous = ctx.mcpReq.requestState<string>();
      const name = responses.name;
      if (previous === undefined || (previous === 'asked-name' && name?.action !== 'accept')) {
        if (previous === 'asked-name') return text(`no name given (${name?.action ?? 'none'})`);
        return inputRequired({
          inputRequests: {
            name: inputRequired.elicit({ message: 'Please approve: what is your name?', requestedSchema: z.object({ name: z.string() }) }),
          },
          requestState: 'asked-name',
        });
      }
      if (previous === 'asked-name') {
        const who = String(name?.content?.name);
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Save the note on ${topic} for ${who}?`,
              requestedSchema: z.object({ ok: z.boolean() }),
            }),
          },
          requestState: `confirm:${who}`,
        });
      }
      const confirm = responses.confirm;
      if (!previous.startsWith('confirm:') || confirm?.action !== 'accept' || confirm.content?.ok !== true) return text('not saved');
      const note = `${topic} for ${previous.slice('confirm:'.length)}`;
      state.effects.push(note);
      onEffect(note);
      return text(`saved: ${note}`);
    },
  );
  server.registerTool(
    'open_link',
    { description: 'Send the user to a page', inputSchema: z.object({ url: z.string() }) },
    async ({ url }, ctx): Promise<CallToolResult | InputRequiredResult> => {
      state.rounds++;
      const link = ((ctx.mcpReq.inputResponses ?? {}) as Record<string, Answer>).link;
      if (ctx.mcpReq.requestState<string>() !== 'sent') {
        return inputRequired({
          inputRequests: { link: inputRequired.elicitUrl({ message: 'Open this page to sign in', url }) },
          requestState: 'sent',
        });
      }
      state.links.push(link?.action ?? 'none');
      return text(`link: ${link?.action ?? 'none'}`);
    },
  );
  server.registerTool('ask_model', { description: 'Asks for sampling', inputSchema: z.object({}) }, async (_args, ctx) => {
    state.rounds++;
    if (ctx.mcpReq.inputResponses?.model) return text('sampled');
    return inputRequired({
      inputRequests: {
        model: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }),
      },
    });
  });
  return server;
}

/** The fixture over Streamable HTTP on 127.0.0.1, 2026-07-28 only. */
export async function startElicitHttpServer() {
  const state: ElicitState = { rounds: 0, effects: [], links: [] };
  const handler = createMcpHandler(() => elicitServer(state), { legacy: 'reject' });
  const http = createServer(getRequestListener((request) => handler.fetch(request)));
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  return {
    state,
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async close() {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((ok) => http.close(() => ok()));
    },
  };
}

/** The child: 2025-11-25 only over stdio (a hand-built connection: no 2026-07-28 serving entry). */
function main(config: { effectsLog: string }): void {
  const state: ElicitState = { rounds: 0, effects: [], links: [] };
  const server = elicitServer(state, (note) => appendFileSync(config.effectsLog, `${note}\n`));
  void server.connect(new StdioServerTransport());
}

if (process.argv[2]) main(JSON.parse(process.argv[2]));
