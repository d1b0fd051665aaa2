/**
 * Frameworks that invoke tools themselves (Tool-Use Binding draft: "hook before the tool call").
 * Each adapter turns the framework's tool execution into a host-side call through the gate
 * (`dispatchHostCall`): the act id is the framework's tool call id, the tool runs only after
 * enforce allowed it, with the frozen arguments that were digested, and a deny reaches the model
 * as the draft's host error object. Adapters are structural: the gate does not depend on any
 * framework package; the shapes below are the frameworks' own (checked in the tests against the
 * real SDKs).
 */

import { type EnforceDecision, GateError, hostErrorObject } from '../errors.js';
import { parseIJson } from '../ijson.js';
import type { ActIdSource } from '../mappers/context.js';
import type { MapContext } from './context.js';
import { dispatchHostCall, type HostCallResult } from './gated-call.js';
import { dispatchMcpToolsCall, mcpDenyResult } from './mcp.js';

/** The error a framework's tool execution rejects with on a deny: its message is the host error object, so the model sees the EF code. */
export class GateDenied extends GateError {
  readonly decision: EnforceDecision;
  constructor(decision: EnforceDecision, candidateActId?: string) {
    const body = hostErrorObject(decision);
    super(body.error.code as GateError['code'], JSON.stringify(body), {
      invoked: false,
      ...(candidateActId ? { candidate_act_id: candidateActId } : {}),
    });
    this.decision = decision;
  }
}

/** The framework's value, or its own error, or a `GateDenied`: never a silent success on a deny. */
function settle<T>(r: HostCallResult<T>): T {
  if (r.toolError !== undefined) throw r.toolError;
  if (r.outcome.decision.allow || r.result !== undefined) return r.result as T;
  throw new GateDenied(r.outcome.decision, r.outcome.candidate_act_id);
}

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

/** A Vercel AI SDK tool (structural: `Tool` from `ai` 6 fits). */
export interface AiSdkToolLike {
  execute?: (input: never, options: { toolCallId: string }) => unknown;
}

/**
 * Gate a Vercel AI SDK `tools` record (`generateText`, `streamText`, `ToolLoopAgent`): each
 * `execute` runs through the gate under the SDK's `toolCallId`. A deny rejects the execution with
 * `GateDenied`, which the SDK reports to the model as a tool error carrying the EF code. Tools
 * without `execute` (executed by the client) are returned as they are.
 */
export function gateAiSdkTools<T extends Record<string, AiSdkToolLike>>(tools: T, context: MapContext): T {
  const out: Record<string, AiSdkToolLike> = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute = t.execute;
    out[name] = execute
      ? {
          ...t,
          execute: ((input: unknown, options: { toolCallId: string }) =>
            runThroughGate(context, 'ai-sdk', name, options.toolCallId, input, (live) => execute(live, options)).then(
              settle,
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
  invoke: (runContext: never, input: string, details?: { toolCall?: { callId?: string } }) => Promise<unknown>;
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
    invoke: async (runContext: never, input: string, details?: { toolCall?: { callId?: string } }) => {
      const deny = (decision: EnforceDecision) => JSON.stringify(hostErrorObject(decision));
      const callId = details?.toolCall?.callId;
      if (!callId) return deny({ allow: false, code: 'EF_MALFORMED_ACT' });
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
