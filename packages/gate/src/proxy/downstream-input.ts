/**
 * A downstream server's requests for user input, passed through to the agent and bound to the act
 * (issue 32 item 5; MCP 2026-07-28 client/elicitation and basic/patterns/mrtr):
 *
 * - a 2026-07-28 downstream answers the `tools/call` with an `InputRequiredResult`: the proxy answers
 *   its agent with one of its own — the elicitations marked as the server's text, and a `requestState`
 *   the gate sealed, binding the act, the server, the tool, the arguments digest, the principal and the
 *   downstream's own `requestState` (approvals/request-state.ts `ContinuationState`). The agent's retry
 *   (same tool and arguments, its `inputResponses`, that state) is checked against the binding and
 *   retried downstream with the downstream's state. A 2025-11-25 agent gets the same answer: the
 *   SDK's legacy shim asks it with `elicitation/create` and re-enters the handler;
 * - a 2025-11-25 downstream sends `elicitation/create` during the call (downstream-link.ts routes it
 *   to that call): forwarded to a 2025-11-25 agent on its connection and its answer returned.
 *
 * Every round of one call is the same act: the gate decides and consumes its authority once, on the
 * first round; later rounds are not dispatched again, they continue that act (logged with its id and
 * the round). A continuation is single-use, and one whose state is tampered, expired, another call's
 * or another principal's is refused before anything is sent. Form text from a downstream is untrusted
 * tool output: prefixed with the server's name and marked `vrp/untrusted` in `_meta`, never shaped
 * like the gate's approval. A URL passes only to an origin in the policy's `elicitation_url_origins`;
 * sampling and roots are never forwarded.
 */

import { randomUUID } from 'node:crypto';
import {
  type CallToolRequest,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ElicitRequestParams,
  type ElicitRequestURLParams,
  type ElicitResult,
  type InputRequiredResult,
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  specTypeSchemas,
} from '@modelcontextprotocol/client';
import { inputRequired } from '@modelcontextprotocol/server';
import { sha256Base64url } from '@vrpkit/core';
import type { AgentCandidateAct } from '../act.js';
import { type ContinuationState, DEFAULT_REQUEST_STATE_TTL_MS, MAX_DOWNSTREAM_STATE_LENGTH } from '../approvals/request-state.js';
import type { AgentApproval } from './approval-channel.js';
import { type CallAt, logCall } from './call-log.js';
import type { Downstream, ElicitationRoute, RequestExtra } from './downstream-link.js';
import { type HeldCall, HeldCalls } from './held-call.js';
import type { ProxyContext } from './options.js';
import { downstreamFailure, downstreamInputError } from './results.js';

/** Rounds of downstream input one call may take (the SDK client driver's default cap). */
export const MAX_DOWNSTREAM_INPUT_ROUNDS = 10;
/** How long a forwarded `elicitation/create` waits for the agent's person (the SDK legacy shim's per-round bound). */
export const DOWNSTREAM_ELICITATION_TIMEOUT_MS = 10 * 60_000;
/** `_meta` key marking a forwarded request as the downstream server's text, not the gate's. */
export const UNTRUSTED_META_KEY = 'vrp/untrusted';
/** `_meta` key naming the downstream server (its identity) a forwarded request comes from. */
export const SOURCE_META_KEY = 'vrp/server';
/** `_meta` key on a 2025-11-25 downstream's result listing the elicitations the proxy declined during the call. */
export const DECLINED_META_KEY = 'vrp/elicitation_declined';

/**
 * Why the proxy did not pass a downstream's input request on (stable codes):
 * `elicitation_not_declared` — the agent did not declare that elicitation mode;
 * `elicitation_url_origin_not_allowed` — the URL's origin is not in `elicitation_url_origins`;
 * `elicitation_cross_revision` — a 2025-11-25 downstream asked a 2026-07-28 agent (no hold/resume yet);
 * `downstream_input_refused` — sampling, roots or a malformed request.
 */
export type InputRefusal =
  | 'elicitation_not_declared'
  | 'elicitation_url_origin_not_allowed'
  | 'elicitation_cross_revision'
  | 'downstream_input_refused';

/** What the agent reads when a downstream's input request ends the call. */
const REFUSED_MESSAGES: Record<InputRefusal, string> = {
  elicitation_not_declared:
    'The downstream MCP server asked for user input (elicitation) in a mode this client did not declare; nothing was sent back to the server.',
  elicitation_url_origin_not_allowed: "The downstream MCP server asked to open a URL whose origin the gate's policy does not allow.",
  elicitation_cross_revision: 'The downstream MCP server asked for user input this client cannot be asked for on its protocol revision.',
  downstream_input_refused: 'The downstream MCP server sent a malformed request for input; the call ended.',
};

/** The input key of a held call's question (a 2025-11-25 request has no key of its own). */
const HELD_INPUT_KEY = 'downstream_elicitation';

/** The call a downstream's input request belongs to: its act, the request sent downstream, and its log line. */
export interface InputBinding {
  act: AgentCandidateAct;
  sent: CallToolRequest['params'];
  at: CallAt;
}

/** A continuation state is spent once; remembered (this process) until it would have expired anyway. */
const SPENT_LIMIT = 10_000;

export class DownstreamInput {
  /** Digest of each spent continuation state → when it expires. */
  private readonly spent = new Map<string, number>();
  /** 2025-11-25 downstream calls held open for a 2026-07-28 agent's retries (held-call.ts). */
  private readonly held = new HeldCalls();

  constructor(
    private readonly c: ProxyContext,
    private readonly link: Downstream,
  ) {}

  /**
   * Where a 2025-11-25 downstream's `elicitation/create` during this call goes; `declined` collects
   * the codes of what was declined (they go on the result's `_meta`).
   */
  route(
    binding: Omit<InputBinding, 'sent'>,
    agent: AgentApproval | undefined,
    declined: InputRefusal[],
    held?: HeldCall,
  ): ElicitationRoute {
    const c = this.c;
    return {
      elicit: async (params) => {
        const act = binding.act.candidate_act_id;
        const checked = this.check(params, agent, act);
        const refusal = 'refused' in checked ? checked.refused : agent?.elicit || held ? undefined : 'elicitation_cross_revision';
        if (refusal) {
          if (refusal === 'elicitation_cross_revision')
            c.log('downstream_elicitation_refused', { candidate_act_id: act, code: refusal }, 'warn');
          declined.push(refusal);
          return { action: 'decline' };
        }
        const forward = (checked as { forward: ElicitRequestParams }).forward;
        c.log('downstream_elicitation_forwarded', { candidate_act_id: act, mode: params.mode ?? 'form', held: !agent?.elicit });
        if (!agent?.elicit) return this.askHeld(held!, forward);
        try {
          return await agent.elicit(forward, DOWNSTREAM_ELICITATION_TIMEOUT_MS);
        } catch {
          // The agent did not answer (timeout, closed connection): the server hears a cancel, nothing else.
          return { action: 'cancel' };
        }
      },
    };
  }

  /** A held call's question, answered by the agent's retry (`heldAnswer`), or cancelled when none comes in time. */
  private askHeld(held: HeldCall, params: ElicitRequestParams): Promise<ElicitResult> {
    return new Promise((resolve) => {
      let settled = false;
      const answer = (r: ElicitResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const timer = setTimeout(() => answer({ action: 'cancel' }), DOWNSTREAM_ELICITATION_TIMEOUT_MS);
      timer.unref();
      held.push({ kind: 'elicit', params, answer });
    });
  }

  /**
   * The agent's answer while a 2025-11-25 downstream's call is held: its next event — the result, or
   * its next question as an `InputRequiredResult` whose sealed continuation names the held call.
   */
  async heldAnswer(
    binding: InputBinding,
    held: HeldCall,
    round: number,
    signal: AbortSignal,
  ): Promise<CallToolResult | InputRequiredResult> {
    const c = this.c;
    const event = await held.next(signal);
    if (!event) return downstreamInputError('elicitation_hold_abandoned', 'The request ended while the downstream MCP server was working.');
    if (event.kind === 'failed') throw event.error;
    if (event.kind === 'done') return event.answer;
    if (round > MAX_DOWNSTREAM_INPUT_ROUNDS) {
      event.answer({ action: 'cancel' });
      return this.ended(
        binding,
        round,
        'downstream_input_rounds_exceeded',
        `The downstream MCP server still asked for input after ${MAX_DOWNSTREAM_INPUT_ROUNDS} rounds; the call ended.`,
      );
    }
    held.held = true;
    const id = randomUUID();
    const now = c.clock.now();
    this.held.hold(id, held, event.answer, now + DOWNSTREAM_ELICITATION_TIMEOUT_MS, now);
    const act = binding.act.candidate_act_id;
    c.log('downstream_input_required', { candidate_act_id: act, round, forwarded: 1, declined: 0, held: true });
    // 2026-07-28 removed the URL mode's elicitationId (and its completion notice): not sent.
    const { elicitationId: _, ...params } = event.params as ElicitRequestParams & { elicitationId?: string };
    const state = this.continuationOf(binding, { round, forwarded: [HELD_INPUT_KEY], declined: [], held: id });
    return inputRequired({
      inputRequests: { [HELD_INPUT_KEY]: { method: 'elicitation/create', params: params as ElicitRequestParams } },
      requestState: await c.requestStates.sealContinuation(state),
    });
  }

  /**
   * A 2026-07-28 downstream answered with an `InputRequiredResult` (round `round` of the call): the
   * agent's answer — an `InputRequiredResult` of the proxy's own with a sealed continuation, the
   * downstream's final result once only proxy-declined requests remained, or a clear error.
   */
  async relay(
    binding: InputBinding,
    first: InputRequiredResult,
    agent: AgentApproval | undefined,
    round: number,
    extra: RequestExtra,
  ): Promise<CallToolResult | InputRequiredResult> {
    const c = this.c;
    const act = binding.act.candidate_act_id;
    let result: CallToolResult | InputRequiredResult = first;
    for (let r = round; isInputRequiredResult(result); r++) {
      if (r > MAX_DOWNSTREAM_INPUT_ROUNDS)
        return this.ended(
          binding,
          r,
          'downstream_input_rounds_exceeded',
          `The downstream MCP server still asked for input after ${MAX_DOWNSTREAM_INPUT_ROUNDS} rounds; the call ended.`,
        );
      const forwarded: Record<string, { method: 'elicitation/create'; params: ElicitRequestParams }> = {};
      const declined: string[] = [];
      for (const [key, entry] of Object.entries(result.inputRequests ?? {})) {
        const e = entry as { method?: unknown; params?: unknown };
        if (e.method !== 'elicitation/create') {
          // Sampling (deprecated) and roots stay with the proxy: docs/gateway.md, "Requests from the server to the agent".
          c.log('downstream_input_refused', { candidate_act_id: act, method: typeof e.method === 'string' ? e.method : null }, 'warn');
          return this.ended(
            binding,
            r,
            'downstream_input_refused',
            `The downstream MCP server asked for ${String(e.method)}, which the gateway does not forward; the call ended.`,
          );
        }
        const checked = this.check(e.params, agent, act);
        if ('forward' in checked) forwarded[key] = { method: 'elicitation/create', params: checked.forward };
        else if (checked.refused === 'elicitation_url_origin_not_allowed') declined.push(key);
        else return this.ended(binding, r, checked.refused, REFUSED_MESSAGES[checked.refused]);
      }
      const downstreamState = result.requestState;
      if (downstreamState !== undefined && downstreamState.length > MAX_DOWNSTREAM_STATE_LENGTH)
        return this.ended(
          binding,
          r,
          'downstream_input_refused',
          'The downstream MCP server sent a requestState too large to carry; the call ended.',
        );
      const state = this.continuationOf(binding, {
        round: r,
        ...(downstreamState !== undefined ? { downstream_state: downstreamState } : {}),
        forwarded: Object.keys(forwarded),
        declined,
      });
      if (state.forwarded.length > 0) {
        c.log('downstream_input_required', {
          candidate_act_id: act,
          round: r,
          forwarded: state.forwarded.length,
          declined: declined.length,
        });
        return inputRequired({ inputRequests: forwarded, requestState: await c.requestStates.sealContinuation(state) });
      }
      // Nothing for the agent (every request declined by policy): the declines go back at once.
      const next = await this.retry(binding, state, undefined, extra);
      if ('failed' in next) return next.failed;
      result = next.result;
    }
    return result;
  }

  /**
   * An agent's retry carrying a sealed state: `undefined` when it is not a continuation (an
   * approval's state: approval-in-client.ts opens it), else the next round's answer. A state that
   * fails (tampered, expired, spent, another call's or principal's) is refused: nothing is sent.
   */
  async continuation(
    binding: InputBinding,
    agent: AgentApproval,
    extra: RequestExtra,
  ): Promise<CallToolResult | InputRequiredResult | undefined> {
    const c = this.c;
    const sealed = agent.requestState as string;
    const opened = await c.requestStates.openContinuation(sealed, {
      server: c.serverId,
      tool: binding.act.tool.tool_id,
      arguments_digest: binding.act.arguments_digest.value,
      principal: binding.act.initiating_principal.principal_id,
    });
    if (!opened.ok && opened.reason === 'not_continuation') return undefined;
    const reason = opened.ok ? this.spend(sealed) : opened.reason;
    if (reason) {
      c.log(
        'request_state_refused',
        { candidate_act_id: opened.ok ? opened.state.candidate_act_id : null, reason, continuation: true },
        'warn',
      );
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `requestState refused (${reason}): call the tool again without it`, {
        code: 'input_state_refused',
        reason,
      });
    }
    const state = (opened as { state: ContinuationState }).state;
    if (state.held !== undefined) return this.resumeHeld(binding, state, agent, extra);
    // The act is the one authorized on the first round, not the one this retry would map to.
    const continued: InputBinding = {
      ...binding,
      act: { ...binding.act, candidate_act_id: state.candidate_act_id },
      at: { ...binding.at },
    };
    continued.at.act = continued.act;
    const next = await this.retry(continued, state, agent.inputResponses, extra);
    if ('failed' in next) return next.failed;
    return isInputRequiredResult(next.result) ? this.relay(continued, next.result, agent, state.round + 1, extra) : next.result;
  }

  /** A held call's continuation: the agent's answer goes to the waiting `elicitation/create`, the next event comes back. */
  private async resumeHeld(
    binding: InputBinding,
    state: ContinuationState,
    agent: AgentApproval,
    extra: RequestExtra,
  ): Promise<CallToolResult | InputRequiredResult> {
    const entry = this.held.take(state.held as string);
    if (!entry) {
      this.c.log('request_state_refused', { candidate_act_id: state.candidate_act_id, reason: 'gone', continuation: true }, 'warn');
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'requestState refused (gone): the held call is not in this process', {
        code: 'input_state_refused',
        reason: 'gone',
      });
    }
    const answer = specTypeSchemas.ElicitResult['~standard'].validate(agent.inputResponses?.[HELD_INPUT_KEY]) as { value?: ElicitResult };
    entry.answer(answer.value ?? { action: 'cancel' });
    const act = { ...binding.act, candidate_act_id: state.candidate_act_id };
    return this.heldAnswer({ ...binding, act, at: { ...binding.at, act } }, entry.call, state.round + 1, extra.signal);
  }

  /** Retry the call downstream with this round's responses (only the forwarded keys, the proxy's declines) and the downstream's state. */
  private async retry(
    binding: InputBinding,
    state: ContinuationState,
    responses: Record<string, unknown> | undefined,
    extra: RequestExtra,
  ): Promise<{ result: CallToolResult | InputRequiredResult } | { failed: CallToolResult }> {
    const inputResponses: Record<string, unknown> = {};
    for (const key of state.forwarded) {
      const answer = specTypeSchemas.ElicitResult['~standard'].validate(responses?.[key]) as { value?: ElicitResult };
      // An answer that is not an ElicitResult is not passed on: the server asks again or decides without it.
      if (answer.value) inputResponses[key] = answer.value;
    }
    for (const key of state.declined) inputResponses[key] = { action: 'decline' };
    const round = state.round + 1;
    try {
      const result = await this.link.callTool(
        {
          ...binding.sent,
          ...(Object.keys(inputResponses).length ? { inputResponses } : {}),
          ...(state.downstream_state !== undefined ? { requestState: state.downstream_state } : {}),
        },
        extra,
      );
      logCall(this.c, binding.at, { allow: true, invoked: true, round, continued: true, input_required: isInputRequiredResult(result) });
      return { result };
    } catch (e) {
      logCall(this.c, binding.at, { allow: true, invoked: true, round, continued: true, error: true });
      return { failed: downstreamFailure(e) };
    }
  }

  /** Whether `raw` may go to this agent, marked as the server's text; else why not (logged by origin only for a URL). */
  private check(raw: unknown, agent: AgentApproval | undefined, act: string): { forward: ElicitRequestParams } | { refused: InputRefusal } {
    const c = this.c;
    const params = elicitationParams(raw);
    if (!params) {
      c.log('downstream_input_refused', { candidate_act_id: act, method: 'elicitation/create', malformed: true }, 'warn');
      return { refused: 'downstream_input_refused' };
    }
    if (params.mode === 'url') {
      const { allowed, origin } = c.policy.allowsElicitationUrl(params.url);
      if (!allowed) {
        // The origin only: the rest of a URL may carry the downstream's tokens.
        c.log('downstream_elicitation_declined', { candidate_act_id: act, code: 'elicitation_url_origin_not_allowed', origin }, 'warn');
        return { refused: 'elicitation_url_origin_not_allowed' };
      }
      if (!agent?.client.urlElicitation) return this.notDeclared(act, 'url');
      const forward = { mode: 'url', message: untrustedMessage(c.name, params.message), url: params.url, _meta: untrustedMeta(c.serverId) };
      // 2025-11-25 requires the id (the agent may hear the server's completion notice); 2026-07-28 removed it.
      return { forward: (params.elicitationId ? { ...forward, elicitationId: params.elicitationId } : forward) as ElicitRequestParams };
    }
    if (!agent?.formElicitation) return this.notDeclared(act, 'form');
    return {
      forward: {
        ...(params.mode ? { mode: params.mode } : {}),
        message: untrustedMessage(c.name, params.message),
        requestedSchema: params.requestedSchema,
        _meta: untrustedMeta(c.serverId),
      },
    };
  }

  private notDeclared(act: string, mode: 'form' | 'url'): { refused: InputRefusal } {
    this.c.log('downstream_elicitation_declined', { candidate_act_id: act, code: 'elicitation_not_declared', mode });
    return { refused: 'elicitation_not_declared' };
  }

  /** The call ends without the input (the downstream was called: its authority is spent). */
  private ended(binding: InputBinding, round: number, code: string, message: string): CallToolResult {
    logCall(this.c, binding.at, { allow: true, invoked: true, round, code });
    return downstreamInputError(code, message);
  }

  /** The continuation of a round of this call: its act, the server, the request (tool, arguments digest) and the principal, bound. */
  private continuationOf(
    binding: InputBinding,
    round: Omit<ContinuationState, 'candidate_act_id' | 'server' | 'tool' | 'arguments_digest' | 'principal'>,
  ): ContinuationState {
    return {
      candidate_act_id: binding.act.candidate_act_id,
      server: this.c.serverId,
      tool: binding.act.tool.tool_id,
      arguments_digest: binding.act.arguments_digest.value,
      principal: binding.act.initiating_principal.principal_id,
      ...round,
    };
  }

  /** Spend a continuation state once; a second use is refused (`spent`). */
  private spend(sealed: string): 'spent' | undefined {
    const now = this.c.clock.now();
    const id = sha256Base64url(sealed);
    if (this.spent.has(id)) return 'spent';
    if (this.spent.size >= SPENT_LIMIT) for (const [k, until] of this.spent) if (until <= now) this.spent.delete(k);
    this.spent.set(id, now + (this.c.approvalLinkTtlMs ?? DEFAULT_REQUEST_STATE_TTL_MS) + 60_000);
    return undefined;
  }
}

/**
 * A downstream's elicitation params, read with the SDK's schemas: form mode as is; URL mode with the
 * 2025-11-25 schema, which requires the `elicitationId` that 2026-07-28 removed (an embedded request has none).
 */
function elicitationParams(raw: unknown): (ElicitRequestParams & { elicitationId?: string }) | undefined {
  const r = raw as { mode?: unknown; elicitationId?: unknown } | null;
  if (r?.mode === 'url') {
    const hadId = typeof r.elicitationId === 'string';
    const v = specTypeSchemas.ElicitRequestURLParams['~standard'].validate(hadId ? r : { ...r, elicitationId: '-' }) as {
      value?: ElicitRequestURLParams;
    };
    if (!v.value) return undefined;
    const { elicitationId, ...rest } = v.value;
    return (hadId ? { ...rest, elicitationId } : rest) as ElicitRequestParams;
  }
  return (specTypeSchemas.ElicitRequestFormParams['~standard'].validate(raw) as { value?: ElicitRequestFormParams }).value;
}

/** The message as the person sees it: the server's own words, said to be its own. */
function untrustedMessage(server: string, message: string): string {
  return `[MCP server "${server}", not the gate] ${message}`;
}

function untrustedMeta(serverId: string): Record<string, unknown> {
  return { [UNTRUSTED_META_KEY]: true, [SOURCE_META_KEY]: serverId };
}

/** A 2025-11-25 downstream's result, with the codes of the elicitations declined during the call. */
export function withDeclined(result: CallToolResult, declined: readonly InputRefusal[]): CallToolResult {
  if (declined.length === 0) return result;
  return { ...result, _meta: { ...result._meta, [DECLINED_META_KEY]: [...new Set(declined)] } };
}
