import { asRecord } from '@vrpkit/core';
import { type AgentCandidateAct, snapshotLiveArguments } from '../../act.js';
import { GateError } from '../../errors.js';
import { type ActContext, bindTool, buildAct, candidateActId, type MappedCall } from '../../host/act-context.js';

/**
 * Computer use (Tool-Use Binding draft, computer use): each consequential action is its own act, the sink is
 * the controller that turns actions into OS/browser events, and a form submit binds a digest
 * over the LIVE page state the controller read — origin, destination URL, filled fields — never
 * over the model's narration of the click.
 */

/** A form the action would submit, as the controller read it from the live DOM. */
export interface LiveForm {
  /** The URL the form posts to, when known. */
  action_url: string | null;
  /** The filled fields, name → value. */
  fields: Readonly<Record<string, string>>;
}

/** The live browser state the controller reads immediately before sending the event. */
export interface LiveBrowserState {
  /** The page URL; its origin is bound into the digest and the destination. */
  url: string;
  /**
   * The form the action would submit; `'unreadable'` when the controller cannot read its
   * fields (then the action is refused; Tool-Use Binding draft, computer use: "MUST escalate or deny rather than click on
   * narration alone"); absent when the action submits nothing.
   */
  form?: LiveForm | 'unreadable';
}

/** The Anthropic computer tool block's input: `{ action, coordinate?, text?, … }`. */
export interface ComputerUseBlock {
  id: string;
  name: string;
  input: unknown;
}

/** The arguments a computer-use act is digested over: the model's action + the live page state. */
export interface ComputerUseLiveArgs {
  action: string;
  input: unknown;
  origin: string;
  url: string;
  form: { action_url: string | null; fields: Readonly<Record<string, string>> } | null;
}

function actionOf(input: unknown): string {
  const action = asRecord(input)?.action;
  if (typeof action !== 'string' || action === '') {
    throw new GateError('EF_MALFORMED_ACT', 'computer-use input has no action');
  }
  return action;
}

function originOf(url: string): string {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    throw new GateError('EF_LIVE_STATE_UNREADABLE', 'the live page URL is not a URL');
  }
  if (origin === 'null') throw new GateError('EF_LIVE_STATE_UNREADABLE', 'the live page has an opaque origin');
  return origin;
}

/**
 * The live arguments for a computer-use action: build them from the state read right before
 * the event, and pass them to `enforce` as `liveArgs`. A changed origin or field value changes
 * the digest (Tool-Use Binding draft, computer use: "Origin change MUST invalidate prior authority").
 */
export function computerUseLiveArgs(input: unknown, live: LiveBrowserState): ComputerUseLiveArgs {
  return liveArgsFor(actionOf(input), input, live);
}

function liveArgsFor(action: string, input: unknown, live: LiveBrowserState): ComputerUseLiveArgs {
  if (live.form === 'unreadable') throw new GateError('EF_LIVE_STATE_UNREADABLE');
  const form = live.form ? { action_url: live.form.action_url, fields: live.form.fields } : null;
  return { action, input, origin: originOf(live.url), url: live.url, form };
}

/**
 * Map one computer-use action to its own COMPUTER_USE act at the BROWSER_CONTROLLER sink. The
 * live origin enters the digested arguments, `tool.tool_endpoint` and `destination`, so an
 * authority issued on one origin fails destination match on another.
 */
export function mapComputerUseAction(block: ComputerUseBlock, live: LiveBrowserState, ctx: ActContext): AgentCandidateAct {
  return computerUseActionCall(block, live, ctx).act;
}

/** The map step of `mapComputerUseAction`: the act and the snapshot of its live arguments. */
export function computerUseActionCall(block: ComputerUseBlock, live: LiveBrowserState, ctx: ActContext): MappedCall<ComputerUseLiveArgs> {
  return mapComputerAction('computer', block.id, block.name, computerUseLiveArgs(block.input, live), ctx);
}

function mapComputerAction(
  source: 'computer' | 'computer-call',
  callId: string,
  toolName: string,
  liveArgs: ComputerUseLiveArgs,
  ctx: ActContext,
): MappedCall<ComputerUseLiveArgs> {
  const live = snapshotLiveArguments(liveArgs);
  const args = live.args;
  const { tool } = bindTool(toolName, 'BROWSER', ctx);
  tool.function_id = args.action;
  tool.tool_endpoint = args.origin;
  const act = buildAct(
    {
      candidate_act_id: candidateActId(source, ctx.session_id, callId),
      act_type: 'COMPUTER_USE',
      tool,
      arguments_digest: live.digest,
      sink_type: 'BROWSER_CONTROLLER',
      destination: { destination_id: args.origin, destination_url: args.form?.action_url ?? args.url },
    },
    ctx,
  );
  return { act, live };
}

/** An OpenAI Responses `computer_call` output item (structural; `ResponseComputerToolCall` fits). */
export interface ComputerCallItemLike {
  type: 'computer_call';
  id?: string;
  call_id: string;
  /** `{ type: 'click' | 'double_click' | 'drag' | 'keypress' | 'move' | 'screenshot' | 'scroll' | 'type' | 'wait', … }`. */
  action: unknown;
  pending_safety_checks?: ReadonlyArray<{ id: string; code?: string | null; message?: string | null }>;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

/** The tool id of OpenAI's computer tool (the item does not name it): `computer*` under the default classes. */
export const OPENAI_COMPUTER_TOOL = 'computer_use_preview';

/** The live arguments of an OpenAI `computer_call`: its action object inside the live page state, as for the Anthropic tool. */
export function computerCallLiveArgs(item: ComputerCallItemLike, live: LiveBrowserState): ComputerUseLiveArgs {
  const type = asRecord(item.action)?.type;
  if (typeof type !== 'string' || type === '') throw new GateError('EF_MALFORMED_ACT', 'computer_call without an action type');
  return liveArgsFor(type, item.action, live);
}

/**
 * OpenAI Responses `computer_call` → its own COMPUTER_USE act at the BROWSER_CONTROLLER sink, by the
 * same live-state rules as the Anthropic computer tool: `call_id` → candidate_act_id, `action.type` →
 * function_id, origin → endpoint and destination, digest over action + live state. An item that is
 * not completed is not a block yet (Tool-Use Binding draft, streaming). When the model raised
 * `pending_safety_checks` (malicious instructions, irrelevant or sensitive domain), the instruction's
 * provenance is `unknown`, so a consequential action goes to a person under the provenance rules.
 */
export function mapComputerCall(item: ComputerCallItemLike, live: LiveBrowserState, ctx: ActContext): AgentCandidateAct {
  return computerCallCall(item, live, ctx).act;
}

/** The map step of `mapComputerCall`: the act and the snapshot of its live arguments. */
export function computerCallCall(item: ComputerCallItemLike, live: LiveBrowserState, ctx: ActContext): MappedCall<ComputerUseLiveArgs> {
  if (item?.type !== 'computer_call' || typeof item.call_id !== 'string' || !item.call_id)
    throw new GateError('EF_MALFORMED_ACT', 'not a computer_call item with a call_id');
  if (item.status !== undefined && item.status !== 'completed')
    throw new GateError('EF_MALFORMED_ACT', 'computer_call item is not completed');
  const checks = item.pending_safety_checks ?? [];
  const c: ActContext = checks.length
    ? {
        ...ctx,
        instruction_provenance: {
          source_type: 'unknown',
          source_ref: `openai-safety-checks:${checks.map((x) => x.code ?? x.id).join(',')}`,
        },
      }
    : ctx;
  return mapComputerAction('computer-call', item.call_id, OPENAI_COMPUTER_TOOL, computerCallLiveArgs(item, live), c);
}
