import { asRecord, type Clock, systemClock } from '@vrpkit/core';
import type {
  ActAgent,
  ActPurpose,
  AgentCandidateAct,
  ConsequenceClass,
  InitiatingPrincipal,
  InstructionProvenance,
  LiveArguments,
  PolicyState,
} from '../act.js';
import type { DispatchGrant } from '../dispatch.js';
import { type EnforceDecision, GateError, isEfCode } from '../errors.js';
import type { LiveBrowserState } from '../vendors/computer-use/map.js';
import { type ActContext, type ClassifyInput, type MappedCall, ownEntry, type ToolBinding } from './act-context.js';

/** What the adapters need from the Gate (the ENFORCE half of packages/gate; `Gate` satisfies it). */
export interface DispatchGate {
  readonly sinkId: string;
  policyState(): Promise<PolicyState>;
  classify(tool: ClassifyInput): ConsequenceClass;
  /**
   * invoke receives the frozen copy of `liveArgs` that enforce digested (Gate.dispatch); a
   * `LiveArguments` snapshot is not digested again. An escalated outcome may carry `resume()`.
   */
  dispatch<A, T>(
    act: AgentCandidateAct,
    liveArgs: A | LiveArguments<A>,
    invoke: (args: A, grant: DispatchGrant) => Promise<T>,
  ): Promise<GateRun<T>>;
}

/** What a dispatch answers (Gate.dispatch's `DispatchOutcome`, as the adapters use it). */
export interface GateRun<T> {
  decision: EnforceDecision;
  invoked: boolean;
  result?: T;
  resume?: () => Promise<GateRun<T>>;
}

/** The host loop's context for one model message. */
export interface MapContext {
  gate: DispatchGate;
  session_id: string;
  principal: InitiatingPrincipal;
  agent: ActAgent;
  purpose: ActPurpose;
  /** Where the instruction this message follows came from (e.g. `retrieval` after a tool read a web page or an email). */
  instruction_provenance?: InstructionProvenance;
  /**
   * Per-call provenance, when the host can tell better than per message (Tool-Use Binding draft, T-A: a recipient
   * that is not in the user's turn came from somewhere else). Overrides `instruction_provenance`.
   * It sees the arguments in-process only; nothing it receives is logged.
   */
  provenanceOf?: (call: { name: string; args: unknown }) => InstructionProvenance | undefined;
  /** The host loop's clock (default `systemClock`). */
  clock?: Clock;
  tools?: Readonly<Record<string, ToolBinding>>;
  act_ttl_ms?: number;
}

/** A host tool implementation: receives the live (already checked) arguments. */
export type ToolFunction = (args: never) => unknown;
export type ToolTable = Readonly<Record<string, ToolFunction>>;

/** The host function a model-chosen name selects: an own entry that is a function, never an inherited name. */
export function toolFor(tools: ToolTable, name: string): ((args: unknown) => unknown) | undefined {
  const fn = ownEntry(tools, name);
  return typeof fn === 'function' ? (fn as (args: unknown) => unknown) : undefined;
}

/** What happened to one tool block: never the raw arguments (Tool-Use Binding draft, security considerations: logs hold digests). */
export interface ToolCallOutcome {
  /** The vendor block id (tool_use id, call id). */
  id: string;
  name: string;
  candidate_act_id?: string;
  arguments_digest?: string;
  decision: EnforceDecision;
  invoked: boolean;
}

/**
 * Resolve the pure mappers' context from the Gate once per model message: the epochs, the
 * gate's own sink id and its classifier. A failure here denies every block of the message
 * (Tool-Use Binding draft, enforce() contract MUST 5: "never return allow=true on timeout or uncertain epoch").
 */
export async function resolveActContext(ctx: MapContext): Promise<ActContext | EnforceDecision> {
  let policy_state: PolicyState;
  try {
    policy_state = await ctx.gate.policyState();
  } catch (e) {
    return denyFrom(e);
  }
  const out: ActContext = {
    session_id: ctx.session_id,
    principal: ctx.principal,
    agent: ctx.agent,
    purpose: ctx.purpose,
    policy_state,
    sink_id: ctx.gate.sinkId,
    classify: (tool) => ctx.gate.classify(tool),
    now: (ctx.clock ?? systemClock).now(),
  };
  if (ctx.instruction_provenance) out.instruction_provenance = ctx.instruction_provenance;
  if (ctx.tools) out.tools = ctx.tools;
  if (ctx.act_ttl_ms !== undefined) out.act_ttl_ms = ctx.act_ttl_ms;
  return out;
}

/** The context for one call: the message's, with the host's per-call provenance when it has one. */
export function forCall(actCtx: ActContext, ctx: MapContext, name: string, args: unknown): ActContext {
  const provenance = ctx.provenanceOf?.({ name, args });
  return provenance ? { ...actCtx, instruction_provenance: provenance } : actCtx;
}

/**
 * The live browser state, read by the controller right before a computer-use action; a controller
 * that cannot read the page must not act on narration alone (Tool-Use Binding draft, computer use),
 * so a failed read becomes the error the mapping raises (EF_LIVE_STATE_UNREADABLE unless it is a GateError).
 */
export async function readLiveState(read: () => Promise<LiveBrowserState>): Promise<{ live?: LiveBrowserState; liveError?: GateError }> {
  try {
    return { live: await read() };
  } catch (e) {
    return { liveError: e instanceof GateError ? e : new GateError('EF_LIVE_STATE_UNREADABLE') };
  }
}

/** A deny decision for an error raised before or instead of enforce: its EF code, or fail closed. */
export function denyFrom(e: unknown): EnforceDecision {
  if (e instanceof GateError || (e instanceof Error && isEfCode(asRecord(e)?.code))) {
    return { allow: false, code: (e as GateError).code, message: e.message };
  }
  return { allow: false, code: 'EF_FAIL_CLOSED', message: 'the gate could not decide' };
}

/** One block's result through the gate; `resume` when it waits for a person (EF_APPROVAL_REQUIRED). */
export interface MappedOutcome {
  outcome: ToolCallOutcome;
  result?: unknown;
  toolError?: unknown;
  resume?: () => Promise<MappedOutcome>;
}

/**
 * The one gated path from a mapped act to the host's function (Tool-Use Binding draft, informative
 * pseudo-code: enforce, then invoke, else error): map once, then the gate's dispatch (validate,
 * authorize, enforce, invoke) with the snapshot the act was mapped from.
 */
export async function dispatchMapped<A>(
  ctx: MapContext,
  block: { id: string; name: string },
  map: () => MappedCall<A>,
  invoke: (liveArgs: A, grant: DispatchGrant) => Promise<unknown>,
  hasTool: boolean,
): Promise<MappedOutcome> {
  let mapped: MappedCall<A>;
  try {
    mapped = map();
  } catch (e) {
    return { outcome: { id: block.id, name: block.name, decision: denyFrom(e), invoked: false } };
  }
  const base = {
    id: block.id,
    name: block.name,
    candidate_act_id: mapped.act.candidate_act_id,
    arguments_digest: mapped.live.digest.value,
  };
  // A name the host has no function for can never be authorized to run.
  if (!hasTool) return { outcome: { ...base, decision: { allow: false, code: 'EF_NOT_AUTHORIZED' }, invoked: false } };
  // The tool runs with the frozen copy dispatch digested, never with the caller's object. Its own
  // error is noted here (also when it runs on a resumption), so it is reported as the tool's.
  const toolRun: ToolRun = { failed: false, error: undefined };
  const tool = async (args: A, grant: DispatchGrant) => {
    try {
      return await invoke(args, grant);
    } catch (e) {
      toolRun.failed = true;
      toolRun.error = e;
      throw e;
    }
  };
  return reported(base, () => ctx.gate.dispatch(mapped.act, mapped.live, tool), toolRun);
}

interface ToolRun {
  failed: boolean;
  error: unknown;
}

/**
 * Run one dispatch (or its resumption) and report it: the tool's own error after an allow is
 * reported as such (it was invoked), never as a deny.
 */
async function reported(
  base: Omit<ToolCallOutcome, 'decision' | 'invoked'>,
  run: () => Promise<GateRun<unknown>>,
  toolRun: ToolRun,
): Promise<MappedOutcome> {
  try {
    const r = await run();
    const resume = r.resume;
    return {
      outcome: { ...base, decision: r.decision, invoked: r.invoked },
      result: r.result,
      ...(resume ? { resume: () => reported(base, resume, toolRun) } : {}),
    };
  } catch (e) {
    if (toolRun.failed) return { outcome: { ...base, decision: { allow: true }, invoked: true }, toolError: toolRun.error };
    return { outcome: { ...base, decision: denyFrom(e), invoked: false } };
  }
}
