import { type EnforceDecision, hostErrorObject } from '../../errors.js';
import {
  dispatchMapped,
  forCall,
  type MapContext,
  readLiveState,
  resolveActContext,
  type ToolCallOutcome,
  type ToolTable,
  toolFor,
} from '../../host/dispatch-mapped.js';
import { replyFor } from '../../host/replies.js';
import type { ComputerUseLiveArgs, LiveBrowserState } from '../computer-use/map.js';
import { isComputerUseTool, type ToolUseBlockLike, toolUseCall } from './map.js';

/** A `tool_result` block to send back (structural; the SDK's `ToolResultBlockParam` accepts it). */
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

export interface AnthropicHandleOptions {
  /**
   * For computer-use tools: read the live browser state (page URL, focused form) from the
   * driver immediately before the action. Without it, computer-use blocks are refused.
   */
  liveState?: (block: ToolUseBlockLike) => Promise<LiveBrowserState>;
}

/** The host error object in the Messages API's shape: a `tool_result` block with `is_error: true` for the `tool_use` id. */
export function anthropicDenyResult(toolUseId: string, decision: EnforceDecision) {
  return { type: 'tool_result' as const, tool_use_id: toolUseId, is_error: true, content: JSON.stringify(hostErrorObject(decision)) };
}

/**
 * HANDLE_ANTHROPIC_MESSAGE (Tool-Use Binding draft, informative pseudo-code): every `tool_use` block of an assistant message
 * is its own act, enforced separately (one allow never covers a sibling); on allow the host
 * function runs once and its result is appended; on deny a `tool_result` with `is_error: true`
 * carries the host error object and nothing runs. Returns the user turn to send next.
 */
export async function handleAnthropicMessage(
  msg: { content: ReadonlyArray<ToolUseBlockLike | { type: string }> },
  tools: ToolTable,
  ctx: MapContext,
  opts: AnthropicHandleOptions = {},
): Promise<{ message: { role: 'user'; content: ToolResultBlock[] }; outcomes: ToolCallOutcome[] }> {
  const blocks = msg.content.filter((b): b is ToolUseBlockLike => b.type === 'tool_use');
  const content: ToolResultBlock[] = [];
  const outcomes: ToolCallOutcome[] = [];
  if (!blocks.length) return { message: { role: 'user', content }, outcomes };
  const actCtx = await resolveActContext(ctx);
  for (const block of blocks) {
    let r: Awaited<ReturnType<typeof dispatchMapped>>;
    if ('allow' in actCtx) {
      r = { outcome: { id: block.id, name: block.name, decision: actCtx, invoked: false } };
    } else {
      const fn = toolFor(tools, block.name);
      const computer = isComputerUseTool(block.name, actCtx);
      // The live state is read per action, right before it (Tool-Use Binding draft, computer use: "Origin change MUST invalidate prior authority").
      const liveState = opts.liveState;
      const { live, liveError } = computer && liveState ? await readLiveState(() => liveState(block)) : {};
      r = await dispatchMapped(
        ctx,
        block,
        () => {
          if (liveError) throw liveError;
          return toolUseCall(block, forCall(actCtx, ctx, block.name, block.input), live);
        },
        // The function receives the frozen copy dispatch digested: for a computer-use action the
        // model's input inside the digested live state, else the input itself.
        async (args: unknown) => fn?.(live ? (args as ComputerUseLiveArgs).input : args),
        fn !== undefined,
      );
    }
    outcomes.push(r.outcome);
    const reply = replyFor(r);
    if ('deny' in reply) content.push(anthropicDenyResult(block.id, reply.deny));
    else content.push({ type: 'tool_result', tool_use_id: block.id, content: reply.text, ...(reply.isError ? { is_error: true } : {}) });
  }
  return { message: { role: 'user', content }, outcomes };
}
