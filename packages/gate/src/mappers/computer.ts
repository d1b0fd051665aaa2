import { asRecord } from '@vrpkit/core';
import type { AgentCandidateAct } from '../act.js';
import { digestArguments } from '../act.js';
import { GateError } from '../errors.js';
import { type ActContext, bindTool, buildAct, candidateActId } from './context.js';

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
  const action = actionOf(input);
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
  const args = computerUseLiveArgs(block.input, live);
  const { tool } = bindTool(block.name, 'BROWSER', ctx);
  tool.function_id = args.action;
  tool.tool_endpoint = args.origin;
  return buildAct(
    {
      candidate_act_id: candidateActId('computer', ctx.session_id, block.id),
      act_type: 'COMPUTER_USE',
      tool,
      arguments_digest: digestArguments(args),
      sink_type: 'BROWSER_CONTROLLER',
      destination: { destination_id: args.origin, destination_url: args.form?.action_url ?? args.url },
    },
    ctx,
  );
}
