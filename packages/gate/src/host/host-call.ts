/**
 * One host-side call through the gate, for everything that is not a vendor's tool block: a
 * framework's tool execution, an HTTP request, a payment-provider call, a memory write. The draft
 * asks for the same act wherever a consequential effect starts ("hook before the tool call or wrap
 * at the HTTP client where a framework gives no hook"; "memory writes go through enforce() as
 * MEMORY_WRITE"; "a PaymentCandidateAct … MUST also be enforced before the PSP SDK"). The act is
 * built by the same `buildAct` the vendor mappers use and dispatched by the same `dispatchMapped`.
 */
import type { ActDestination, ActType, ToolProtocol } from '../act.js';
import { type LiveArguments, snapshotLiveArguments } from '../act.js';
import type { DispatchGrant } from '../dispatch.js';
import { type EnforceDecision, GateError, hostErrorObject } from '../errors.js';
import { type ActIdSource, buildAct, candidateActId, ownEntry } from './act-context.js';
import { denyFrom, dispatchMapped, forCall, type MapContext, resolveActContext, type ToolCallOutcome } from './dispatch-mapped.js';

/** What the gate needs to know about one host-side call before it may run. */
export interface HostCall<A> {
  source: ActIdSource;
  /** The caller's id for this call (a framework's tool call id, an idempotency key): part of the candidate act id. */
  id: string;
  /** tool_id (and function_id unless `function_id` is given). */
  name: string;
  /** The live arguments: digested, and what `invoke` receives (frozen). */
  args: A;
  act_type: ActType;
  tool_protocol: ToolProtocol;
  function_id?: string;
  tool_endpoint?: string;
  destination?: ActDestination;
}

export interface HostCallResult<T> {
  outcome: ToolCallOutcome;
  result?: T;
  /** The tool's own error, when it ran and threw. */
  toolError?: unknown;
}

/**
 * Map, enforce and (only on allow) invoke one host-side call. Never throws for a deny: the outcome
 * carries the decision; `invoke` is called at most once, with the frozen copy of `args` that was digested.
 * The host's tool bindings (`ctx.tools[name]`) override the destination and endpoint given here.
 */
export async function dispatchHostCall<A, T>(
  ctx: MapContext,
  call: HostCall<A>,
  invoke: (args: A, grant: DispatchGrant) => Promise<T>,
): Promise<HostCallResult<T>> {
  const block = { id: call.id, name: call.name };
  // Snapshot once, before any await: the caller owns `call.args` and may change it (or a getter in
  // it may answer differently) while the gate decides; the policy, the digest and invoke all see
  // this one copy (issue 36 defect 15).
  let live: LiveArguments<A>;
  try {
    live = snapshotLiveArguments(call.args);
  } catch (e) {
    return { outcome: { ...block, decision: denyFrom(e), invoked: false } };
  }
  const actCtx = await resolveActContext(ctx);
  if ('allow' in actCtx) return { outcome: { ...block, decision: actCtx, invoked: false } };
  const binding = ownEntry(ctx.tools, call.name) ?? {};
  const r = await dispatchMapped(
    ctx,
    block,
    () => {
      const c = forCall(actCtx, ctx, call.name, live.args);
      const endpoint = binding.tool_endpoint ?? call.tool_endpoint;
      const destination = binding.destination ?? call.destination;
      const act = buildAct(
        {
          candidate_act_id: candidateActId(call.source, ctx.session_id, call.id),
          act_type: binding.act_type ?? call.act_type,
          tool: {
            tool_id: call.name,
            function_id: binding.function_id ?? call.function_id ?? call.name,
            tool_protocol: binding.tool_protocol ?? call.tool_protocol,
            ...(endpoint ? { tool_endpoint: endpoint } : {}),
          },
          arguments_digest: live.digest,
          sink_type: 'TOOL_DISPATCH',
          ...(destination ? { destination } : {}),
        },
        c,
      );
      return { act, live };
    },
    invoke,
    true,
  );
  return r as HostCallResult<T>;
}

/**
 * The error an adapter standing in for a tool, an SDK method or a framework's tool execution rejects
 * with on a deny: a `GateError` with the deny's registry code, the candidate act id (never the
 * arguments) and, as its message, the draft's host error object, so a framework that shows the
 * model the error text shows it the EF code.
 */
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

/** The result of an allowed call, the tool's own error rethrown, or a `GateDenied`: never a silent success on a deny. */
export function resultOrThrow<T>(r: HostCallResult<T>): T {
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

/**
 * A framework's own tool execution (AI SDK `execute`, Agents SDK `invoke`) as a host-side call: a
 * TOOL_CALL act under the framework's tool call id; `execute` runs only on allow, with the frozen
 * arguments that were digested.
 */
export function runFrameworkTool(
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
