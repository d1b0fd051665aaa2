/**
 * The gateway: an MCP server to the agent and an MCP client to one downstream server, with
 * the gate in between (Tool-Use Binding draft, MCP mapping: "tools/list remains discovery";
 * tools/call is a candidate act that runs only with consumed authority).
 *
 * - `tools/list`: only tools whose current definition digest a person pinned for this server
 *   identity are listed; every definition seen is recorded for the person to review.
 * - `tools/call`: pin check → candidate act (`mapMcpToolsCall`, server identity in
 *   tool_endpoint and destination) → the gate's dispatch (policy, enforce, journal) → the
 *   downstream call with exactly the digested arguments. A deny never reaches the downstream.
 * - resources, prompts, completion, logging and progress pass through unchanged; any other
 *   method is refused (fail closed: a method the proxy does not know might cause an effect).
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
  type Notification,
  type Request,
  ResultSchema,
  type ServerCapabilities,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { type Clock, canonicalJson, canonicalSha256Base64url, sha256Base64url, systemClock } from '@vrpkit/core';
import { type AgentCandidateAct, type PolicyState, snapshotLiveArguments } from '../act.js';
import { type DispatchGate, denyFrom, dispatchMapped, type MapContext, resolveActContext } from '../adapters/context.js';
import { mcpDenyResult } from '../adapters/mcp.js';
import { denyDecision } from '../enforce.js';
import { type EnforceDecision, hostErrorObject } from '../errors.js';
import { escalationNotice, sendEscalationNotice, waitForEscalationDecision } from '../escalation.js';
import type { Gate } from '../gate.js';
import { mapMcpToolsCall } from '../mappers/mcp.js';
import type { Policy } from '../policy.js';
import type { Escalations } from '../store/ports.js';
import type { PendingArguments } from '../ui/pending-arguments.js';
import type { ProxyLog } from './log.js';
import { isMcpToolName, type PinnedToolDefinition, pinnedDefinition } from './pins.js';
import type { ProxyMode } from './schema.js';
import type { ProxyTables } from './tables.js';

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

export interface GateProxyOptions {
  gate: Gate;
  policy: Policy;
  tables: ProxyTables;
  downstream: Client;
  /** The downstream's identity (see `serverIdentity`). */
  serverId: string;
  /** The proxy's name: the session id of its acts and part of its sink id. */
  name: string;
  mode: ProxyMode;
  /** Development only: pin every tool the first time it is seen. */
  pinOnFirstUse: boolean;
  log: ProxyLog;
  /** The escalations of the store the gate decides in (read while a call waits). */
  escalations: Escalations;
  /** Where escalated acts' arguments are kept for the approvals page. */
  pendingArguments: PendingArguments;
  /** How long an escalated call waits for a person (0: refuse at once with the pending code). */
  approvalTimeoutMs: number;
  /** POST a notice (no arguments) here when an act waits (`--notify-url`). */
  notifyUrl?: string;
  clock?: Clock;
  /**
   * Start the downstream again after it exited (a stdio child that crashed): called on the next
   * request, at most `MAX_RESPAWNS` times per `RESPAWN_WINDOW_MS`. Without it, every call after
   * the downstream closed is answered `downstream_unavailable`.
   */
  reconnect?: () => Promise<Client>;
  /** Per-request bound on a downstream call (tools/call and pass-through); default the SDK's 60 s. */
  callTimeoutMs?: number;
  /** Fault injection for the crash tests: SIGKILL this process right after the downstream call returns. */
  fault?: ProxyFaultPoint;
}

/**
 * Named points where `VRP_GATE_PROXY_FAULT` makes the proxy SIGKILL itself (crash tests only):
 * `after-consume` — the act's authority is consumed and journaled, the downstream not yet called;
 * `after-downstream-call` — the downstream answered, its result not yet journaled.
 */
export type ProxyFaultPoint = 'after-consume' | 'after-downstream-call';

/** A crash loop is not retried forever: at most this many respawns in the window. */
export const MAX_RESPAWNS = 5;
export const RESPAWN_WINDOW_MS = 60_000;

/**
 * Observe mode only: how long the policy epochs read from the store are reused for the acts it
 * builds. Observe forwards every call whatever the epochs, and policy evaluation does not read
 * them; enforce mode reads them per call, as the gate refuses authority for an act whose epochs
 * are no longer current (Tool-Use Binding draft, enforce() contract MUST 5).
 */
export const OBSERVE_EPOCHS_CACHE_MS = 1000;

type RequestExtra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number } & Record<string, unknown>;
  sendNotification: (n: ServerNotification) => Promise<void>;
};

interface ToolView {
  definition: PinnedToolDefinition;
  digest: string;
}

export class GateProxy {
  private view: Map<string, ToolView> | undefined;
  private downstream: Client;
  private downstreamOpen = true;
  private respawning: Promise<boolean> | undefined;
  private respawns: number[] = [];
  private stopping = false;
  /** Aborted when the proxy stops: calls waiting for a person stop waiting. */
  private readonly stopped = new AbortController();
  private readonly agents = new Set<Server>();
  private readonly clock: Clock;
  /** This server's pins (tool name → pinned digest) as last read, and the pin version read before them. */
  private pins: { version: number; digests: Map<string, string | null> } | undefined;
  /** Observe mode: the epochs as last read (a pending or settled read) and when (monotonic ms). */
  private epochs: { readAt: number; state: Promise<PolicyState> } | undefined;
  /** The gate as the mappers see it: in observe mode, with the epochs read at most every `OBSERVE_EPOCHS_CACHE_MS`. */
  private readonly mapGate: DispatchGate;
  /** Who an act is for: the proxy's user (fixed for the process). */
  private readonly principal: MapContext['principal'] = { principal_id: process.env.USER ?? 'local', principal_type: 'user' };
  /** The approvals page, linked from the `--notify-url` notice (never with its token). */
  approvalsUrl: string | undefined;

  constructor(private readonly o: GateProxyOptions) {
    this.clock = o.clock ?? systemClock;
    this.downstream = o.downstream;
    this.mapGate =
      o.mode === 'observe'
        ? {
            sinkId: o.gate.sinkId,
            classify: (tool) => o.gate.classify(tool),
            dispatch: (act, liveArgs, invoke) => o.gate.dispatch(act, liveArgs, invoke),
            policyState: () => this.observedEpochs(),
          }
        : o.gate;
    this.attach(o.downstream);
  }

  private attach(client: Client): void {
    client.onclose = () => {
      if (client !== this.downstream) return;
      this.downstreamOpen = false;
      if (!this.stopping) this.o.log('downstream_closed', { server_id: this.o.serverId }, 'error');
    };
    // Downstream notifications (list changes, resource updates, log messages) go to every agent unchanged.
    client.fallbackNotificationHandler = async (n: Notification) => {
      if (n.method === 'notifications/tools/list_changed') this.view = undefined;
      for (const agent of this.agents) await agent.notification(n as ServerNotification).catch(() => {});
    };
  }

  /**
   * Whether a downstream is there to send to, respawning one that exited (bounded, so a server
   * that crashes at start-up is not restarted in a loop). Concurrent callers share one respawn.
   */
  private async available(): Promise<boolean> {
    if (this.downstreamOpen) return true;
    const reconnect = this.o.reconnect;
    if (this.stopping || !reconnect) return false;
    this.respawning ??= this.respawn(reconnect).finally(() => {
      this.respawning = undefined;
    });
    return this.respawning;
  }

  private async respawn(reconnect: () => Promise<Client>): Promise<boolean> {
    const now = this.clock.now();
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
      this.downstream = client;
      this.attach(client);
      this.downstreamOpen = true;
      // The new process may show other definitions: the next call or list digests them afresh.
      this.view = undefined;
      this.o.log('downstream_respawned', { server_id: this.o.serverId, respawns: this.respawns.length }, 'warn');
      return true;
    } catch (e) {
      this.o.log('downstream_respawn_failed', { server_id: this.o.serverId, message: e instanceof Error ? e.message : String(e) }, 'error');
      return false;
    }
  }

  /** An SDK `Server` for one agent connection (stdio has one; Streamable HTTP has one per session). */
  createAgentServer(): Server {
    const d = this.downstream.getServerCapabilities() ?? {};
    // Mirror the downstream, minus `tasks` (task-based calls would bypass the gated tools/call) and `experimental`.
    const capabilities: ServerCapabilities = { tools: d.tools?.listChanged ? { listChanged: true } : {} };
    if (d.resources) capabilities.resources = d.resources;
    if (d.prompts) capabilities.prompts = d.prompts;
    if (d.completions) capabilities.completions = d.completions;
    if (d.logging) capabilities.logging = d.logging;
    // The downstream's `instructions` are model-visible text no pin covers, so they are not forwarded.
    const server = new Server({ name: `vrp-gate-proxy/${this.o.name}`, version: '0.1.0' }, { capabilities });
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
    const view = await this.refreshView();
    const pins = await this.readPins();
    const listed: ListToolsResult['tools'] = [];
    for (const [name, t] of view) {
      const pinned = pins.get(name) ?? null;
      if (pinned === t.digest || this.o.mode === 'observe') listed.push(t.definition as ListToolsResult['tools'][number]);
      if (pinned !== t.digest)
        this.o.log('tool_not_pinned', {
          server_id: this.o.serverId,
          tool: name,
          digest: t.digest,
          pinned_digest: pinned,
          reason: pinned === null ? 'never_pinned' : 'definition_changed',
          listed: this.o.mode === 'observe',
        });
    }
    return listed;
  }

  /** One `tools/call`: pin check, candidate act, the gate's dispatch, the downstream call (or a deny). */
  async callTool(params: CallToolRequest['params'], extra: RequestExtra, agentName: string | undefined): Promise<CallToolResult> {
    const started = this.clock.now();
    const name = params.name;
    if (params.task !== undefined) throw new McpError(ErrorCode.InvalidParams, 'task-based tools/call is not available through the gate');
    // A name outside the MCP pattern is never pinned, whatever the downstream offers: refused
    // before anything else, logged by digest only (the name is the server's untrusted text).
    if (!isMcpToolName(name)) {
      this.o.log('tool_name_refused', { server_id: this.o.serverId, name_digest: sha256Base64url(name), call: true }, 'warn');
      return denyResult(denyDecision('EF_TOOL_NOT_PINNED'));
    }
    if (!(await this.available())) return downstreamUnavailable();
    const tool = (this.view ?? (await this.refreshView())).get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const ctx: MapContext = {
      gate: this.mapGate,
      session_id: this.o.name,
      principal: this.principal,
      agent: { agent_id: agentName ?? 'mcp-client' },
      purpose: { purpose_id: 'mcp-tools-call' },
    };
    // Two independent reads: on PostgreSQL they go out on two pooled connections at once. A pin
    // read the store cannot answer fails the call closed, as the store's own code (issue 36 defect 1).
    const [pinned, actCtx] = await Promise.all([this.isPinned(name, tool.digest).catch(() => undefined), resolveActContext(ctx)]);
    if (pinned === undefined) return this.deny(denyDecision('EF_STORE_UNAVAILABLE'), { name, started });
    if ('allow' in actCtx) return this.deny(actCtx, { name, started });
    let mapped: { act: AgentCandidateAct; liveArgs: Record<string, unknown>; sent: CallToolRequest['params'] };
    try {
      mapped = this.map(params, actCtx);
    } catch (e) {
      return this.deny(denyFrom(e), { name, started });
    }
    const { act, sent } = mapped;
    const at = { name, started, act };

    if (this.o.mode === 'observe') {
      // Forward everything; record what enforce would have refused (the pilot metric).
      const would = pinned ? this.o.policy.evaluate(act) : { decision: 'deny' as const, code: 'EF_TOOL_NOT_PINNED' as const };
      if (would.decision !== 'issue') await this.observe('observe', would.code, act, name);
      try {
        const result = await this.send(sent, extra);
        this.logCall(at, { allow: true, invoked: true, would_deny: would.decision === 'issue' ? null : would.code });
        return result;
      } catch (e) {
        this.logCall(at, { allow: true, invoked: true, error: true });
        return downstreamFailure(e);
      }
    }

    if (!pinned) return this.deny(denyDecision('EF_TOOL_NOT_PINNED'), at);
    let run = await this.dispatch(ctx, mapped, params, extra);
    let note: string | undefined;
    if (!run.r.outcome.decision.allow && run.r.outcome.decision.code === 'EF_APPROVAL_REQUIRED') {
      await this.retainArguments(act, mapped.liveArgs);
      // Tool-Use Binding draft, escalation: the act waits for a person (bounded), then runs with
      // the approved authority or is refused; the decision may come from another process.
      const decided = this.o.approvalTimeoutMs > 0 ? await this.awaitApproval(act, extra) : undefined;
      if (decided) {
        // Decided: dispatch the identical call again. Approved, the gate issues the authority the
        // approval binds and it runs once; rejected, the gate refuses it (EF_NOT_AUTHORIZED).
        const again = await resolveActContext(ctx);
        if ('allow' in again) return this.deny(again, at);
        try {
          run = await this.dispatch(ctx, this.map(params, again), params, extra);
        } catch (e) {
          return this.deny(denyFrom(e), at);
        }
        if (decided.status === 'REJECTED') note = `A person refused candidate act ${act.candidate_act_id}; it was not run.`;
      }
    }
    const { r, result } = run;
    if (r.toolError !== undefined) {
      this.logCall(at, { allow: true, invoked: true, error: true });
      return downstreamFailure(r.toolError);
    }
    if (r.outcome.decision.allow && result) {
      this.logCall(at, { allow: true, invoked: true, authority_id: r.outcome.decision.authority_id });
      return result;
    }
    // A deny — also for a replay of a finished act (the retry rule: never a second invoke).
    return this.deny(r.outcome.decision, at, note);
  }

  /** The gate's dispatch (policy, enforce, journal) of a mapped call, and the downstream call it allows. */
  private async dispatch(
    ctx: MapContext,
    mapped: { act: AgentCandidateAct; liveArgs: Record<string, unknown>; sent: CallToolRequest['params'] },
    params: CallToolRequest['params'],
    extra: RequestExtra,
  ) {
    let result: CallToolResult | undefined;
    const r = await dispatchMapped(
      ctx,
      { id: mapped.act.candidate_act_id, name: params.name },
      () => mapped,
      async (args) => {
        // The downstream gets the frozen copy dispatch digested (Tool-Use Binding draft, enforce() contract).
        result = await this.send(params.arguments === undefined ? mapped.sent : { ...mapped.sent, arguments: args }, extra);
        if (this.o.fault === 'after-downstream-call') sigkillSelf();
        // The journal keeps a digest of the result, not the result: the store holds no tool output.
        return { result_digest: digestOrNull(result) };
      },
      true,
    );
    return { r, result };
  }

  /**
   * Keep the arguments of an escalated act for the person deciding (the approvals page shows
   * them in full); purged once decided plus the retention period.
   */
  private async retainArguments(act: AgentCandidateAct, args: Record<string, unknown>): Promise<void> {
    try {
      await this.o.pendingArguments.record({
        candidate_act_id: act.candidate_act_id,
        arguments_json: canonicalJson(args),
        arguments_digest: act.arguments_digest.value,
        recorded_at: this.clock.now(),
      });
    } catch {
      // The page then shows the digest only; the escalation itself is recorded.
      this.o.log('arguments_not_retained', { candidate_act_id: act.candidate_act_id }, 'warn');
    }
  }

  /**
   * Wait (at most `approvalTimeoutMs`) for a person's decision on an escalated act, sending MCP
   * progress notifications when the agent asked for them, and the `--notify-url` notice once.
   */
  private async awaitApproval(act: AgentCandidateAct, extra: RequestExtra) {
    const waitMs = this.o.approvalTimeoutMs;
    this.o.log('approval_waiting', { candidate_act_id: act.candidate_act_id, timeout_ms: waitMs });
    if (this.o.notifyUrl) {
      const notice = escalationNotice(act, this.o.gate.sinkId, this.clock.now(), this.approvalsUrl ?? null);
      // Never awaited: a slow or failing receiver does not delay the wait or the decision.
      void sendEscalationNotice(this.o.notifyUrl, notice, (reason) =>
        this.o.log('notify_failed', { candidate_act_id: act.candidate_act_id, reason }, 'warn'),
      );
    }
    const token = extra._meta?.progressToken;
    const decided = await waitForEscalationDecision(this.o.escalations, act.candidate_act_id, {
      timeoutMs: waitMs,
      signal: AbortSignal.any([extra.signal, this.stopped.signal]),
      clock: this.clock,
      onWaiting: (elapsed) => {
        if (token === undefined) return;
        void extra
          .sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: elapsed / 1000,
              total: waitMs / 1000,
              message: `waiting for a person to approve candidate act ${act.candidate_act_id}`,
            },
          })
          .catch(() => {});
      },
    });
    this.o.log('approval_wait_ended', { candidate_act_id: act.candidate_act_id, status: decided?.status ?? 'PENDING' });
    return decided;
  }

  /** A pass-through request, with the agent's progress token and cancellation carried over. */
  async forward(request: Request, extra: RequestExtra) {
    if (!PASS_THROUGH.has(request.method)) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    if (!(await this.available())) throw new McpError(ErrorCode.InternalError, 'the downstream MCP server is not running');
    return this.downstream.request({ method: request.method, params: request.params }, ResultSchema, this.requestOptions(extra));
  }

  async close(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    for (const agent of [...this.agents]) await agent.close().catch(() => {});
    await this.downstream.close().catch(() => {});
  }

  // ---- internals ----

  /** Fetch every page of the downstream's tools, digest each definition, record what was seen. */
  private async refreshView(): Promise<Map<string, ToolView>> {
    if (!(await this.available())) throw new McpError(ErrorCode.InternalError, 'the downstream MCP server is not running');
    const view = new Map<string, ToolView>();
    let cursor: string | undefined;
    do {
      const page = await this.downstream.listTools(cursor === undefined ? undefined : { cursor });
      for (const t of page.tools) {
        if (isMcpToolName(t.name)) view.set(t.name, pinnedDefinition(t));
        else this.o.log('tool_name_refused', { server_id: this.o.serverId, name_digest: sha256Base64url(t.name) }, 'warn');
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const info = this.downstream.getServerVersion();
    await this.o.tables.recordSeen(
      [...view].map(([tool_name, t]) => ({
        server_id: this.o.serverId,
        tool_name,
        digest: t.digest,
        definition: JSON.stringify(t.definition),
        server_info: info ? JSON.stringify({ name: info.name, version: info.version }) : null,
      })),
      this.clock.now(),
    );
    if (this.o.pinOnFirstUse) await this.pinFirstSeen(view);
    this.view = view;
    return view;
  }

  /** `--pin-on-first-use` (development only): a tool never pinned is pinned as seen now; a changed definition is not. */
  private async pinFirstSeen(view: Map<string, ToolView>): Promise<void> {
    const pins = await this.readPins();
    for (const [name, t] of view) {
      if (pins.get(name) !== null) continue; // pinned (to this or another definition), or not recorded
      const r = await this.o.tables.pin(this.o.serverId, name, { by: 'pin-on-first-use', now: this.clock.now(), digest: t.digest });
      if (r.pinned) this.o.log('tool_pinned_on_first_use', { server_id: this.o.serverId, tool: name, digest: t.digest }, 'warn');
    }
    this.pins = undefined;
  }

  /** Observe mode's epochs: one read shared by the calls of `OBSERVE_EPOCHS_CACHE_MS`; a failed read is not kept. */
  private observedEpochs(): Promise<PolicyState> {
    const now = performance.now();
    if (!this.epochs || now - this.epochs.readAt >= OBSERVE_EPOCHS_CACHE_MS) {
      const state = this.o.gate.policyState();
      const entry = { readAt: now, state };
      this.epochs = entry;
      state.catch(() => {
        if (this.epochs === entry) this.epochs = undefined;
      });
    }
    return this.epochs.state;
  }

  /** This server's pins as the store holds them now (tool name → pinned digest, null when seen but not pinned). */
  private async readPins(versionRead?: number): Promise<Map<string, string | null>> {
    // The version first: a pin changed between the two reads leaves the pins newer than their
    // version, so the next call reads them again (never the other way round).
    const version = versionRead ?? (await this.o.tables.pinVersion(this.o.serverId));
    const digests = new Map((await this.o.tables.listPins(this.o.serverId)).map((p) => [p.tool_name, p.pinned_digest]));
    this.pins = { version, digests };
    return digests;
  }

  /**
   * Whether a person pinned exactly this definition of the tool, as the store holds the pins now:
   * every pin and unpin (from any process) bumps the server's pin version, so the pins held are
   * used only while the version read for this call is the one they were read at.
   */
  private async isPinned(name: string, digest: string): Promise<boolean> {
    const version = await this.o.tables.pinVersion(this.o.serverId);
    const digests = this.pins?.version === version ? this.pins.digests : await this.readPins(version);
    return digests.get(name) === digest;
  }

  /**
   * The act for a call, over a private snapshot of its arguments; the downstream receives
   * exactly that snapshot (the digest's arguments), whatever the caller's object does meanwhile.
   *
   * The act id: an MCP client names no act, so a call is identified by what it does — server
   * identity, tool and arguments digest — and a retry of the identical call is the same act:
   * an approval given for it applies to the retry, and after it ran the retry is a replay
   * (Tool-Use Binding draft, retries: "never a second invoke"). Informational calls have no
   * effect to repeat, so each is an act of its own (reading a file twice is two reads).
   */
  private map(params: CallToolRequest['params'], actCtx: Parameters<typeof mapMcpToolsCall>[2]) {
    const live = snapshotLiveArguments(params.arguments ?? {});
    const liveArgs = live.args;
    const sent: CallToolRequest['params'] = params.arguments === undefined ? { ...params } : { ...params, arguments: liveArgs };
    const server = { serverUrl: this.o.serverId };
    const cls = actCtx.classify({ tool_id: params.name, function_id: params.name, tool_protocol: 'MCP', tool_endpoint: this.o.serverId });
    const ref =
      cls === 'INFORMATIONAL'
        ? randomUUID()
        : canonicalSha256Base64url({ server: this.o.serverId, tool: params.name, arguments_digest: live.digest.value });
    return { act: mapMcpToolsCall(sent, server, actCtx, ref), liveArgs, sent };
  }

  private send(params: CallToolRequest['params'], extra: RequestExtra): Promise<CallToolResult> {
    return this.downstream.request(
      { method: 'tools/call', params },
      CallToolResultSchema,
      this.requestOptions(extra),
    ) as Promise<CallToolResult>;
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

  /**
   * A deny as the model sees it: an MCP tool error (`isError: true`) carrying the host error
   * object with the EF code and the registry's fixed wording. No `structuredContent`: it would
   * have to match the tool's declared outputSchema, which an error object does not.
   */
  private async deny(
    decision: EnforceDecision,
    at: { name: string; started: number; act?: AgentCandidateAct },
    note?: string,
  ): Promise<CallToolResult> {
    const result = denyResult(decision);
    const code = hostErrorObject(decision).error.code;
    if (code === 'EF_APPROVAL_REQUIRED' && at.act)
      result.content.push({
        type: 'text',
        text: `Approval pending for candidate act ${at.act.candidate_act_id}. Once a person approves it, the identical call runs once.`,
      });
    if (note) result.content.push({ type: 'text', text: note });
    await this.observe('enforce', code, at.act, at.name);
    this.logCall(at, { allow: false, invoked: false, code });
    return result;
  }

  private async observe(mode: ProxyMode, code: string, act: AgentCandidateAct | undefined, name: string): Promise<void> {
    try {
      await this.o.tables.recordObservation({
        recorded_at: this.clock.now(),
        mode,
        server_id: this.o.serverId,
        tool_name: name,
        consequence_class:
          act?.consequence_class ??
          this.o.gate.classify({ tool_id: name, function_id: name, tool_protocol: 'MCP', tool_endpoint: this.o.serverId }),
        code,
        candidate_act_id: act?.candidate_act_id ?? null,
        arguments_digest: act?.arguments_digest.value ?? null,
      });
    } catch {
      // The metric is best effort; the decision it describes already stands.
      this.o.log('observation_not_recorded', { tool: name, code }, 'warn');
    }
  }

  private logCall(at: { name: string; started: number; act?: AgentCandidateAct }, fields: Record<string, unknown>): void {
    this.o.log('tools/call', {
      mode: this.o.mode,
      server_id: this.o.serverId,
      tool: at.name,
      candidate_act_id: at.act?.candidate_act_id ?? null,
      arguments_digest: at.act?.arguments_digest.value ?? null,
      consequence_class: at.act?.consequence_class ?? null,
      ...fields,
      ms: this.clock.now() - at.started,
    });
  }
}

/** Fault injection (`VRP_GATE_PROXY_FAULT`): die as a power cut would, with no cleanup and no reply. */
export function sigkillSelf(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL was sent');
}

/** The deny as the agent sees it: the host error object in a text block, no structured content. */
function denyResult(decision: EnforceDecision) {
  const { structuredContent: _, ...result } = mcpDenyResult(decision);
  return result;
}

function digestOrNull(value: unknown): string | null {
  try {
    return canonicalSha256Base64url(value);
  } catch {
    return null;
  }
}

function toolError(code: string, message: string, invoked: boolean): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message, retryable: false, invoked } }) }] };
}

/** The downstream is gone: nothing was sent, nothing was consumed. */
function downstreamUnavailable(): CallToolResult {
  return toolError('downstream_unavailable', 'The downstream MCP server is not running; the tool call was not sent.', false);
}

/**
 * The call was sent and the downstream failed or did not answer in time (enforce mode: its
 * authority is consumed, so it is not run again). A timeout cancels the downstream request
 * (`notifications/cancelled`), but whether the server acted before it is unknown.
 */
function downstreamFailure(e: unknown): CallToolResult {
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout)
    return toolError(
      'downstream_timeout',
      'The downstream MCP server did not answer in time; the call was cancelled and its effect is unknown.',
      true,
    );
  const message = e instanceof Error ? e.message : 'the downstream MCP server failed';
  return toolError('downstream_error', `The downstream MCP server failed during the call: ${message}`, true);
}
