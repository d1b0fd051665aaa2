import { type AgentCandidateAct, type LiveArguments, snapshotLiveArguments } from '../../act.js';
import { GateError } from '../../errors.js';
import { type ActContext, bindTool, buildAct, candidateActId } from '../../host/act-context.js';

/** An OpenAI Chat Completions `tool_calls[]` entry (structural; `ChatCompletionMessageFunctionToolCall` fits). */
export interface ToolCallLike {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** An OpenAI Responses `function_call` output item (structural; `ResponseFunctionToolCall` fits). */
export interface ResponsesFunctionCallLike {
  type: 'function_call';
  /** The output item id; never the act id (the call_id is what the function output answers). */
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

function mapFunctionCall(
  vendor: 'openai' | 'responses',
  callId: string,
  name: string,
  args: LiveArguments<unknown>,
  ctx: ActContext,
): AgentCandidateAct {
  if (typeof callId !== 'string' || typeof name !== 'string' || !callId || !name) {
    throw new GateError('EF_MALFORMED_ACT', 'tool call without an id and a function name');
  }
  const { tool, binding } = bindTool(name, 'OPENAI_TOOL_CALL', ctx);
  return buildAct(
    {
      // "Parallel index is not authority; each id is an act."
      candidate_act_id: candidateActId(vendor, ctx.session_id, callId),
      act_type: binding.act_type ?? 'TOOL_CALL',
      tool,
      arguments_digest: args.digest,
      sink_type: 'TOOL_DISPATCH',
      ...(binding.destination ? { destination: binding.destination } : {}),
    },
    ctx,
  );
}

/**
 * OpenAI Chat `tool_calls[]` entry → act: id → candidate_act_id; type=function → TOOL_CALL;
 * function.name → tool_id; the arguments PARSED with `parseIJson` ("parse arguments as JSON, then
 * canonicalize the object, then hash") → arguments_digest. `args` may be the `LiveArguments` snapshot
 * of them (the handler's map step): its digest is used as is.
 */
export function mapToolCall(call: ToolCallLike, args: unknown, ctx: ActContext): AgentCandidateAct {
  if (call.type !== 'function') throw new GateError('EF_MALFORMED_ACT', 'only function tool calls are mapped');
  return mapFunctionCall('openai', call.id, call.function?.name, snapshotLiveArguments(args), ctx);
}

/** OpenAI Responses `function_call` item → act, by the same map (Tool-Use Binding draft, OpenAI mapping: "Responses API function_call items use the same map"). */
export function mapResponsesFunctionCall(item: ResponsesFunctionCallLike, args: unknown, ctx: ActContext): AgentCandidateAct {
  if (item.type !== 'function_call') throw new GateError('EF_MALFORMED_ACT', 'not a function_call item');
  // A streamed item that is not finished is not a block yet (Tool-Use Binding draft, streaming).
  if (item.status !== undefined && item.status !== 'completed')
    throw new GateError('EF_MALFORMED_ACT', 'function_call item is not completed');
  return mapFunctionCall('responses', item.call_id, item.name, snapshotLiveArguments(args), ctx);
}
