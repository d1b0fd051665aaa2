/**
 * OpenAI Agents SDK (Tool-Use Binding draft: "hook before the tool call"): a function tool's
 * `invoke` and an MCP server's `callTool` run through the gate. Structural: the gate does not
 * depend on `@openai/agents`; the shapes are checked in the tests against the real SDK.
 */
import { type EnforceDecision, hostErrorObject } from '../../errors.js';
import type { MapContext } from '../../host/dispatch-mapped.js';
import { runFrameworkTool } from '../../host/host-call.js';
import { parseIJson } from '../../ijson.js';
import { dispatchMcpToolsCall, mcpDenyResult } from '../mcp/handle.js';

/** An OpenAI Agents SDK function tool (structural: `FunctionTool` from `@openai/agents` 0.14 fits). */
export interface AgentsFunctionToolLike {
  type: 'function';
  name: string;
  /** `details.toolCall.callId` is the model's call id (the SDK's `ToolCallDetails`). */
  invoke: (runContext: never, input: string, details?: never) => Promise<unknown>;
}

/**
 * Gate an OpenAI Agents SDK function tool: its `invoke` (the SDK's sink for function tools, called
 * with the model's JSON argument string) runs through the gate under the model's `callId`. The
 * arguments are parsed as I-JSON and digested; the tool receives the digested text. On a deny the
 * tool is not invoked and its output is the host error object (the draft's Responses mapping: a
 * `function_call_output` carrying the error), so the run goes on and the model sees the EF code.
 */
export function gateAgentsFunctionTool<T extends AgentsFunctionToolLike>(tool: T, context: MapContext): T {
  const invoke = tool.invoke.bind(tool);
  return {
    ...tool,
    invoke: async (runContext: never, input: string, details?: never) => {
      const deny = (decision: EnforceDecision) => JSON.stringify(hostErrorObject(decision));
      const callId = (details as { toolCall?: { callId?: unknown } } | undefined)?.toolCall?.callId;
      if (typeof callId !== 'string' || !callId) return deny({ allow: false, code: 'EF_MALFORMED_ACT' });
      let args: unknown;
      try {
        // "Mapping MUST parse arguments as JSON, then canonicalize the object, then hash."
        args = parseIJson(input);
      } catch {
        return deny({ allow: false, code: 'EF_MALFORMED_ARGUMENTS' });
      }
      const r = await runFrameworkTool(context, 'openai-agents', tool.name, callId, args, (live) =>
        invoke(runContext, JSON.stringify(live), details),
      );
      if (r.toolError !== undefined) throw r.toolError;
      return r.outcome.decision.allow || r.result !== undefined ? r.result : deny(r.outcome.decision);
    },
  };
}

/** An OpenAI Agents SDK MCP server (structural: `MCPServerStdio`, `MCPServerStreamableHttp` … fit). */
export interface AgentsMcpServerLike {
  readonly name: string;
  callTool(toolName: string, args: Record<string, unknown> | null, ...rest: never[]): Promise<unknown[]>;
  callToolResult?(toolName: string, args: Record<string, unknown> | null, ...rest: never[]): Promise<unknown>;
}

/**
 * Gate the MCP tools an OpenAI Agents SDK agent calls: every `callTool` / `callToolResult` of the
 * server object the agent holds runs through the gate as an MCP act bound to `serverUrl` (the
 * server the connection really reaches). On a deny no `tools/call` is sent and the agent receives
 * the MCP error result carrying the host error object. Listing tools passes through.
 */
export function gateAgentsMcpServer<S extends AgentsMcpServerLike>(server: S, opts: { serverUrl: string; context: MapContext }): S {
  const identity = { serverUrl: opts.serverUrl };
  const gated =
    <R>(call: (name: string, args: Record<string, unknown> | null, ...rest: never[]) => Promise<R>, onDeny: (d: EnforceDecision) => R) =>
    async (name: string, args: Record<string, unknown> | null, ...rest: never[]): Promise<R> => {
      const r = await dispatchMcpToolsCall(opts.context, identity, undefined, { name, ...(args ? { arguments: args } : {}) }, (live) =>
        call.call(server, name, args === null ? null : live, ...rest),
      );
      if (r.toolError !== undefined) throw r.toolError;
      return r.outcome.decision.allow || r.result !== undefined ? (r.result as R) : onDeny(r.outcome.decision);
    };
  const overrides: Record<PropertyKey, unknown> = {
    callTool: gated(server.callTool, (d) => Object.assign([...mcpDenyResult(d).content], { isError: true })),
    ...(server.callToolResult ? { callToolResult: gated(server.callToolResult, (d) => mcpDenyResult(d)) } : {}),
  };
  return new Proxy(server, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop];
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
