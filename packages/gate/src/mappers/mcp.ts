import { randomUUID } from 'node:crypto';
import type { AgentCandidateAct } from '../act.js';
import { digestArguments } from '../act.js';
import { GateError } from '../errors.js';
import { type ActContext, bindTool, buildAct, candidateActId } from './context.js';

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
  if (typeof params?.name !== 'string' || !params.name) throw new GateError('EF_MALFORMED_ACT', 'tools/call without a tool name');
  if (!server.serverUrl) throw new GateError('EF_MALFORMED_ACT', 'tools/call without a server identity');
  const { tool, binding } = bindTool(params.name, 'MCP', ctx);
  tool.tool_endpoint = server.serverUrl;
  return buildAct(
    {
      candidate_act_id: candidateActId('mcp', ctx.session_id, actRef ?? randomUUID()),
      act_type: binding.act_type ?? 'TOOL_CALL',
      tool,
      arguments_digest: digestArguments(mcpArguments(params)),
      sink_type: 'TOOL_DISPATCH',
      destination: { destination_id: server.serverUrl },
    },
    ctx,
  );
}

/** The live arguments of a tools/call: absent arguments are the empty object. */
export function mcpArguments(params: McpToolsCallParams): Record<string, unknown> {
  return params.arguments ?? {};
}
