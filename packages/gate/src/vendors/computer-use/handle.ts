import { type EnforceDecision, hostErrorObject } from '../../errors.js';
import {
  dispatchMapped,
  forCall,
  type MapContext,
  readLiveState,
  resolveActContext,
  type ToolCallOutcome,
} from '../../host/dispatch-mapped.js';
import {
  type ComputerCallItemLike,
  type ComputerUseLiveArgs,
  computerCallCall,
  type LiveBrowserState,
  OPENAI_COMPUTER_TOOL,
} from './map.js';

/** The computer-use controller: the sink that turns an allowed action into browser/OS events. */
export interface ComputerController {
  /** The live page state, read immediately before the action (URL, the form a click would submit). */
  liveState(item: ComputerCallItemLike): Promise<LiveBrowserState>;
  /** Perform the model's action object (called only after enforce allowed it, with the digested copy). */
  perform(action: unknown): Promise<void>;
  /** A screenshot for the `computer_call_output`, as an image URL (a `data:` URL). */
  screenshot(): Promise<string>;
}

/** A Responses `computer_call_output` input item (structural; `ResponseInputItem.ComputerCallOutput` accepts it). */
export interface ComputerCallOutputItem {
  type: 'computer_call_output';
  call_id: string;
  output: { type: 'computer_screenshot'; image_url: string };
}

/** The host error object as a developer message: a `computer_call_output` can only carry a screenshot. */
export interface DenyMessageItem {
  type: 'message';
  role: 'developer';
  content: string;
}

/**
 * One OpenAI Responses `computer_call` through the gate (Tool-Use Binding draft, computer use): read
 * the live state, map, enforce, and only on allow perform the action. The reply is the
 * `computer_call_output` with a fresh screenshot (the model must see the page as it is), and on a
 * deny also a developer message carrying the host error object, so the model sees the EF code.
 * An item with `pending_safety_checks` (the model flagged malicious instructions, an irrelevant or a
 * sensitive domain) is refused before anything is read or done (EF_INSTRUCTION_PROVENANCE_FAILURE),
 * and its checks are never acknowledged here: the draft asks to "escalate or deny", and a hot
 * envelope must not clear the model's own warning. A host that proceeds shows the checks to a person
 * and sends their acknowledgement itself.
 */
export async function handleResponsesComputerCall(
  item: ComputerCallItemLike,
  controller: ComputerController,
  ctx: MapContext,
): Promise<{ outcome: ToolCallOutcome; input: Array<ComputerCallOutputItem | DenyMessageItem> }> {
  const block = { id: item.call_id, name: OPENAI_COMPUTER_TOOL };
  const actCtx = await resolveActContext(ctx);
  let outcome: ToolCallOutcome;
  let toolError: unknown;
  if ('allow' in actCtx) outcome = { ...block, decision: actCtx, invoked: false };
  else if (item.pending_safety_checks?.length)
    outcome = { ...block, decision: { allow: false, code: 'EF_INSTRUCTION_PROVENANCE_FAILURE' }, invoked: false };
  else {
    const { live, liveError } = await readLiveState(() => controller.liveState(item));
    const r = await dispatchMapped(
      ctx,
      block,
      () => {
        if (liveError || !live) throw liveError;
        return computerCallCall(item, live, forCall(actCtx, ctx, block.name, item.action));
      },
      async (args: ComputerUseLiveArgs) => controller.perform(args.input),
      true,
    );
    outcome = r.outcome;
    toolError = r.toolError;
  }
  if (toolError !== undefined) throw toolError;
  const output: ComputerCallOutputItem = {
    type: 'computer_call_output',
    call_id: item.call_id,
    output: { type: 'computer_screenshot', image_url: await controller.screenshot() },
  };
  return { outcome, input: outcome.invoked ? [output] : [output, denyMessage(item.call_id, outcome.decision)] };
}

function denyMessage(callId: string, decision: EnforceDecision): DenyMessageItem {
  return { type: 'message', role: 'developer', content: JSON.stringify({ call_id: callId, ...hostErrorObject(decision) }) };
}
