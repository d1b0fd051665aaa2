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
import {
  type CacheHint,
  type CallToolRequest,
  type CallToolResult,
  CLIENT_INFO_META_KEY,
  type InputRequiredResult,
  type ListToolsResult,
  type Notification,
  ProtocolError,
  ProtocolErrorCode,
  type Request,
  Server,
  type ServerCapabilities,
  type ServerContext,
  type ServerNotification,
} from '@modelcontextprotocol/server';
import { systemClock } from '@vrpkit/core';
import type { ConsequenceClass } from '../act.js';
import type { Principal } from '../auth/resource-server.js';
import type { Gate } from '../gate.js';
import { type AgentApproval, agentApproval, legacyApproval, modernApproval } from './approval-channel.js';
import { CallPipeline } from './call-pipeline.js';
import { type Downstream, DownstreamLink, type RequestExtra } from './downstream-link.js';
import { authorizationRequiredError, DownstreamAuthorizationRequired, DownstreamOAuth, PrincipalLinks } from './downstream-oauth.js';
import type { ProxyLog } from './log.js';
import { observeModeGate } from './observe.js';
import type { GateProxyOptions, ProxyContext } from './options.js';
import { PinnedView } from './pinned-view.js';
import type { AgentEra, PlainLegacyCall, PlainModernCall, StdioReplays } from './plain-call.js';
import { relayedError } from './results.js';

export { MAX_RESPAWNS, RESPAWN_WINDOW_MS } from './downstream-link.js';
export { type ProxyFaultPoint, sigkillSelf } from './fault.js';
export { OBSERVE_EPOCHS_CACHE_MS } from './observe.js';
export type { GateProxyOptions } from './options.js';
export type { AgentEra } from './plain-call.js';

/**
 * `ttlMs`/`cacheScope` on the proxy's 2026-07-28 `tools/list` (SEP-2549 `CacheableResult`;
 * specification/2026-07-28 server/tools), chosen on purpose: the list is the downstream's tools
 * minus every one whose current definition no person pinned, so it changes the moment a person pins
 * or unpins (from any process) or the downstream changes a definition — immediately stale (`0`), a
 * client lists again rather than call from a list the gate may no longer honour. It is this
 * gateway's view, built with the credentials it holds for the downstream: `private`, never
 * served by a shared cache to another user.
 */
export const PROXY_LIST_CACHE_HINT: CacheHint = { ttlMs: 0, cacheScope: 'private' };

/** Notifications a 2026-07-28 agent receives (on its `subscriptions/listen`); the rest have no 2026 channel outside a request. */
const CHANGE_NOTIFICATIONS = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
]);

/** The parts of an agent's request the proxy uses, read where SDK v2 puts them on both revisions (`ctx.mcpReq`). */
function requestExtra(ctx: ServerContext): RequestExtra {
  const principal = principalOf(ctx);
  return {
    signal: ctx.mcpReq.signal,
    _meta: ctx.mcpReq._meta,
    sendNotification: (n) => ctx.mcpReq.notify(n),
    ...(principal ? { principal } : {}),
    ...(principal && ctx.http?.authInfo?.token ? { token: ctx.http.authInfo.token } : {}),
  };
}

/** The principal the listener's resource server put in the request's `AuthInfo` (auth/http.ts), if any. */
function principalOf(ctx: ServerContext): Principal | undefined {
  return ctx.http?.authInfo?.extra?.principal as Principal | undefined;
}

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
  private readonly link: Downstream;
  private readonly view: PinnedView;
  private readonly calls: CallPipeline;
  /** Aborted when the proxy stops: calls waiting for a person stop waiting. */
  private readonly stopped = new AbortController();
  /** Agent connections that receive the downstream's notifications unasked, with their era. */
  private readonly agents = new Map<Server, AgentEra>();
  /** Further receivers of change notifications (the HTTP listener's 2026-07-28 `subscriptions/listen` streams). */
  private readonly changeListeners = new Set<(n: Notification) => void>();
  /** The agent-facing server's identity (its `serverInfo`; stamped on every 2026-07-28 result): made once, not per answer. */
  readonly serverInfo: Readonly<{ name: string; version: string }>;
  private readonly log: ProxyLog;
  private readonly serverId: string;
  /** Team mode: who is shown which tools (options.ts `principals`). */
  private readonly principals: GateProxyOptions['principals'];
  /** The gate of a call without a policy member. */
  private readonly defaultGate: Gate;
  /** The approvals page, linked from the `--notify-url` notice (never with its token). */
  approvalsUrl: string | undefined;

  constructor(o: GateProxyOptions) {
    this.serverInfo = Object.freeze({ name: `vrp-gate-proxy/${o.name}`, version: '0.1.0' });
    this.log = o.log;
    this.serverId = o.serverId;
    this.principals = o.principals;
    this.defaultGate = o.gate;
    const c: ProxyContext = { ...o, clock: o.clock ?? systemClock, stopped: this.stopped.signal, approvalsUrl: () => this.approvalsUrl };
    const linkOptions = {
      serverId: o.serverId,
      log: o.log,
      clock: c.clock,
      ...(o.callTimeoutMs !== undefined ? { callTimeoutMs: o.callTimeoutMs } : {}),
      onNotification: (n: Notification) => this.relay(n),
      // The new process may show other definitions: the next call or list digests them afresh.
      onRespawned: () => this.view.invalidate(),
    };
    this.link =
      o.downstream instanceof DownstreamOAuth
        ? new PrincipalLinks(o.downstream, linkOptions)
        : new DownstreamLink(o.downstream, { ...linkOptions, ...(o.reconnect ? { reconnect: o.reconnect } : {}) });
    this.view = new PinnedView(this.link, c);
    const asMapped = (gate: Gate) => (o.mode === 'observe' ? observeModeGate(gate) : gate);
    this.calls = new CallPipeline(c, this.link, this.view, asMapped(o.gate), asMapped);
  }

  /**
   * Downstream notifications go to every agent unchanged: list changes, resource updates and log
   * messages to a 2025-11-25 connection; to a 2026-07-28 one only the change notifications, which
   * reach it on its `subscriptions/listen` streams. A tool-list change re-reads the list and
   * re-compares the pins at once (issue 32 item 6), before the agents hear of it.
   */
  private async relay(n: Notification): Promise<void> {
    if (n.method === 'notifications/tools/list_changed') await this.relistNow();
    for (const [agent, era] of this.agents)
      if (era === 'legacy' || CHANGE_NOTIFICATIONS.has(n.method)) await agent.notification(n as ServerNotification).catch(() => {});
    if (CHANGE_NOTIFICATIONS.has(n.method)) for (const listener of this.changeListeners) listener(n);
  }

  /** The downstream's list changed: list it now (recording what it shows) rather than at the next call. */
  private async relistNow(): Promise<void> {
    this.view.invalidate();
    await this.view
      .current()
      .catch((e: unknown) =>
        this.log('tools_relist_failed', { server_id: this.serverId, message: e instanceof Error ? e.message : String(e) }),
      );
  }

  /** Receive the downstream's change notifications (for agents that are not `Server` connections); returns the unsubscribe. */
  onChange(listener: (n: Notification) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /**
   * An SDK `Server` for one agent connection of either era: stdio has one per connection, Streamable
   * HTTP one per 2025-11-25 session and one per 2026-07-28 request. Only a connection (`track`)
   * receives notifications unasked; a 2026 request's instance lives for that request.
   */
  createAgentServer(
    era: AgentEra = 'legacy',
    track = true,
    /** The outcome of a call already run on the direct path (direct-call.ts), for the SDK to answer in its own words. */
    replay?: () => Promise<CallToolResult | InputRequiredResult>,
    /** stdio: the outcomes of calls already run on the connection's direct path (stdio-call.ts), by request id. */
    replays?: StdioReplays,
  ): Server {
    // Downstream OAuth per user: before anyone connected, the downstream's capabilities are not known yet (tools only).
    const d = this.link.client?.getServerCapabilities() ?? {};
    // Mirror the downstream, minus `tasks` (task-based calls would bypass the gated tools/call) and `experimental`.
    const capabilities: ServerCapabilities = { tools: d.tools?.listChanged ? { listChanged: true } : {} };
    if (d.resources) capabilities.resources = d.resources;
    if (d.prompts) capabilities.prompts = d.prompts;
    if (d.completions) capabilities.completions = d.completions;
    if (d.logging) capabilities.logging = d.logging;
    // The downstream's `instructions` are model-visible text no pin covers, so they are not forwarded.
    const server = new Server(this.serverInfo, { capabilities, cacheHints: { 'tools/list': PROXY_LIST_CACHE_HINT } });
    server.setRequestHandler('tools/list', async (_req, ctx): Promise<ListToolsResult> => {
      replays?.served(server);
      return { tools: await this.listTools(principalOf(ctx), requestExtra(ctx)) };
    });
    server.setRequestHandler(
      'tools/call',
      replay ??
        ((req, ctx) => {
          replays?.served(server);
          const replayed = replays?.take(ctx.mcpReq.id);
          if (replayed) return replayed();
          return this.callTool(req.params, requestExtra(ctx), agentName(server, ctx), agentApproval(server, ctx, era));
        }),
    );
    server.fallbackRequestHandler = (req, ctx) => {
      replays?.served(server);
      return this.forward(req, requestExtra(ctx as ServerContext));
    };
    // Agent notifications (roots changes …) have no downstream meaning: the proxy's client declared no capabilities.
    server.fallbackNotificationHandler = async () => {};
    if (track) {
      this.agents.set(server, era);
      server.onclose = () => this.agents.delete(server);
    }
    return server;
  }

  /**
   * A plain 2026-07-28 `tools/call` on the direct path (direct-call.ts): the pipeline, with the
   * params, request extra, agent name and approval channel the agent `Server`'s handler would get.
   * The SDK lifts the envelope out of `_meta` before the handler sees the request, and a plain
   * call's `_meta` is the envelope alone: no `_meta` is left, no `requestState` or
   * `inputResponses` (a plain call carries none). Nothing sends a notification without a progress
   * token (downstream-link.ts, approval-wait.ts) and a plain call has none: there is nowhere for one to go.
   */
  callPlainModern(call: PlainModernCall, signal: AbortSignal): Promise<CallToolResult | InputRequiredResult> {
    const envelope = call.params._meta;
    const extra: RequestExtra = { signal, sendNotification: async () => {} };
    const approval = modernApproval(envelope, { requestState: undefined, inputResponses: undefined });
    const params = { name: call.params.name, arguments: call.params.arguments };
    return this.callTool(params, extra, envelopeClientName(envelope), approval);
  }

  /**
   * A plain 2025-11-25 `tools/call` on a stdio connection's direct path (stdio-call.ts): the
   * pipeline, with what the agent `Server`'s handler would get for it — no `_meta` (a plain call has
   * none), notifications on `server`'s connection, the agent's name from `initialize`, and the
   * connection's approval channel (no `requestState` or `inputResponses`: a plain call carries none).
   */
  callPlainLegacy(server: Server, call: PlainLegacyCall, signal: AbortSignal): Promise<CallToolResult | InputRequiredResult> {
    const extra: RequestExtra = {
      signal,
      _meta: undefined,
      sendNotification: (n) => server.notification(n as ServerNotification, { relatedRequestId: call.id }),
    };
    const approval = legacyApproval(server, { requestState: undefined, inputResponses: undefined }, signal);
    return this.callTool(call.params, extra, server.getClientVersion()?.name, approval);
  }

  /** The downstream's tools whose current definition is pinned (observe mode: all of them). */
  async listTools(principal?: Principal, extra?: RequestExtra): Promise<ListToolsResult['tools']> {
    let tools: ListToolsResult['tools'];
    try {
      tools = (await this.view.listTools(extra)) as ListToolsResult['tools'];
    } catch (e) {
      // Downstream OAuth: the listing needs the principal's own credential; the error carries the code and the link.
      if (e instanceof DownstreamAuthorizationRequired) throw authorizationRequiredError(e);
      throw e;
    }
    const principals = this.principals;
    return principal && principals ? tools.filter((t) => principals.allowsTool(principal, t.name)) : tools;
  }

  /** The consequence class a principal's policy member gives one of this downstream's tools (the listener's scopes per class). */
  classify(principal: Principal, toolName: string): ConsequenceClass {
    const tool = { tool_id: toolName, function_id: toolName, tool_protocol: 'MCP', tool_endpoint: this.serverId } as const;
    return this.principals ? this.principals.classify(principal, tool) : this.defaultGate.classify(tool);
  }

  /** One `tools/call` (call-pipeline.ts); `approval`: how an escalation can reach the agent's person (approval-channel.ts). */
  callTool(
    params: CallToolRequest['params'],
    extra: RequestExtra,
    agentName: string | undefined,
    approval?: AgentApproval,
  ): Promise<CallToolResult | InputRequiredResult> {
    return this.calls.callTool(params, extra, agentName, approval);
  }

  /** A pass-through request, with the agent's progress token and cancellation carried over. */
  async forward(request: Request, extra: RequestExtra) {
    if (!PASS_THROUGH.has(request.method)) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    try {
      return await this.link.forward(request, extra);
    } catch (e) {
      if (e instanceof DownstreamAuthorizationRequired) throw authorizationRequiredError(e);
      throw relayedError(e);
    }
  }

  /**
   * Connect the downstream now rather than at the first request (downstream OAuth in service mode:
   * the operator's authorization link is printed at start). Resolves false when it cannot be reached yet.
   */
  async warm(): Promise<boolean> {
    try {
      const up = await this.link.available();
      const info = this.link.client?.getServerVersion();
      if (up)
        this.log('downstream_connected', {
          server_id: this.serverId,
          server_info: info ? { name: info.name, version: info.version } : null,
        });
      return up;
    } catch (e) {
      if (!(e instanceof DownstreamAuthorizationRequired))
        this.log('downstream_connect_failed', { server_id: this.serverId, message: e instanceof Error ? e.message : String(e) }, 'warn');
      return false;
    }
  }

  async close(): Promise<void> {
    this.stopped.abort();
    for (const agent of [...this.agents.keys()]) await agent.close().catch(() => {});
    await this.link.close();
  }
}

/** The agent's self-declared name for the act: from `initialize` (2025-11-25) or the request's envelope (2026-07-28). */
function agentName(server: Server, ctx: ServerContext): string | undefined {
  return server.getClientVersion()?.name ?? envelopeClientName(ctx.mcpReq.envelope ?? {});
}

/** The client's name in a 2026-07-28 request's envelope (`io.modelcontextprotocol/clientInfo`). */
function envelopeClientName(envelope: Record<string, unknown>): string | undefined {
  const declared = envelope[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined;
  return typeof declared?.name === 'string' ? declared.name : undefined;
}
