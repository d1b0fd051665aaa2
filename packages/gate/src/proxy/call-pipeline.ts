/**
 * One `tools/call` through the proxy, in order: name check → the downstream is there → the tool's
 * current definition → pin check and epochs → map (a private snapshot of the arguments, once) →
 * the gate's dispatch (validate, authorize/escalate, enforce, invoke: the downstream call with
 * exactly the snapshot) → on an escalation, the wait for a person and the pending act's
 * `resume()`. A deny never reaches the downstream.
 */
import { randomUUID } from 'node:crypto';
import {
  type CallToolRequest,
  type CallToolResult,
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
} from '@modelcontextprotocol/client';
import type { InputRequiredResult } from '@modelcontextprotocol/server';
import { canonicalSha256Base64url, sha256Base64url } from '@vrpkit/core';
import { snapshotLiveArguments } from '../act.js';
import { denyDecision } from '../enforce.js';
import { type EnforceDecision, GateError, hostErrorObject } from '../errors.js';
import type { Gate } from '../gate.js';
import type { ActContext, MappedCall } from '../host/act-context.js';
import {
  type DispatchGate,
  denyFrom,
  dispatchMapped,
  type MapContext,
  type MappedOutcome,
  resolveActContext,
} from '../host/dispatch-mapped.js';
import { mcpToolsCallCall } from '../vendors/mcp/map.js';
import type { AgentApproval } from './approval-channel.js';
import { personStep, retriedState } from './approval-in-client.js';
import { retainArguments } from './approval-wait.js';
import { type CallAt, logCall, recordObservation } from './call-log.js';
import { DownstreamInput, type InputRefusal, withDeclined } from './downstream-input.js';
import type { Downstream, RequestExtra } from './downstream-link.js';
import { authorizationRequiredResult, authorizationStep, DownstreamAuthorizationRequired } from './downstream-oauth.js';
import { sigkillSelf } from './fault.js';
import { HeldCall } from './held-call.js';
import { forwardObserved } from './observe.js';
import type { ProxyContext } from './options.js';
import type { PinnedView } from './pinned-view.js';
import { isMcpToolName } from './pins.js';
import { denyResult, digestOrNull, downstreamFailure, downstreamUnavailable } from './results.js';

/** What the pipeline answers: the downstream's own answer (it may ask for input), or the proxy's. */
type PipelineAnswer = { downstream: CallToolResult | InputRequiredResult } | { own: CallToolResult | InputRequiredResult };

/** A mapped call: the act, the snapshot its digest covers, and the request the downstream receives (with that snapshot). */
interface ProxyCall extends MappedCall<Record<string, unknown>> {
  sent: CallToolRequest['params'];
}

/**
 * The `_meta` of an agent's `tools/call` that reaches the downstream (issue 36 defect 10): the
 * progress token (the SDK sets its own for the downstream request anyway) and the keys of the
 * protocol's reserved prefixes (MCP specification, `_meta`: a prefix whose second label is
 * `modelcontextprotocol` or `mcp`, e.g. `io.modelcontextprotocol/`). Any other key is agent-chosen
 * data a person never reviewed and the digest does not cover: it is dropped, never forwarded.
 */
export function forwardedMeta(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!meta) return undefined;
  const kept = Object.entries(meta).filter(([key]) => key === 'progressToken' || isProtocolMetaKey(key));
  return kept.length ? Object.fromEntries(kept) : undefined;
}

function isProtocolMetaKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const labels = key.slice(0, slash).split('.');
  return labels.length >= 2 && (labels[1] === 'modelcontextprotocol' || labels[1] === 'mcp');
}

export class CallPipeline {
  /** Who an act is for without a resource server in front: the proxy's user (fixed for the process). */
  private readonly principal: MapContext['principal'] = { principal_id: process.env.USER ?? 'local', principal_type: 'user' };
  /** Team mode: each policy member's gate as the mappers see it, made once. */
  private readonly memberGates = new WeakMap<Gate, DispatchGate>();
  /** A downstream's requests for input, passed to the agent and bound to the act (downstream-input.ts). */
  private readonly input: DownstreamInput;

  constructor(
    private readonly c: ProxyContext,
    private readonly link: Downstream,
    private readonly view: PinnedView,
    /** The gate as the mappers see it (observe mode: with cached epochs). */
    private readonly mapGate: DispatchGate,
    /** How a member's gate is seen by the mappers (the same wrapping as `mapGate`). */
    private readonly asMapped: (gate: Gate) => DispatchGate = (gate) => gate,
  ) {
    this.input = new DownstreamInput(c, link);
  }

  /**
   * Whose act a call is, and which gate decides it: the authenticated principal and their policy
   * member (issue 33 item 2), else the proxy's user and its one gate.
   */
  private actor(extra: RequestExtra, agentName: string | undefined): Pick<MapContext, 'gate' | 'principal' | 'agent'> {
    const p = extra.principal;
    if (!p || !this.c.principals) return { gate: this.mapGate, principal: this.principal, agent: { agent_id: agentName ?? 'mcp-client' } };
    const gate = this.c.principals.gateFor(p);
    let mapped = this.memberGates.get(gate);
    if (!mapped) {
      mapped = this.asMapped(gate);
      this.memberGates.set(gate, mapped);
    }
    // A client credentials token has no user: its subject is the client, a service principal.
    const principal_type = p.clientId !== undefined && p.subject === p.clientId ? 'service' : 'user';
    return {
      gate: mapped,
      principal: { principal_id: p.subject, principal_type },
      agent: { agent_id: p.clientId ?? agentName ?? 'mcp-client' },
    };
  }

  /** One `tools/call`: pin check, candidate act, the gate's dispatch, the downstream call (or a deny). */
  async callTool(
    params: CallToolRequest['params'],
    extra: RequestExtra,
    agentName: string | undefined,
    approval?: AgentApproval,
  ): Promise<CallToolResult | InputRequiredResult> {
    const c = this.c;
    const started = c.clock.now();
    const name = params.name;
    if (params.task !== undefined)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'task-based tools/call is not available through the gate');
    // A name outside the MCP pattern is never pinned, whatever the downstream offers: refused
    // before anything else, logged by digest only (the name is the server's untrusted text).
    if (!isMcpToolName(name)) {
      c.log('tool_name_refused', { server_id: c.serverId, name_digest: sha256Base64url(name), call: true }, 'warn');
      return denyResult(denyDecision('EF_TOOL_NOT_PINNED'));
    }
    // Downstream OAuth: a principal without a credential is sent to authorize before anything is
    // mapped or consumed (proxy/downstream-oauth.ts); a 2025 client's elicitation may let it go on.
    const ready = await this.ready(extra, approval);
    if (ready !== true) return ready;
    // The tool's current definition (re-listed on a bounded interval: issue 36 defect 7); while it
    // cannot be known, the call is refused — it is not known to be the pinned one.
    let view: Awaited<ReturnType<PinnedView['current']>>;
    try {
      view = await this.view.current(extra);
    } catch (e) {
      if (e instanceof DownstreamAuthorizationRequired) return authorizationRequiredResult(e);
      // The store could not record the listing: refused as the store's code, like a failed pin read below.
      if (e instanceof GateError) return this.deny(denyDecision(e.code), { name, started });
      c.log('tools_relist_failed', { server_id: c.serverId, message: e instanceof Error ? e.message : String(e) }, 'warn');
      return this.deny(denyDecision('EF_TOOL_NOT_PINNED'), { name, started });
    }
    const tool = view.get(name);
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    // The downstream request is built from the pinned definition (its SEP-2243 header arguments).
    extra = { ...extra, tool: tool.definition };
    const ctx: MapContext = { ...this.actor(extra, agentName), session_id: c.name, purpose: { purpose_id: 'mcp-tools-call' } };
    // Two independent reads: on PostgreSQL they go out on two pooled connections at once. A pin
    // read the store cannot answer fails the call closed, as the store's own code (issue 36 defect 1).
    const [pinned, actCtx] = await Promise.all([this.view.isPinned(name, tool.digest).catch(() => undefined), resolveActContext(ctx)]);
    if (pinned === undefined) return this.deny(denyDecision('EF_STORE_UNAVAILABLE'), { name, started });
    if ('allow' in actCtx) return this.deny(actCtx, { name, started });
    let mapped: ProxyCall;
    try {
      mapped = this.map(params, actCtx, extra.principal?.subject);
    } catch (e) {
      return this.deny(denyFrom(e), { name, started });
    }
    const at = { name, started, act: mapped.act };
    if (c.mode !== 'observe' && !pinned) return this.deny(denyDecision('EF_TOOL_NOT_PINNED'), at);
    const binding = { act: mapped.act, sent: mapped.sent, at };
    // A later round of a call whose downstream asked for input: the same act, not dispatched again.
    if (approval?.requestState !== undefined) {
      const continued = await this.input.continuation(binding, approval, extra);
      if (continued) return continued;
    }
    // A 2025-11-25 downstream's elicitation during this call comes to this call's agent (downstream-link.ts);
    // for a 2026-07-28 agent the call is held open across its retries (held-call.ts).
    const held =
      approval &&
      !approval.elicit &&
      this.link.client?.getProtocolEra() === 'legacy' &&
      (approval.formElicitation || approval.client.urlElicitation)
        ? new HeldCall(extra.signal, c.stopped)
        : undefined;
    const declined: InputRefusal[] = [];
    const routed: RequestExtra = {
      ...extra,
      elicitation: this.input.route(binding, approval, declined, held),
      // Held, the call outlives the agent's first request: only the proxy's stop cancels it, and its progress has nowhere to go.
      ...(held ? { signal: held.abort.signal, sendNotification: (n) => (held.held ? Promise.resolve() : extra.sendNotification(n)) } : {}),
    };
    const running = this.answer(ctx, mapped, pinned, binding, routed, approval, declined);
    if (!held) return running;
    running.then(
      (answer) => held.push({ kind: 'done', answer }),
      (error: unknown) => held.push({ kind: 'failed', error }),
    );
    return this.input.heldAnswer(binding, held, 1, extra.signal);
  }

  /** The call's answer once it is mapped, pinned and not a continuation: dispatched (or observed), then the downstream's answer relayed. */
  private async answer(
    ctx: MapContext,
    mapped: ProxyCall,
    pinned: boolean,
    binding: { act: ProxyCall['act']; sent: ProxyCall['sent']; at: CallAt & { act: ProxyCall['act'] } },
    routed: RequestExtra,
    approval: AgentApproval | undefined,
    declined: InputRefusal[],
  ): Promise<CallToolResult | InputRequiredResult> {
    const answer =
      this.c.mode === 'observe'
        ? await forwardObserved(this.c, this.link, mapped, pinned, binding.at, routed)
        : await this.enforced(ctx, mapped, binding.at, routed, approval);
    if (!('downstream' in answer)) return answer.own;
    const result = answer.downstream;
    // A 2026-07-28 downstream's InputRequiredResult: the agent is asked (round 1 of the same act).
    return isInputRequiredResult(result) ? this.input.relay(binding, result, approval, 1, routed) : withDeclined(result, declined);
  }

  /** The downstream is there for this principal (true), or what to answer instead. */
  private async ready(extra: RequestExtra, approval: AgentApproval | undefined): Promise<true | CallToolResult | InputRequiredResult> {
    for (let round = 0; round < 2; round++) {
      try {
        return (await this.link.available(extra)) ? true : downstreamUnavailable();
      } catch (e) {
        if (!(e instanceof DownstreamAuthorizationRequired)) {
          this.c.log(
            'downstream_connect_failed',
            { server_id: this.c.serverId, message: e instanceof Error ? e.message : String(e) },
            'warn',
          );
          return downstreamUnavailable();
        }
        // Bounded as an approval's wait is: the person signs in meanwhile.
        const step = await authorizationStep(e, approval, Math.max(this.c.approvalTimeoutMs, 1000), extra.signal);
        if ('answer' in step) return step.answer;
      }
    }
    return downstreamUnavailable();
  }

  /**
   * Enforce mode: the gate's dispatch; an escalated act waits for a person (bounded), then resumes
   * — runs with the approved authority or is refused; the decision may come from another process
   * (Tool-Use Binding draft, escalation).
   */
  private async enforced(
    ctx: MapContext,
    mapped: ProxyCall,
    at: CallAt & { act: ProxyCall['act'] },
    extra: RequestExtra,
    approval: AgentApproval | undefined,
  ): Promise<PipelineAnswer> {
    // A retried round's sealed state is checked before anything runs: a failing one grants nothing.
    const retried = await retriedState(this.c, mapped.act, approval);
    if (!retried.ok)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `requestState refused (${retried.reason}): call the tool again without it`);
    const run = await this.dispatch(ctx, mapped, extra);
    let r: MappedOutcome = run.r;
    let note: string | undefined;
    if (r.resume) {
      await retainArguments(this.c, mapped.act, mapped.live.args);
      const step = await personStep(this.c, mapped.act, extra, approval, retried.state);
      if ('inputRequired' in step) {
        // The client is sent to the page; nothing ran. Its retry comes back as the same act.
        logCall(this.c, at, { allow: false, invoked: false, code: 'EF_APPROVAL_REQUIRED' });
        return { own: step.inputRequired };
      }
      const decided = step.decided;
      if (decided) {
        // Decided: the pending act resumes (authorize, enforce, invoke), never mapped or dispatched
        // again. Approved, the authority the approval issued is consumed and it runs once;
        // rejected, the gate refuses it (EF_NOT_AUTHORIZED).
        r = await r.resume();
        if (decided.status === 'REJECTED') note = `A person refused candidate act ${mapped.act.candidate_act_id}; it was not run.`;
      }
    }
    const result = run.result();
    if (r.toolError !== undefined) {
      logCall(this.c, at, { allow: true, invoked: true, error: true });
      // The downstream refused the credential in flight and a refresh could not help: the person is asked again.
      if (r.toolError instanceof DownstreamAuthorizationRequired) return { own: authorizationRequiredResult(r.toolError) };
      return { own: downstreamFailure(r.toolError) };
    }
    if (r.outcome.decision.allow && result) {
      const input_required = isInputRequiredResult(result) ? { round: 1, input_required: true } : {};
      logCall(this.c, at, { allow: true, invoked: true, authority_id: r.outcome.decision.authority_id, ...input_required });
      return { downstream: result };
    }
    // A deny — also for a replay of a finished act (the retry rule: never a second invoke).
    return { own: await this.deny(r.outcome.decision, at, note) };
  }

  /**
   * The gate's dispatch (policy, enforce, journal) of a mapped call, and the downstream call it
   * allows; `result()` is the downstream's answer once it was called (by this run or its resumption).
   */
  private async dispatch(ctx: MapContext, mapped: ProxyCall, extra: RequestExtra) {
    let result: CallToolResult | InputRequiredResult | undefined;
    const r = await dispatchMapped(
      ctx,
      { id: mapped.act.candidate_act_id, name: mapped.sent.name },
      () => mapped,
      async () => {
        // The downstream gets the frozen copy dispatch digested (Tool-Use Binding draft, enforce() contract).
        result = await this.link.callTool(mapped.sent, extra);
        if (this.c.fault === 'after-downstream-call') sigkillSelf();
        return { result_digest: digestOrNull(result) };
      },
      true,
    );
    return { r, result: () => result };
  }

  /**
   * The act for a call, over a private snapshot of its arguments; the downstream receives
   * exactly that snapshot (the digest's arguments), whatever the caller's object does meanwhile.
   *
   * The act id: an MCP client names no act, so a call is identified by what it does — server
   * identity, tool and arguments digest — and a retry of the identical call is the same act:
   * an approval given for it applies to the retry, and after it ran the retry is a replay
   * (Tool-Use Binding draft, retries: "never a second invoke"). Informational calls have no
   * effect to repeat, so each is an act of its own (reading a file twice is two reads).
   */
  private map(params: CallToolRequest['params'], actCtx: ActContext, subject: string | undefined): ProxyCall {
    const c = this.c;
    const live = snapshotLiveArguments(params.arguments ?? {});
    // Exactly the name, the digested arguments and the protocol's own _meta keys: nothing the agent
    // chose rides along outside the digest (issue 36 defect 10).
    const meta = forwardedMeta(params._meta);
    const sent: CallToolRequest['params'] = {
      name: params.name,
      ...(params.arguments !== undefined ? { arguments: live.args } : {}),
      ...(meta ? { _meta: meta } : {}),
    };
    const server = { serverUrl: c.serverId };
    const cls = actCtx.classify({ tool_id: params.name, function_id: params.name, tool_protocol: 'MCP', tool_endpoint: c.serverId });
    const ref =
      cls === 'INFORMATIONAL'
        ? randomUUID()
        : // Two users' identical calls are two acts: one's approval is never the other's (team mode).
          canonicalSha256Base64url({
            server: c.serverId,
            tool: params.name,
            arguments_digest: live.digest.value,
            ...(subject !== undefined ? { principal: subject } : {}),
          });
    return { ...mcpToolsCallCall({ name: params.name, arguments: live }, server, actCtx, ref), sent };
  }

  /** A deny as the model sees it (`denyResult`), with the pending act named when it waits for a person; observed and logged. */
  private async deny(decision: EnforceDecision, at: CallAt, note?: string): Promise<CallToolResult> {
    const result = denyResult(decision);
    const code = hostErrorObject(decision).error.code;
    if (code === 'EF_APPROVAL_REQUIRED' && at.act)
      result.content.push({
        type: 'text',
        text: `Approval pending for candidate act ${at.act.candidate_act_id}. Once a person approves it, the identical call runs once.`,
      });
    if (note) result.content.push({ type: 'text', text: note });
    await recordObservation(this.c, 'enforce', code, at);
    logCall(this.c, at, { allow: false, invoked: false, code });
    return result;
  }
}
