/**
 * Frameworks that invoke tools themselves (Tool-Use Binding draft: "hook before the tool call").
 * Each adapter turns the framework's tool execution into a host-side call through the gate
 * (`dispatchHostCall`): the act id is the framework's tool call id, the tool runs only after
 * enforce allowed it, with the frozen arguments that were digested, and a deny reaches the model
 * as the draft's host error object. Adapters are structural: the gate does not depend on any
 * framework package; the shapes below are the frameworks' own (checked in the tests against the
 * real SDKs).
 */

import { type EnforceDecision, hostErrorObject } from '../errors.js';
import { parseIJson } from '../ijson.js';
import type { ActIdSource } from '../mappers/context.js';
import type { MapContext } from './context.js';
import { dispatchHostCall, type HostCallResult, resultOrThrow } from './gated-call.js';
import { dispatchMcpToolsCall, mcpDenyResult } from './mcp.js';

/** Await a tool output; a streaming tool (async iterable) counts by its final value, as the framework does. */
async function finalOutput(out: unknown): Promise<unknown> {
  const value = await out;
  if (value !== null && typeof value === 'object' && Symbol.asyncIterator in value) {
    let last: unknown;
    for await (const v of value as AsyncIterable<unknown>) last = v;
    return last;
  }
  return value;
}

function runThroughGate(
  ctx: MapContext,
  source: ActIdSource,
  name: string,
  callId: string,
  input: unknown,
  execute: (input: never) => unknown,
): Promise<HostCallResult<unknown>> {
  return dispatchHostCall(
    ctx,
    { source, id: callId, name, args: input, act_type: 'TOOL_CALL', tool_protocol: 'LOCAL_FUNCTION' },
    async (live) => finalOutput(execute(live as never)),
  );
}

/** What the adapter uses of a Vercel AI SDK tool (`Tool` from `ai` 6): its optional `execute`. */
export interface AiSdkToolLike {
  execute?: (input: never, options: { toolCallId: string }) => unknown;
}

/**
 * Gate a Vercel AI SDK `tools` record (`generateText`, `streamText`, `ToolLoopAgent`): each
 * `execute` runs through the gate under the SDK's `toolCallId`. A deny rejects the execution with
 * `GateDenied`, which the SDK reports to the model as a tool error carrying the EF code. Tools
 * without `execute` (executed by the client) are returned as they are.
 */
export function gateAiSdkTools<T extends Record<string, object>>(tools: T, context: MapContext): T {
  const out: Record<string, object> = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute = (t as AiSdkToolLike).execute;
    out[name] = execute
      ? {
          ...t,
          execute: ((input: unknown, options: { toolCallId: string }) =>
            runThroughGate(context, 'ai-sdk', name, options.toolCallId, input, (live) => execute(live, options)).then(
              resultOrThrow,
            )) as AiSdkToolLike['execute'],
        }
      : t;
  }
  return out as T;
}

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
      const r = await runThroughGate(context, 'openai-agents', tool.name, callId, args, (live) =>
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

/** A Claude Agent SDK hook input (structural: every member of the SDK's `HookInput` fits; `PreToolUse` carries the tool fields). */
export interface ClaudePreToolUseInput {
  hook_event_name: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  mcp_server?: { name: string; source: string };
}

/** The hook's answer (structural: a `SyncHookJSONOutput` with a PreToolUse `hookSpecificOutput`). */
export interface ClaudePreToolUseOutput {
  continue?: boolean;
  hookSpecificOutput?: { hookEventName: 'PreToolUse'; permissionDecision: 'deny'; permissionDecisionReason: string };
}

/**
 * A Claude Agent SDK `PreToolUse` hook callback (Tool-Use Binding draft: "hook before the tool call").
 * Claude Code runs the tool itself after the hook, so the hook is the sink: each tool_use becomes an
 * act under its `tool_use_id`, enforce consumes its authority, and the hook hands the call back to
 * the executor only when this very invocation consumed it (the journal records the hand-over as the
 * invoke; a repeated `tool_use_id` is denied, never handed over twice). A deny answers
 * `permissionDecision: 'deny'` with the host error object as the reason, which the model sees.
 * Any other hook event passes. Register it with `claudeAgentHooks` (which sets `onFailure: 'block'`,
 * so a failing hook blocks the tool instead of letting it run).
 */
export function claudePreToolUseHook(context: MapContext) {
  return async (input: ClaudePreToolUseInput, toolUseId: string | undefined): Promise<ClaudePreToolUseOutput> => {
    if (input.hook_event_name !== 'PreToolUse') return {};
    const deny = (decision: EnforceDecision): ClaudePreToolUseOutput => ({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: JSON.stringify(hostErrorObject(decision)),
      },
    });
    const id = input.tool_use_id || toolUseId;
    if (!id || typeof input.tool_name !== 'string') return deny({ allow: false, code: 'EF_MALFORMED_ACT' });
    const server = input.mcp_server ? `claude-mcp://${input.mcp_server.source}/${input.mcp_server.name}` : undefined;
    try {
      const r = await dispatchHostCall(
        context,
        {
          source: 'claude-agent',
          id,
          name: input.tool_name,
          args: input.tool_input ?? {},
          act_type: 'TOOL_CALL',
          tool_protocol: server ? 'MCP' : 'ANTHROPIC_TOOL_USE',
          ...(server ? { tool_endpoint: server, destination: { destination_id: server } } : {}),
        },
        async () => ({ handed_to: 'claude-agent-executor' }),
      );
      return r.outcome.invoked ? {} : deny(r.outcome.decision.allow ? { allow: false, code: 'EF_005' } : r.outcome.decision);
    } catch {
      // The hook never throws: a Claude Code that predates `onFailure` lets the tool run after a
      // failed hook, so a failure here must answer deny itself (fail closed).
      return deny({ allow: false, code: 'EF_FAIL_CLOSED' });
    }
  };
}

/** The `hooks` option for the Claude Agent SDK's `query()`: the gate on every PreToolUse, failing closed. */
export function claudeAgentHooks(context: MapContext) {
  return { PreToolUse: [{ hooks: [claudePreToolUseHook(context)], onFailure: 'block' as const }] };
}
