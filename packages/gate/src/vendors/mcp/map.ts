import { randomUUID } from 'node:crypto';
import { asRecord } from '@vrpkit/core';
import { type AgentCandidateAct, type LiveArguments, snapshotLiveArguments } from '../../act.js';
import { GateError } from '../../errors.js';
import { type ActContext, bindTool, buildAct, candidateActId, type MappedCall } from '../../host/act-context.js';

/** `tools/call` params (structural; the SDK's `CallToolRequest['params']` fits). */
export interface McpToolsCallParams {
  name: string;
  arguments?: Record<string, unknown>;
}

/** The MCP server the client dispatcher is actually talking to. */
export interface McpServerIdentity {
  /** The transport endpoint (e.g. the Streamable HTTP URL); bound into tool_endpoint and destination. */
  serverUrl: string;
}

/**
 * MCP `tools/call` → act (Tool-Use Binding draft, MCP mapping): params.name → tool_id; params.arguments →
 * digest; server URL → tool_endpoint AND destination (a swapped server with the same tool name
 * fails destination match); protocol MCP. The JSON-RPC id is never the candidate_act_id (it
 * collides across servers): the id comes from `actRef` — the model block this call executes,
 * so approvals and retries bind to it — or is fresh.
 */
export function mapMcpToolsCall(
  params: McpToolsCallParams,
  server: McpServerIdentity,
  ctx: ActContext,
  actRef?: string,
): AgentCandidateAct {
  return mcpToolsCallCall(params, server, ctx, actRef).act;
}

/**
 * The map step of `mapMcpToolsCall`: the act and the snapshot of the arguments it digests.
 * `params.arguments` may be that snapshot already (the proxy takes it first): used as is.
 */
export function mcpToolsCallCall(
  params: { name: string; arguments?: Record<string, unknown> | LiveArguments<Record<string, unknown>> },
  server: McpServerIdentity,
  ctx: ActContext,
  actRef?: string,
): MappedCall<Record<string, unknown>> {
  if (typeof params?.name !== 'string' || !params.name) throw new GateError('EF_MALFORMED_ACT', 'tools/call without a tool name');
  if (!server.serverUrl) throw new GateError('EF_MALFORMED_ACT', 'tools/call without a server identity');
  const { tool, binding } = bindTool(params.name, 'MCP', ctx);
  tool.tool_endpoint = server.serverUrl;
  const live = snapshotLiveArguments(params.arguments ?? {});
  const act = buildAct(
    {
      candidate_act_id: candidateActId('mcp', ctx.session_id, actRef ?? randomUUID()),
      act_type: binding.act_type ?? 'TOOL_CALL',
      tool,
      arguments_digest: live.digest,
      sink_type: 'TOOL_DISPATCH',
      destination: { destination_id: server.serverUrl },
    },
    ctx,
  );
  return { act, live };
}

/** The live arguments of a tools/call: absent arguments are the empty object. */
export function mcpArguments(params: McpToolsCallParams): Record<string, unknown> {
  return params.arguments ?? {};
}

/** An MCP `notifications/message` (logging) notification (structural; the SDK's `LoggingMessageNotification` fits). */
export interface McpMessageNotificationLike {
  method: string;
  params?: { level?: string; logger?: string; data?: unknown };
}

/**
 * The tool call a `notifications/message` asks the host to make, if it asks for one: its `data` is a
 * `tools/call` request (`{ method: 'tools/call', params: { name, arguments } }`) or a bare
 * `{ tool_call: { name, arguments } }`. Anything else is not a request to call a tool (null).
 */
export function notificationToolCall(n: McpMessageNotificationLike): McpToolsCallParams | null {
  if (n?.method !== 'notifications/message') return null;
  const data = asRecord(n.params?.data);
  const call = data?.method === 'tools/call' ? asRecord(data.params) : asRecord(data?.tool_call);
  if (!call || typeof call.name !== 'string' || !call.name) return null;
  const args = call.arguments;
  if (args !== undefined && asRecord(args) === undefined) return null;
  return { name: call.name, ...(args !== undefined ? { arguments: args as Record<string, unknown> } : {}) };
}

/**
 * A `notifications/message` that asks the host to call a tool → the same act as a `tools/call`
 * (Tool-Use Binding draft, MCP mapping: "A notifications/message that asks the host to call a tool
 * is the same map if the host would invoke"). The instruction came from the server, not from the
 * user: its provenance is `tool_output` with the server as the source, so the provenance rules
 * apply (an injected send is refused, a high-consequence call goes to a person). A notification
 * that asks for no tool call is refused (EF_MALFORMED_ACT).
 */
export function mapMcpNotification(
  n: McpMessageNotificationLike,
  server: McpServerIdentity,
  ctx: ActContext,
  actRef?: string,
): AgentCandidateAct {
  return mcpNotificationCall(n, server, ctx, actRef).act;
}

/** The map step of `mapMcpNotification`: the act and the snapshot of the arguments it digests. */
export function mcpNotificationCall(
  n: McpMessageNotificationLike,
  server: McpServerIdentity,
  ctx: ActContext,
  actRef?: string,
): MappedCall<Record<string, unknown>> {
  const call = notificationToolCall(n);
  if (!call) throw new GateError('EF_MALFORMED_ACT', 'the notification asks for no tool call');
  return mcpToolsCallCall(
    call,
    server,
    { ...ctx, instruction_provenance: { source_type: 'tool_output', source_ref: server.serverUrl } },
    actRef,
  );
}
