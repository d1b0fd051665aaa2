import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Client, Transport } from '@modelcontextprotocol/client';
import { type LiveArguments, snapshotLiveArguments } from '../../act.js';
import { AUTHORITY_META_KEY } from '../../authority.js';
import type { DispatchGrant } from '../../dispatch.js';
import { type EnforceDecision, GateError, hostErrorObject } from '../../errors.js';
import { denyFrom, dispatchMapped, forCall, type MapContext, resolveActContext, type ToolCallOutcome } from '../../host/dispatch-mapped.js';
import {
  type McpMessageNotificationLike,
  type McpServerIdentity,
  mcpNotificationCall,
  mcpToolsCallCall,
  notificationToolCall,
} from './map.js';

type CallTool = Client['callTool'];
type CallToolResult = Awaited<ReturnType<CallTool>>;

/** A gated MCP `Client` (SDK v2, either revision): usable wherever a `Client` is, with every `tools/call` passing the gate. */
export type GatedMcpClient = Client & {
  /**
   * `callTool` for the model block (tool_use id, call id) this call executes: the id becomes part
   * of the candidate act id, so an approval or a retry binds to the same act. Plain `callTool`
   * makes every call a fresh act. Never the JSON-RPC id (Tool-Use Binding draft, MCP mapping: "it can collide across servers").
   */
  callToolFor(actRef: string, ...args: Parameters<CallTool>): Promise<CallToolResult>;
  /** The decision for every call made through this client, in order (ids, codes, digests; never arguments). */
  readonly gateOutcomes: readonly ToolCallOutcome[];
};

/** The host error object as an MCP tool-level error result (`isError: true`) the model sees, with the object as structured content. */
export function mcpDenyResult(decision: EnforceDecision) {
  const body = hostErrorObject(decision);
  return { isError: true, content: [{ type: 'text' as const, text: JSON.stringify(body) }], structuredContent: { ...body } };
}

/**
 * One MCP `tools/call` through the gate (Tool-Use Binding draft, MCP mapping), whoever sends it: the
 * act is mapped with the server's identity, and `send` receives the frozen copy of the arguments
 * that was digested (absent arguments are the empty object). Used by `gateMcpClient` and by the
 * framework adapters that wrap a framework's own MCP connection.
 */
export async function dispatchMcpToolsCall<T>(
  context: MapContext,
  server: McpServerIdentity,
  actRef: string | undefined,
  params: { name: string; arguments?: Record<string, unknown> },
  send: (args: Record<string, unknown>, grant: DispatchGrant) => Promise<T>,
): Promise<{ outcome: ToolCallOutcome; result?: T; toolError?: unknown }> {
  // Snapshot once, before any await: the caller may change its params object meanwhile (issue 36 defect 15).
  const block = { id: actRef ?? '', name: params.name };
  let live: LiveArguments<Record<string, unknown>>;
  try {
    live = snapshotLiveArguments(params.arguments ?? {});
  } catch (e) {
    return { outcome: { ...block, decision: denyFrom(e), invoked: false } };
  }
  const actCtx = await resolveActContext(context);
  if ('allow' in actCtx) return { outcome: { ...block, decision: actCtx, invoked: false } };
  const r = await dispatchMapped(
    context,
    block,
    () => mcpToolsCallCall({ name: block.name, arguments: live }, server, forCall(actCtx, context, block.name, live.args), actRef),
    send,
    true,
  );
  return r as { outcome: ToolCallOutcome; result?: T; toolError?: unknown };
}

/**
 * A `notifications/message` that asks the host to call a tool, through the gate: mapped like a
 * `tools/call` from that server with `tool_output` provenance (`map.ts` `mapMcpNotification`),
 * and `invoke` runs only on allow, with the digested arguments. A notification that asks for no
 * tool call is refused with EF_MALFORMED_ACT and nothing runs.
 */
export async function dispatchMcpNotification<T>(
  notification: McpMessageNotificationLike,
  context: MapContext,
  server: McpServerIdentity,
  invoke: (call: { name: string; arguments: Record<string, unknown> }) => Promise<T>,
): Promise<{ outcome: ToolCallOutcome; result?: T; toolError?: unknown }> {
  const call = notificationToolCall(notification);
  const name = call?.name ?? '';
  const actRef = `notification:${randomUUID()}`;
  const actCtx = await resolveActContext(context);
  if ('allow' in actCtx) return { outcome: { id: actRef, name, decision: actCtx, invoked: false } };
  const r = await dispatchMapped(
    context,
    { id: actRef, name },
    () => mcpNotificationCall(notification, server, actCtx, actRef),
    (args) => invoke({ name, arguments: args }),
    call !== null,
  );
  return r as { outcome: ToolCallOutcome; result?: T; toolError?: unknown };
}

/**
 * Wrap an MCP SDK `Client` so every `tools/call` passes the gate (Tool-Use Binding draft, MCP mapping: "The conforming
 * placement is the MCP client dispatcher … wrap Client.callTool"). On deny NO `tools/call` is
 * sent and an MCP error result (`isError: true`, the host error object) comes back.
 * `serverUrl` is the identity of the server the client is really connected to; it enters the
 * act's tool_endpoint and destination, so authority issued for one server fails on a swapped one.
 * Discovery (`listTools`, …) passes through: "tools/list remains discovery".
 *
 * Every other path to the server is closed at the transport, not method by method: the client's
 * transport (the current one, and any later `connect`) refuses a `tools/call` message unless it
 * is the one message of a dispatch the gate allowed. `request`, `requestStream`, the task API
 * and any method a later SDK adds all end in that `send`, through this wrapper or through the
 * `client` object itself. `experimental` (task-based `callToolStream`, which has no gated form)
 * is refused up front with a clear error.
 */
export function gateMcpClient(
  client: Client,
  opts: {
    serverUrl: string;
    context: MapContext;
    /** Send the consumed authority in the request's `_meta` (AUTHORITY_META_KEY), for a server that is a cooperating sink. */
    attachAuthority?: boolean;
  },
): GatedMcpClient {
  const outcomes: ToolCallOutcome[] = [];
  const server = { serverUrl: opts.serverUrl };
  guardClient(client);

  async function gatedCall(actRef: string | undefined, ...[params, options]: Parameters<CallTool>): Promise<CallToolResult> {
    const { arguments: raw, ...rest } = params;
    const name = params.name;
    const r = await dispatchMcpToolsCall(opts.context, server, actRef, params, async (args, grant) => {
      const meta = opts.attachAuthority ? { _meta: { ...rest._meta, [AUTHORITY_META_KEY]: await grant.authorityJws() } } : {};
      // The grant lets exactly one tools/call of this dispatch through the guarded transport.
      return toolsCallGrant.run({ transport: client.transport, sent: false }, () =>
        client.callTool(raw === undefined ? { ...rest, ...meta, name } : { ...rest, ...meta, name, arguments: args }, options),
      );
    });
    outcomes.push(r.outcome);
    if (r.toolError !== undefined) throw r.toolError;
    if (r.outcome.decision.allow || r.result !== undefined) return r.result as CallToolResult;
    return mcpDenyResult(r.outcome.decision) as CallToolResult;
  }

  const overrides: Record<PropertyKey, unknown> = {
    callTool: (...args: Parameters<CallTool>) => gatedCall(undefined, ...args),
    callToolFor: (actRef: string, ...args: Parameters<CallTool>) => gatedCall(actRef, ...args),
    gateOutcomes: outcomes,
  };
  return new Proxy(client, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop];
      if (prop === 'experimental') throw new GateError('EF_NOT_AUTHORIZED', 'experimental task calls bypass the gate; use callTool');
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as GatedMcpClient;
}

/** The permission for one `tools/call` message: set by a dispatch the gate allowed, for its own transport, used once. */
interface ToolsCallGrant {
  transport: Transport | undefined;
  sent: boolean;
}

/** Carried through the SDK's async calls from the gated invoke down to `transport.send`. */
const toolsCallGrant = new AsyncLocalStorage<ToolsCallGrant>();
const guarded = new WeakSet<object>();

/** Guard the client's transport now and every transport it connects later. */
function guardClient(client: Client): void {
  if (guarded.has(client)) return;
  guarded.add(client);
  if (client.transport) guardTransport(client.transport);
  // Not every object passed as a client is connectable (a host may hand over its own dispatcher).
  if (typeof client.connect !== 'function') return;
  const connect = client.connect.bind(client);
  Object.defineProperty(client, 'connect', {
    configurable: true,
    value: (transport: Transport, ...rest: unknown[]) => {
      guardTransport(transport);
      return (connect as (t: Transport, ...r: unknown[]) => Promise<void>)(transport, ...rest);
    },
  });
}

/** Refuse every `tools/call` message on this transport that is not the one message of an allowed dispatch. */
function guardTransport(transport: Transport): void {
  if (guarded.has(transport)) return;
  guarded.add(transport);
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    if ((message as { method?: unknown }).method === 'tools/call') {
      const grant = toolsCallGrant.getStore();
      if (grant?.transport !== transport || grant.sent)
        throw new GateError('EF_NOT_AUTHORIZED', 'tools/call must go through the gated callTool');
      grant.sent = true;
    }
    return send(message, options);
  };
}
