/**
 * Every entry point that reads a Core VRP v0.1 §4 offer request, as a function from the request
 * to its decision (`'ok'` or the refusal code), against one real node over https (dev CA,
 * connect-to): the HTTP offer endpoint and `/book`, MCP through the official SDK client, A2A
 * (a raw JSON-RPC `SendMessage`, so the data part's JSON text reaches the node as written), the
 * WebMCP tool-call path (the JSON the page script sends) and, when Chromium is installed,
 * Chromium invoking the page's registered tool; the agent's request check and the CLI's stay
 * options. Used by the table test and the fuzz test in this folder.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CHROMIUM_BASE_ARGS, checkOfferRequest, chromiumNetworkArgs, createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { isVrpError } from '@vrpkit/core';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { BOUND_TOOL_NAME, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH, WEBMCP_TOOL_CALL_PATH } from '@vrpkit/protocol';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { type Browser, type CDPSession, chromium } from 'playwright-core';

/** A decision: the request was accepted (a signed offer came back) or refused with this code. */
export type Decision = 'ok' | string;

/** The CLI accepted the stay options and the node refused the request (today and the horizon are the node's to judge). */
export const NODE_REFUSED = 'accepted, refused by the node';

export const CHROMIUM = process.env.VRPKIT_CHROMIUM ?? '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);

export interface RequestSurfaces {
  domain: string;
  /** The node's clock; its `today` in Europe/Stockholm is `today`. */
  now: number;
  today: string;
  horizonDays: number;
  node: ServedNode;
  /** Internal failures the node reported while serving (must stay empty). */
  internalErrors: unknown[];
  http(query: string): Promise<Decision>;
  book(query: string): Promise<Decision>;
  mcp(argumentsJson: string): Promise<Decision>;
  a2a(argumentsJson: string): Promise<Decision>;
  webmcpPost(argumentsJson: string): Promise<Decision>;
  /** What each surface advertises for the tool's input: MCP `tools/list`, the page's embedded definition, the tool Chromium registered, the A2A skill's examples. */
  advertised(): Promise<{ mcp: unknown; webmcpPage: unknown; webmcpRegistered: unknown; a2aExamples: string[] }>;
  /** Chromium invoking the page's registered tool; null when Chromium is not installed. */
  webmcpBrowser: ((argumentsJson: string) => Promise<Decision>) | null;
  agent(argumentsJson: string): Decision;
  cli(options: { checkIn?: string; checkOut?: string; guests?: string }): Promise<Decision>;
  close(): Promise<void>;
}

const codeOf = (text: string): string => /^(?:Error: )?error\[([a-z_]+)\]/.exec(text)?.[1] ?? `unparsed: ${text.slice(0, 80)}`;

/** Throw on a server error: no input may make the node fail. */
function no5xx(status: number, what: string): void {
  if (status >= 500) throw new Error(`${what} answered HTTP ${status}`);
}

export async function startRequestSurfaces(domain: string, nowIso: string): Promise<RequestSurfaces> {
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-request-surfaces-'));
  const now = Date.parse(nowIso);
  const internalErrors: unknown[] = [];
  await initNode({ domain, dataDir: join(dir, 'node'), clock: { now: () => now } });
  const node = await serveNode({
    dataDir: join(dir, 'node'),
    dev: true,
    port: 0,
    clock: { now: () => now },
    onError: (e) => internalErrors.push(e),
  });
  const origin = `https://${domain}`;
  const connectTo = `${domain}:443:127.0.0.1:${node.port}`;
  const fetch: HardenedFetch = createHardenedFetch({ connectTo: [connectTo], ca: node.caPem as string });
  const mcpClient = new Client({ name: 'vrpkit-request-table', version: '0.1.0' });
  await mcpClient.connect(new StreamableHTTPClientTransport(new URL(`${origin}${MCP_ENDPOINT_PATH}`), { fetch }));

  let browser: Browser | null = null;
  let registeredSchema: unknown = null;
  let invoke: RequestSurfaces['webmcpBrowser'] = null;
  if (HAS_CHROMIUM) {
    const page = new URL(`${origin}/`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        ...CHROMIUM_BASE_ARGS,
        ...(await chromiumNetworkArgs(page, { fetch, options: { network: { connectTo: [connectTo], ca: node.caPem as string } } })),
      ],
    });
    const context = await browser.newContext();
    const tab = await context.newPage();
    const cdp: CDPSession = await context.newCDPSession(tab);
    let frameId = '';
    const registered = new Promise<void>((resolve) =>
      cdp.on('WebMCP.toolsAdded', (event: { tools: { name: string; frameId: string; inputSchema?: unknown }[] }) => {
        const tool = event.tools.find((t) => t.name === BOUND_TOOL_NAME);
        if (tool) {
          frameId = tool.frameId;
          registeredSchema = tool.inputSchema ?? null;
          resolve();
        }
      }),
    );
    const responses = new Map<
      string,
      (r: { status: string; output?: unknown; errorText?: string; exception?: { description?: string } }) => void
    >();
    cdp.on('WebMCP.toolResponded', (event: { invocationId: string; status: string }) => responses.get(event.invocationId)?.(event));
    await cdp.send('WebMCP.enable' as never);
    await tab.goto(page.href, { waitUntil: 'load' });
    await registered;
    invoke = async (argumentsJson) => {
      const { invocationId } = (await cdp.send(
        'WebMCP.invokeTool' as never,
        {
          frameId,
          toolName: BOUND_TOOL_NAME,
          input: JSON.parse(argumentsJson),
        } as never,
      )) as { invocationId: string };
      const answer = await new Promise<{ status: string; output?: unknown; errorText?: string; exception?: { description?: string } }>(
        (resolve) => responses.set(invocationId, resolve),
      );
      responses.delete(invocationId);
      if (answer.status === 'Completed') {
        return (answer.output as { kind?: unknown } | undefined)?.kind === 'signed_verified_stay_offer' ? 'ok' : 'no envelope';
      }
      return codeOf(answer.exception?.description ?? answer.errorText ?? answer.status);
    };
  }

  async function jsonAnswer(res: Response, what: string): Promise<Decision> {
    no5xx(res.status, what);
    const body = (await res.json()) as { kind?: string; error?: { code: string } };
    if (res.status === 200) return body.kind === 'signed_verified_stay_offer' ? 'ok' : 'no envelope';
    return body.error?.code ?? `HTTP ${res.status}`;
  }

  let messages = 0;
  return {
    domain,
    now,
    today: new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Stockholm' }).format(now),
    horizonDays: 365,
    node,
    internalErrors,
    async advertised() {
      const listed = await mcpClient.listTools();
      const html = await (await fetch(`${origin}/`)).text();
      const page = JSON.parse(/<script type="application\/json" id="vrp-tool">(.*?)<\/script>/s.exec(html)?.[1] ?? 'null') as {
        inputSchema: unknown;
      };
      const card = (await (await fetch(`${origin}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json()) as {
        skills: { id: string; examples: string[] }[];
      };
      return {
        mcp: listed.tools.find((t) => t.name === BOUND_TOOL_NAME)?.inputSchema,
        webmcpPage: page.inputSchema,
        webmcpRegistered: typeof registeredSchema === 'string' ? JSON.parse(registeredSchema) : registeredSchema,
        a2aExamples: card.skills.find((k) => k.id === BOUND_TOOL_NAME)?.examples ?? [],
      };
    },
    http: async (query) => jsonAnswer(await fetch(`${origin}${OFFER_ENDPOINT_PATH}?${query}`), 'the offer endpoint'),
    async book(query) {
      const res = await fetch(`${origin}/book?${query}`);
      no5xx(res.status, '/book');
      const html = await res.text();
      if (res.status === 200) return html.includes('id="vrp-offer"') ? 'ok' : 'no offer';
      return /This booking link is not valid \(([a-z_]+)\)/.exec(html)?.[1] ?? `HTTP ${res.status}`;
    },
    async mcp(argumentsJson) {
      const result = (await mcpClient.callTool({ name: BOUND_TOOL_NAME, arguments: JSON.parse(argumentsJson) })) as {
        isError?: boolean;
        content: { type: string; text: string }[];
        structuredContent?: { kind?: string };
      };
      if (result.isError) return codeOf(result.content[0]?.text ?? '');
      return result.structuredContent?.kind === 'signed_verified_stay_offer' ? 'ok' : 'no envelope';
    },
    async a2a(argumentsJson) {
      // The JSON text of the arguments is spliced in verbatim: `1.0`, `-0` and `"__proto__"` reach the node as written.
      const body = `{"jsonrpc":"2.0","id":${++messages},"method":"SendMessage","params":{"message":{"messageId":"m-${messages}","role":"ROLE_USER","parts":[{"data":${argumentsJson},"mediaType":"application/json"}]}}}`;
      const res = await fetch(`${origin}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body,
      });
      no5xx(res.status, 'A2A');
      const answer = (await res.json()) as {
        result?: { message?: { parts: { data?: { kind?: string } }[] }; task?: { metadata?: { error_code?: string } } };
        error?: { code: number; message: string };
      };
      if (answer.result?.message) return answer.result.message.parts[0]?.data?.kind === 'signed_verified_stay_offer' ? 'ok' : 'no envelope';
      return answer.result?.task?.metadata?.error_code ?? `json-rpc ${answer.error?.code}: ${answer.error?.message}`;
    },
    webmcpPost: async (argumentsJson) =>
      jsonAnswer(
        await fetch(`${origin}${WEBMCP_TOOL_CALL_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: argumentsJson,
        }),
        'the WebMCP tool-call path',
      ),
    webmcpBrowser: invoke,
    agent(argumentsJson) {
      try {
        checkOfferRequest(JSON.parse(argumentsJson));
        return 'ok';
      } catch (e) {
        return isVrpError(e) ? e.code : `threw ${String(e)}`;
      }
    },
    async cli(o) {
      const stay = [
        ...(o.checkIn === undefined ? [] : ['--check-in', o.checkIn]),
        ...(o.checkOut === undefined ? [] : ['--check-out', o.checkOut]),
        ...(o.guests === undefined ? [] : ['--guests', o.guests]),
      ];
      const r = await runVrpInProcess([
        'verify',
        origin,
        ...stay,
        '--json',
        '--connect-to',
        connectTo,
        '--cacert',
        node.caFile as string,
        '--now',
        new Date(now + 30_000).toISOString(),
      ]);
      const out = JSON.parse(r.stdout) as { error?: { code: string }; status?: string };
      if (r.code === 64) return out.error?.code ?? `usage: ${r.stderr.slice(0, 80)}`;
      // Past the CLI's own check: 'ok' when the node's offer verified, else the request reached a node that refused it.
      return out.status === 'verified' ? 'ok' : NODE_REFUSED;
    },
    async close() {
      await browser?.close();
      await mcpClient.close();
      await fetch.close();
      await node.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
