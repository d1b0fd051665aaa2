/**
 * The proxy's downstream lifecycle: the MCP client to the one downstream server, its requests
 * (with the agent's cancellation, progress and the per-call timeout), its notifications to every
 * agent, and a respawn when it exited (a stdio child that crashed), bounded so a server that
 * crashes at start-up is not restarted in a loop.
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type CallToolRequest,
  type CallToolResult,
  type Client,
  type ElicitRequestParams,
  type ElicitResult,
  type InputRequiredResult,
  type Notification,
  ProtocolError,
  ProtocolErrorCode,
  type Request,
  type RequestOptions,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/client';
import type { Clock } from '@vrpkit/core';
import { z } from 'zod';
import type { Principal } from '../auth/resource-server.js';
import { DownstreamClient } from './downstream.js';
import type { ProxyLog } from './log.js';
import type { PinnedToolDefinition } from './pins.js';

/** A pass-through result: any JSON object, handed to the agent as the downstream wrote it. */
const PassThroughResult = z.looseObject({});

/** A crash loop is not retried forever: at most this many respawns in the window. */
export const MAX_RESPAWNS = 5;
export const RESPAWN_WINDOW_MS = 60_000;

/**
 * What the proxy's request handlers take from an agent's request (the SDK v2 `ctx.mcpReq`, the
 * parts used): its cancellation, its `_meta` as the SDK hands it on either revision (the reserved
 * 2026-07-28 envelope keys lifted out), and the channel for notifications related to it.
 */
export type RequestExtra = {
  signal: AbortSignal;
  /** Where a 2025-11-25 downstream's `elicitation/create` sent during this request goes (downstream-input.ts). */
  elicitation?: ElicitationRoute;
  /** Who is calling, when the listener authenticated the request (team mode). */
  principal?: Principal;
  /** The access token they presented (team mode): kept in memory for token exchange (proxy/downstream-oauth.ts), never logged. */
  token?: string;
  _meta?: { progressToken?: string | number } & Record<string, unknown>;
  sendNotification: (n: ServerNotification) => Promise<void>;
  /**
   * The pinned definition of the tool a `tools/call` names: on 2026-07-28 the SDK mirrors its
   * `x-mcp-header` arguments as `Mcp-Param-*` headers (SEP-2243) from exactly this definition.
   */
  tool?: PinnedToolDefinition;
};

/** Per pinned definition (the view keeps one object until it re-lists): whether it declares header arguments. */
const headerDeclarations = new WeakMap<PinnedToolDefinition, boolean>();

/**
 * Whether a tool's input schema declares an argument as a header (SEP-2243 `x-mcp-header`): the
 * SDK's `callTool` then mirrors it. Read once per definition, not on every call.
 */
function declaresHeaders(tool: PinnedToolDefinition | undefined): boolean {
  if (tool === undefined) return false;
  let declares = headerDeclarations.get(tool);
  if (declares === undefined) {
    declares = JSON.stringify(tool.inputSchema ?? {}).includes('"x-mcp-header"');
    headerDeclarations.set(tool, declares);
  }
  return declares;
}

/** The agent-side call a downstream's `elicitation/create` belongs to (downstream-input.ts `elicitationRoute`). */
export interface ElicitationRoute {
  elicit(params: ElicitRequestParams): Promise<ElicitResult>;
}

export interface DownstreamLinkOptions {
  serverId: string;
  log: ProxyLog;
  clock: Clock;
  /** Start the downstream again after it exited; without it, the link stays closed. */
  reconnect?: () => Promise<Client>;
  /** Per-request bound on a downstream call; default the SDK's 60 s. */
  callTimeoutMs?: number;
  /** Every downstream notification (list changes, resource updates, log messages), in order. */
  onNotification(n: Notification): Promise<void>;
  /** A new downstream process replaced the old one: it may show other definitions. */
  onRespawned(): void;
}

/**
 * The downstream as the proxy's parts use it: one `DownstreamLink`, or (downstream OAuth,
 * proxy/downstream-oauth.ts) one per credential, chosen by the request's principal — so the
 * request is passed where there is one (`extra`), and there may be no connected client yet.
 */
export interface Downstream {
  readonly client: Client | undefined;
  available(extra?: RequestExtra): Promise<boolean>;
  listAllTools(extra?: RequestExtra): ReturnType<DownstreamLink['listAllTools']>;
  callTool(params: Parameters<DownstreamLink['callTool']>[0], extra: RequestExtra): ReturnType<DownstreamLink['callTool']>;
  forward(request: Request, extra: RequestExtra): ReturnType<DownstreamLink['forward']>;
  close(): Promise<void>;
}

export class DownstreamLink implements Downstream {
  private current: Client;
  private open = true;
  private respawning: Promise<boolean> | undefined;
  private respawns: number[] = [];
  private stopping = false;
  /** The route of the `tools/call` whose downstream request is running in this async context. */
  private readonly routes = new AsyncLocalStorage<ElicitationRoute>();
  /** Every downstream request in flight, with the route of a `tools/call` that has one. */
  private readonly inFlight = new Map<symbol, ElicitationRoute | undefined>();

  constructor(
    client: Client,
    private readonly o: DownstreamLinkOptions,
  ) {
    this.current = client;
    this.attach(client);
  }

  /** The connected client (for its capabilities and server info). */
  get client(): Client {
    return this.current;
  }

  private attach(client: Client): void {
    client.onclose = () => {
      if (client !== this.current) return;
      this.open = false;
      if (!this.stopping) this.o.log('downstream_closed', { server_id: this.o.serverId }, 'error');
    };
    client.fallbackNotificationHandler = (n: Notification) => this.o.onNotification(n);
    client.setRequestHandler('elicitation/create', (req) => this.elicitation(req.params));
    this.listenForListChanges(client);
  }

  /**
   * A 2025-11-25 downstream's `elicitation/create` goes to the agent-side call that caused it, never
   * to the connection (it is shared by every agent and principal). The JSON-RPC request names no
   * originating request, so the call is the one whose downstream request this message arrived in
   * (the async context of its Streamable HTTP response stream), else the only request in flight;
   * when that cannot be told (several calls on a stdio pipe), it is declined: a form is never shown
   * to another call's user.
   */
  private async elicitation(params: ElicitRequestParams): Promise<ElicitResult> {
    const own = this.routes.getStore();
    const only = this.inFlight.size === 1 ? [...this.inFlight.values()][0] : undefined;
    const route = own ?? only;
    if (!route) {
      this.o.log('downstream_elicitation_unrouted', { server_id: this.o.serverId, in_flight: this.inFlight.size }, 'warn');
      return { action: 'decline' };
    }
    return route.elicit(params);
  }

  /**
   * Run one downstream request, in flight until it settles — in its route's async context when
   * that context can tell calls apart: a 2025-11-25 downstream on a transport with a stream per
   * request (Streamable HTTP: its `elicitation/create` arrives on the call's own response stream).
   * A 2026-07-28 one never sends requests (it asks in its result), and on a stdio pipe every message
   * arrives in the pipe's context, never a call's: there the context would tell nothing, and its
   * first use turns on Node's promise hooks for the whole process, a cost on every promise of every call.
   */
  private async tracked<T>(route: ElicitationRoute | undefined, send: () => Promise<T>): Promise<T> {
    const id = Symbol('request');
    this.inFlight.set(id, route);
    const c = this.current;
    try {
      return await (route && c.transport?.hasPerRequestStream === true && c.getProtocolEra() === 'legacy'
        ? this.routes.run(route, send)
        : send());
    } finally {
      this.inFlight.delete(id);
    }
  }

  /**
   * On 2026-07-28 a server sends change notifications only on a `subscriptions/listen` stream
   * (2025-11-25 sends them unasked): the proxy opens one for tool-list changes when the downstream
   * advertises them, so a changed list is re-read and its pins re-compared at once (issue 32 item 6).
   * They arrive through the same notification handler as on 2025-11-25.
   */
  private listenForListChanges(client: Client): void {
    if (client.getProtocolEra() !== 'modern' || !client.getServerCapabilities()?.tools?.listChanged) return;
    client.listen({ toolsListChanged: true }).catch((e: unknown) => {
      if (client === this.current && !this.stopping)
        this.o.log('downstream_listen_failed', { server_id: this.o.serverId, message: e instanceof Error ? e.message : String(e) }, 'warn');
    });
  }

  /** Whether a downstream is there to send to, respawning one that exited. Concurrent callers share one respawn. */
  async available(): Promise<boolean> {
    if (this.open) return true;
    const reconnect = this.o.reconnect;
    if (this.stopping || !reconnect) return false;
    this.respawning ??= this.respawn(reconnect).finally(() => {
      this.respawning = undefined;
    });
    return this.respawning;
  }

  private async respawn(reconnect: () => Promise<Client>): Promise<boolean> {
    const now = this.o.clock.now();
    this.respawns = this.respawns.filter((t) => now - t < RESPAWN_WINDOW_MS);
    if (this.respawns.length >= MAX_RESPAWNS) {
      this.o.log(
        'downstream_respawn_limit',
        { server_id: this.o.serverId, respawns: this.respawns.length, window_ms: RESPAWN_WINDOW_MS },
        'error',
      );
      return false;
    }
    this.respawns.push(now);
    try {
      const client = await reconnect();
      this.current = client;
      this.attach(client);
      this.open = true;
      this.o.onRespawned();
      this.o.log('downstream_respawned', { server_id: this.o.serverId, respawns: this.respawns.length }, 'warn');
      return true;
    } catch (e) {
      this.o.log('downstream_respawn_failed', { server_id: this.o.serverId, message: e instanceof Error ? e.message : String(e) }, 'error');
      return false;
    }
  }

  /**
   * Every page of the downstream's `tools/list`, always from the wire (the proxy keeps its own
   * view, pinned-view.ts), with the `ttlMs` the downstream gave it on 2026-07-28 (SEP-2549
   * `CacheableResult`: the listing is fresh that long). Throws when no downstream is running.
   */
  async listAllTools(): Promise<{ tools: Array<{ name: string } & Record<string, unknown>>; ttlMs?: number }> {
    if (!(await this.available())) throw new ProtocolError(ProtocolErrorCode.InternalError, 'the downstream MCP server is not running');
    const listed = await this.tracked(undefined, () => this.current.listTools(undefined, { cacheMode: 'bypass', ...this.timeout() }));
    const ttlMs = (listed as { ttlMs?: unknown }).ttlMs;
    return { tools: listed.tools, ...(typeof ttlMs === 'number' && Number.isFinite(ttlMs) ? { ttlMs } : {}) };
  }

  /**
   * A `tools/call` to the downstream, exactly these params (a retried round adds `inputResponses`
   * and the downstream's `requestState`). A 2026-07-28 server's `InputRequiredResult` is returned
   * as it came (downstream-input.ts answers it), never fulfilled inside the SDK.
   */
  callTool(
    params: CallToolRequest['params'] & { inputResponses?: Record<string, unknown>; requestState?: string },
    extra: RequestExtra,
  ): Promise<CallToolResult | InputRequiredResult> {
    const options = { ...this.requestOptions(extra), allowInputRequired: true };
    // The SDK's callTool adds the Mcp-Param-* headers (and checks structured output against the pinned
    // definition's schema); a tool without header arguments goes out as the plain request.
    const send = declaresHeaders(extra.tool)
      ? () => this.current.callTool(params, { ...options, toolDefinition: extra.tool as Tool })
      : () => {
          const client = this.current;
          const request = { method: 'tools/call' as const, params };
          // The proxy's own client has the SDK's result check made once (downstream.ts); another is asked as the SDK asks.
          return client instanceof DownstreamClient
            ? client.request(request, client.toolsCallResult(), options)
            : client.request(request, options);
        };
    return this.tracked(extra.elicitation, send as () => Promise<CallToolResult | InputRequiredResult>);
  }

  /** A pass-through request, with the agent's progress token and cancellation carried over. */
  async forward(request: Request, extra: RequestExtra) {
    if (!(await this.available())) throw new ProtocolError(ProtocolErrorCode.InternalError, 'the downstream MCP server is not running');
    return this.tracked(undefined, () =>
      this.current.request({ method: request.method, params: request.params }, PassThroughResult, this.requestOptions(extra)),
    );
  }

  async close(): Promise<void> {
    this.stopping = true;
    await this.current.close().catch(() => {});
  }

  /**
   * Cancellation and progress of the agent's request carried to the downstream request, and the
   * per-call timeout (progress resets it: a long call that reports progress is not cut off).
   */
  private requestOptions(extra: RequestExtra): RequestOptions {
    const token = extra._meta?.progressToken;
    const opts: RequestOptions = { signal: extra.signal, resetTimeoutOnProgress: true, ...this.timeout() };
    if (token !== undefined)
      opts.onprogress = (p) => void extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } });
    return opts;
  }

  /** The per-request bound, when one is configured (else the SDK's default). */
  private timeout(): { timeout?: number } {
    return this.o.callTimeoutMs !== undefined ? { timeout: this.o.callTimeoutMs } : {};
  }
}
