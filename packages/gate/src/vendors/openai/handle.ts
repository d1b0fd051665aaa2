import { type AgentCandidateAct, type LiveArguments, snapshotLiveArguments } from '../../act.js';
import { type EnforceDecision, GateError, hostErrorObject } from '../../errors.js';
import {
  dispatchMapped,
  forCall,
  type MapContext,
  resolveActContext,
  type ToolCallOutcome,
  type ToolTable,
  toolFor,
} from '../../host/dispatch-mapped.js';
import { replyFor } from '../../host/replies.js';
import { parseIJson } from '../../ijson.js';
import { mapResponsesFunctionCall, mapToolCall, type ResponsesFunctionCallLike, type ToolCallLike } from './map.js';

/** A Chat Completions `tool` message (structural; `ChatCompletionToolMessageParam` accepts it). */
export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** A Responses `function_call_output` input item (structural; `ResponseInputItem.FunctionCallOutput` accepts it). */
export interface FunctionCallOutputItem {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/** The host error object in Chat Completions' shape: a `tool` message for the `tool_calls[].id`. */
export function openAIDenyMessage(toolCallId: string, decision: EnforceDecision): ToolMessage {
  return { role: 'tool', tool_call_id: toolCallId, content: JSON.stringify(hostErrorObject(decision)) };
}

/** The host error object in the Responses API's shape: a `function_call_output` input item for the `call_id`. */
export function responsesDenyOutput(callId: string, decision: EnforceDecision): FunctionCallOutputItem {
  return { type: 'function_call_output', call_id: callId, output: JSON.stringify(hostErrorObject(decision)) };
}

type ResolvedContext = Exclude<Awaited<ReturnType<typeof resolveActContext>>, { allow: boolean }>;

interface Call {
  id: string;
  name: string;
  arguments: string;
  /** `args`: the snapshot of the parsed arguments (the act takes its digest). */
  toAct(args: LiveArguments<unknown>, actCtx: ResolvedContext): AgentCandidateAct;
}

type CallResult = { call: Call; r: Awaited<ReturnType<typeof dispatchMapped>> };

/** The shared loop: parse each call's arguments as I-JSON, map, dispatch, and report one outcome per call. */
async function handleCalls(calls: readonly Call[], tools: ToolTable, ctx: MapContext): Promise<CallResult[]> {
  const out: CallResult[] = [];
  if (!calls.length) return out;
  const actCtx = await resolveActContext(ctx);
  for (const call of calls) {
    if ('allow' in actCtx) {
      out.push({ call, r: { outcome: { id: call.id, name: call.name, decision: actCtx, invoked: false } } });
      continue;
    }
    const fn = toolFor(tools, call.name);
    const r = await dispatchMapped(
      ctx,
      call,
      () => {
        // "Mapping MUST parse arguments as JSON, then canonicalize the object, then hash."
        const live = snapshotLiveArguments(parseIJson(call.arguments));
        return { act: call.toAct(live, forCall(actCtx, ctx, call.name, live.args)), live };
      },
      async (args) => fn?.(args),
      fn !== undefined,
    );
    out.push({ call, r });
  }
  return out;
}

/**
 * HANDLE_OPENAI_MESSAGE (Tool-Use Binding draft, informative pseudo-code) for Chat Completions: each `tool_calls[]` entry is
 * its own act ("A single ALLOW for the message MUST NOT authorize every call in the array");
 * returns one `tool` message per call, the real output on allow, the host error object on deny.
 */
export async function handleOpenAIMessage(
  msg: { tool_calls?: ReadonlyArray<ToolCallLike | { type: string; id: string }> | null },
  tools: ToolTable,
  ctx: MapContext,
): Promise<{ messages: ToolMessage[]; outcomes: ToolCallOutcome[] }> {
  const calls = (msg.tool_calls ?? []).map((c): Call => {
    if (c.type === 'function') {
      const fc = c as ToolCallLike;
      return {
        id: fc.id,
        name: fc.function.name,
        arguments: fc.function.arguments,
        toAct: (args, actCtx) => mapToolCall(fc, args, actCtx),
      };
    }
    // A custom (free-text) tool call has no JSON arguments to bind a digest to.
    return {
      id: c.id,
      name: (c as { custom?: { name?: string } }).custom?.name ?? c.type,
      // Nothing to parse: the act is refused when it is mapped.
      arguments: '{}',
      toAct: () => {
        throw new GateError('EF_MALFORMED_ACT', 'only function tool calls can be gated');
      },
    };
  });
  const results = await handleCalls(calls, tools, ctx);
  const messages = results.map(({ call, r }): ToolMessage => {
    const reply = replyFor(r);
    return 'text' in reply ? { role: 'tool', tool_call_id: call.id, content: reply.text } : openAIDenyMessage(call.id, reply.deny);
  });
  return { messages, outcomes: results.map(({ r }) => r.outcome) };
}

/**
 * The same for the Responses API: every `function_call` output item is its own act; returns
 * one `function_call_output` item per call (Tool-Use Binding draft, OpenAI mapping: "Responses API function_call items use the
 * same map"; the sink moment is "before executing function_call items").
 */
export async function handleResponsesOutput(
  output: ReadonlyArray<ResponsesFunctionCallLike | { type: string }>,
  tools: ToolTable,
  ctx: MapContext,
): Promise<{ items: FunctionCallOutputItem[]; outcomes: ToolCallOutcome[] }> {
  const calls = output
    .filter((o): o is ResponsesFunctionCallLike => o.type === 'function_call')
    .map(
      (item): Call => ({
        id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        toAct: (args, actCtx) => mapResponsesFunctionCall(item, args, actCtx),
      }),
    );
  const results = await handleCalls(calls, tools, ctx);
  const items = results.map(({ call, r }): FunctionCallOutputItem => {
    const reply = replyFor(r);
    return 'text' in reply
      ? { type: 'function_call_output', call_id: call.id, output: reply.text }
      : responsesDenyOutput(call.id, reply.deny);
  });
  return { items, outcomes: results.map(({ r }) => r.outcome) };
}
