/**
 * Vercel AI SDK (Tool-Use Binding draft: "hook before the tool call"): each tool's `execute` runs
 * through the gate as a host-side call under the SDK's tool call id. Structural: the gate does not
 * depend on the `ai` package; the shape is checked in the tests against the real SDK.
 */
import type { MapContext } from '../../host/dispatch-mapped.js';
import { resultOrThrow, runFrameworkTool } from '../../host/host-call.js';

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
            runFrameworkTool(context, 'ai-sdk', name, options.toolCallId, input, (live) => execute(live, options)).then(
              resultOrThrow,
            )) as AiSdkToolLike['execute'],
        }
      : t;
  }
  return out as T;
}
