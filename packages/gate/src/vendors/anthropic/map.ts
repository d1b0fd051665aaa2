import { type AgentCandidateAct, snapshotLiveArguments } from '../../act.js';
import { GateError } from '../../errors.js';
import { type ActContext, bindTool, buildAct, candidateActId, type MappedCall, ownEntry } from '../../host/act-context.js';
import { computerUseActionCall, type LiveBrowserState } from '../computer-use/map.js';

/** The fields of an Anthropic `ToolUseBlock` the mapping reads (structural; the SDK type fits). */
export interface ToolUseBlockLike {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** `computer_2025xxxx` tools (and the conventional tool name `computer`) are computer use. */
const COMPUTER_TOOL = /^computer(?:_\d{8})?$/;

export function isComputerUseTool(name: string, ctx: ActContext): boolean {
  const kind = ownEntry(ctx.tools, name)?.act_type;
  return kind ? kind === 'COMPUTER_USE' : COMPUTER_TOOL.test(name);
}

/**
 * Anthropic `tool_use` → AgentCandidateAct (Tool-Use Binding draft, Anthropic mapping): type=tool_use → TOOL_CALL;
 * id → candidate_act_id; name → tool_id and function_id; input → canonicalized into
 * arguments_digest; computer tools → COMPUTER_USE at the BROWSER_CONTROLLER sink, which needs
 * the live browser state (without it the action is refused).
 */
export function mapToolUse(block: ToolUseBlockLike, ctx: ActContext, live?: LiveBrowserState): AgentCandidateAct {
  return toolUseCall(block, ctx, live).act;
}

/**
 * The map step of `mapToolUse`: the act and the snapshot its digest covers — the input, or for a
 * computer-use action the input inside the live browser state.
 */
export function toolUseCall(block: ToolUseBlockLike, ctx: ActContext, live?: LiveBrowserState): MappedCall<unknown> {
  if (block.type !== 'tool_use' || typeof block.id !== 'string' || typeof block.name !== 'string' || !block.id || !block.name) {
    throw new GateError('EF_MALFORMED_ACT', 'not a tool_use block with an id and a name');
  }
  if (isComputerUseTool(block.name, ctx)) {
    if (!live) throw new GateError('EF_LIVE_STATE_UNREADABLE', 'a computer-use action needs the live browser state');
    return computerUseActionCall(block, live, ctx);
  }
  const { tool, binding } = bindTool(block.name, 'ANTHROPIC_TOOL_USE', ctx);
  const args = snapshotLiveArguments(block.input);
  const act = buildAct(
    {
      candidate_act_id: candidateActId('anthropic', ctx.session_id, block.id),
      act_type: binding.act_type ?? 'TOOL_CALL',
      tool,
      arguments_digest: args.digest,
      sink_type: 'TOOL_DISPATCH',
      ...(binding.destination ? { destination: binding.destination } : {}),
    },
    ctx,
  );
  return { act, live: args };
}
