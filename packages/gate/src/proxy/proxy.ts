/**
 * The gateway: an MCP server to the agent and an MCP client to one downstream server, with
 * the gate in between (Tool-Use Binding draft, MCP mapping: "tools/list remains discovery";
 * tools/call is a candidate act that runs only with consumed authority). `GateProxy` wires its
 * parts, one file each:
 *
 * - `downstream-link.ts` — the downstream's lifecycle (requests, notifications, respawn);
 * - `pinned-view.ts` — `tools/list`: only tools whose current definition digest a person pinned
 *   for this server identity are listed; every definition seen is recorded for review;
 * - `call-pipeline.ts` — `tools/call`: pin check → candidate act → the gate's dispatch → the
 *   downstream call with exactly the digested arguments; a deny never reaches the downstream;
 * - `observe.ts` — observe mode (forward everything, record what enforce would refuse);
 * - `approval-wait.ts` — an escalated call's wait for a person.
 *
 * Resources, prompts, completion, logging and progress pass through unchanged; any other method is
 * refused (fail closed: a method the proxy does not know might cause an effect).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
  type Notification,
  type Request,
  type ServerCapabilities,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { systemClock } from '@vrpkit/core';
import { CallPipeline } from './call-pipeline.js';
import { DownstreamLink, type RequestExtra } from './downstream-link.js';
import { observeModeGate } from './observe.js';
import type { GateProxyOptions, ProxyContext } from './options.js';
import { PinnedView } from './pinned-view.js';

export { MAX_RESPAWNS, RESPAWN_WINDOW_MS } from './downstream-link.js';
export { type ProxyFaultPoint, sigkillSelf } from './fault.js';
export { OBSERVE_EPOCHS_CACHE_MS } from './observe.js';
export type { GateProxyOptions } from './options.js';

/** Requests passed to the downstream unchanged: discovery and reads, none of which is a tool effect. */
const PASS_THROUGH = new Set([
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
]);

export class GateProxy {
  private readonly link: DownstreamLink;
  private readonly view: PinnedView;
  private readonly calls: CallPipeline;
  /** Aborted when the proxy stops: calls waiting for a person stop waiting. */
  private readonly stopped = new AbortController();
  private readonly agents = new Set<Server>();
  /** The proxy's name (its agent-facing server name). */
  private readonly name: string;
  /** The approvals page, linked from the `--notify-url` notice (never with its token). */
  approvalsUrl: string | undefined;

  constructor(o: GateProxyOptions) {
    this.name = o.name;
    const c: ProxyContext = { ...o, clock: o.clock ?? systemClock, stopped: this.stopped.signal, approvalsUrl: () => this.approvalsUrl };
    this.link = new DownstreamLink(o.downstream, {
      serverId: o.serverId,
      log: o.log,
      clock: c.clock,
      ...(o.reconnect ? { reconnect: o.reconnect } : {}),
      ...(o.callTimeoutMs !== undefined ? { callTimeoutMs: o.callTimeoutMs } : {}),
      onNotification: (n) => this.relay(n),
      // The new process may show other definitions: the next call or list digests them afresh.
      onRespawned: () => this.view.invalidate(),
    });
    this.view = new PinnedView(this.link, c);
    this.calls = new CallPipeline(c, this.link, this.view, o.mode === 'observe' ? observeModeGate(o.gate) : o.gate);
  }

  /** Downstream notifications (list changes, resource updates, log messages) go to every agent unchanged. */
  private async relay(n: Notification): Promise<void> {
    if (n.method === 'notifications/tools/list_changed') this.view.invalidate();
    for (const agent of this.agents) await agent.notification(n as ServerNotification).catch(() => {});
  }

  /** An SDK `Server` for one agent connection (stdio has one; Streamable HTTP has one per session). */
  createAgentServer(): Server {
    const d = this.link.client.getServerCapabilities() ?? {};
    // Mirror the downstream, minus `tasks` (task-based calls would bypass the gated tools/call) and `experimental`.
    const capabilities: ServerCapabilities = { tools: d.tools?.listChanged ? { listChanged: true } : {} };
    if (d.resources) capabilities.resources = d.resources;
    if (d.prompts) capabilities.prompts = d.prompts;
    if (d.completions) capabilities.completions = d.completions;
    if (d.logging) capabilities.logging = d.logging;
    // The downstream's `instructions` are model-visible text no pin covers, so they are not forwarded.
    const server = new Server({ name: `vrp-gate-proxy/${this.name}`, version: '0.1.0' }, { capabilities });
    server.setRequestHandler(ListToolsRequestSchema, async (): Promise<ListToolsResult> => ({ tools: await this.listTools() }));
    server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
      this.callTool(req.params, extra as RequestExtra, server.getClientVersion()?.name),
    );
    server.fallbackRequestHandler = (req, extra) => this.forward(req, extra as RequestExtra);
    // Agent notifications (roots changes …) have no downstream meaning: the proxy's client declared no capabilities.
    server.fallbackNotificationHandler = async () => {};
    this.agents.add(server);
    server.onclose = () => this.agents.delete(server);
    return server;
  }

  /** The downstream's tools whose current definition is pinned (observe mode: all of them). */
  async listTools(): Promise<ListToolsResult['tools']> {
    return (await this.view.listTools()) as ListToolsResult['tools'];
  }

  /** One `tools/call` (call-pipeline.ts). */
  callTool(params: CallToolRequest['params'], extra: RequestExtra, agentName: string | undefined): Promise<CallToolResult> {
    return this.calls.callTool(params, extra, agentName);
  }

  /** A pass-through request, with the agent's progress token and cancellation carried over. */
  async forward(request: Request, extra: RequestExtra) {
    if (!PASS_THROUGH.has(request.method)) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    return this.link.forward(request, extra);
  }

  async close(): Promise<void> {
    this.stopped.abort();
    for (const agent of [...this.agents]) await agent.close().catch(() => {});
    await this.link.close();
  }
}
