/**
 * The person step of an escalated `tools/call` (issue 32 item 4): with a client that can open a
 * URL, the call is answered with the approvals page's link to exactly this act — a 2026-07-28
 * `InputRequiredResult` (with a sealed `requestState`), or on a 2025-11-25 connection
 * `elicitation/create` in URL mode — else today's bounded wait (approval-wait.ts). The decision is
 * read from the store only (approvals/answer.ts): the client's `accept` grants nothing.
 */
import type { InputRequiredResult } from '@modelcontextprotocol/server';
import type { AgentCandidateAct } from '../act.js';
import {
  type ApprovalAnswer,
  type ApprovalDeps,
  answerAfterElicitation,
  answerEscalatedCall,
  type EscalatedCall,
  openRetriedState,
} from '../approvals/answer.js';
import type { ApprovalRequestState } from '../approvals/request-state.js';
import { actBindingDigest } from '../escalation.js';
import type { EscalationRow } from '../store/ports.js';
import type { AgentApproval } from './approval-channel.js';
import { awaitApproval, notifyWaiting } from './approval-wait.js';
import type { RequestExtra } from './downstream-link.js';
import type { ProxyContext } from './options.js';

/** How long a retried call waits for the page before it is asked again (mrtr: the server may block until the interaction completes). */
export const RETRY_WAIT_MS = 15_000;

/** What the person step ends in: the escalation decided (resume it) or not (today's deny), or an input request to answer with. */
export type PersonStep = { decided: EscalationRow | undefined } | { inputRequired: InputRequiredResult };

/** The escalated call as a sealed state binds it: the act, the request (tool, arguments digest) and the principal. */
export function escalatedCall(c: ProxyContext, act: AgentCandidateAct): EscalatedCall {
  return {
    candidate_act_id: act.candidate_act_id,
    binding_digest: actBindingDigest(act, c.gate.sinkId),
    tool: act.tool.tool_id,
    arguments_digest: act.arguments_digest.value,
    principal: act.initiating_principal.principal_id,
  };
}

/**
 * The sealed state a retried call echoes, opened for exactly this call — before anything runs. A
 * state that fails (tampered, another gate's, expired, another call's or principal's) is refused
 * with the reason: it grants nothing (mrtr, Server Requirements 4 and 5).
 */
export async function retriedState(
  c: ProxyContext,
  act: AgentCandidateAct,
  agent: AgentApproval | undefined,
): Promise<{ ok: true; state?: ApprovalRequestState } | { ok: false; reason: string }> {
  if (agent?.requestState === undefined) return { ok: true };
  const opened = await openRetriedState(c.requestStates, escalatedCall(c, act), agent.requestState);
  if (!opened.ok) c.log('request_state_refused', { candidate_act_id: act.candidate_act_id, reason: opened.reason }, 'warn');
  return opened;
}

function approvalDeps(c: ProxyContext): ApprovalDeps {
  return {
    escalations: c.escalations,
    links: c.approvalLinks,
    sealer: c.requestStates,
    pageUrl: c.approvalsUrl(),
    clock: c.clock,
    ...(c.approvalLinkTtlMs !== undefined ? { linkTtlMs: c.approvalLinkTtlMs } : {}),
  };
}

/** The person step: an input request for the client, or the decision (or none) after waiting. */
export async function personStep(
  c: ProxyContext,
  act: AgentCandidateAct,
  extra: RequestExtra,
  agent: AgentApproval | undefined,
  retried: ApprovalRequestState | undefined,
): Promise<PersonStep> {
  // A retry after the client's answer: the person may be deciding on the page right now.
  if (retried && c.approvalTimeoutMs > 0) {
    const row = await awaitApproval(c, act, extra, Math.min(c.approvalTimeoutMs, RETRY_WAIT_MS), true);
    if (row) return { decided: row };
  }
  const call = escalatedCall(c, act);
  const a: ApprovalAnswer = agent ? await answerEscalatedCall(approvalDeps(c), call, agent.client, retried) : { answer: 'wait' };
  switch (a.answer) {
    case 'input_required':
      if (!retried) notifyWaiting(c, act);
      c.log('approval_input_required', {
        candidate_act_id: act.candidate_act_id,
        round: (retried?.round ?? 0) + 1,
        link_expires_at: a.link.expires_at,
      });
      return { inputRequired: a.result };
    case 'elicit': {
      notifyWaiting(c, act);
      let action: 'accept' | 'decline' | 'cancel' = 'cancel';
      try {
        // The person consents in the client, then decides on the page: bounded by the link's life, after which the URL is useless.
        action = (await agent!.elicit!(a.params, Math.max(a.link.expires_at - c.clock.now(), 1000))).action;
      } catch {
        // A client that failed to answer has not agreed to open the page.
      }
      c.log('approval_elicitation', { candidate_act_id: act.candidate_act_id, action });
      return decidedBy(c, act, extra, await answerAfterElicitation(approvalDeps(c), call, action), true);
    }
    default:
      return decidedBy(c, act, extra, a, !!retried);
  }
}

/** The store's answer as the pipeline takes it: the decided row to resume with, else wait (today's answer) or nothing. */
async function decidedBy(
  c: ProxyContext,
  act: AgentCandidateAct,
  extra: RequestExtra,
  a: ApprovalAnswer,
  notified: boolean,
): Promise<PersonStep> {
  if (a.answer === 'wait')
    return { decided: c.approvalTimeoutMs > 0 ? await awaitApproval(c, act, extra, c.approvalTimeoutMs, notified) : undefined };
  if (a.answer === 'run' || (a.answer === 'refuse' && a.code === 'EF_NOT_AUTHORIZED'))
    return { decided: await c.escalations.get(act.candidate_act_id) };
  return { decided: undefined };
}
