/**
 * The proxy's downstream lifecycle: the MCP client to the one downstream server, its requests
 * (with the agent's cancellation, progress and the per-call timeout), its notifications to every
 * agent, and a respawn when it exited (a stdio child that crashed), bounded so a server that
 * crashes at start-up is not restarted in a loop.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type Notification,
  type Request,
  ResultSchema,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '@vrpkit/core';
import type { ProxyLog } from './log.js';

/** A crash loop is not retried forever: at most this many respawns in the window. */
export const MAX_RESPAWNS = 5;
export const RESPAWN_WINDOW_MS = 60_000;

/** What the proxy's request handlers receive with an agent's request (the SDK's `RequestHandlerExtra`, the parts used). */
export type RequestExtra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number } & Record<string, unknown>;
  sendNotification: (n: ServerNotification) => Promise<void>;
};

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

export class DownstreamLink {
  private current: Client;
  private open = true;
  private respawning: Promise<boolean> | undefined;
  private respawns: number[] = [];
  private stopping = false;

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

  /** Every page of the downstream's `tools/list`. Throws when no downstream is running. */
  async listAllTools(): Promise<Array<{ name: string } & Record<string, unknown>>> {
    if (!(await this.available())) throw new McpError(ErrorCode.InternalError, 'the downstream MCP server is not running');
    const tools: Array<{ name: string } & Record<string, unknown>> = [];
    let cursor: string | undefined;
    do {
      const page = await this.current.listTools(cursor === undefined ? undefined : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  /** A `tools/call` to the downstream, exactly these params. */
  callTool(params: CallToolRequest['params'], extra: RequestExtra): Promise<CallToolResult> {
    return this.current.request(
      { method: 'tools/call', params },
      CallToolResultSchema,
      this.requestOptions(extra),
    ) as Promise<CallToolResult>;
  }

  /** A pass-through request, with the agent's progress token and cancellation carried over. */
  async forward(request: Request, extra: RequestExtra) {
    if (!(await this.available())) throw new McpError(ErrorCode.InternalError, 'the downstream MCP server is not running');
    return this.current.request({ method: request.method, params: request.params }, ResultSchema, this.requestOptions(extra));
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
    const opts: RequestOptions = { signal: extra.signal, resetTimeoutOnProgress: true };
    if (this.o.callTimeoutMs !== undefined) opts.timeout = this.o.callTimeoutMs;
    if (token !== undefined)
      opts.onprogress = (p) => void extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } });
    return opts;
  }
}
