/**
 * An escalated call waits for a person (Tool-Use Binding draft, escalation; docs/gateway.md,
 * "Approving an act"): its arguments are kept for the approvals page, a notice goes to
 * `--notify-url`, progress goes to the agent, and the wait is bounded.
 */
import { canonicalJson } from '@vrpkit/core';
import type { AgentCandidateAct } from '../act.js';
import { escalationNotice, sendEscalationNotice, waitForEscalationDecision } from '../escalation.js';
import type { RequestExtra } from './downstream-link.js';
import type { ProxyContext } from './options.js';

/**
 * Keep the arguments of an escalated act for the person deciding (the approvals page shows
 * them in full); purged once decided plus the retention period.
 */
export async function retainArguments(c: ProxyContext, act: AgentCandidateAct, args: Record<string, unknown>): Promise<void> {
  try {
    await c.pendingArguments.record({
      candidate_act_id: act.candidate_act_id,
      arguments_json: canonicalJson(args),
      arguments_digest: act.arguments_digest.value,
      recorded_at: c.clock.now(),
    });
  } catch {
    // The page then shows the digest only; the escalation itself is recorded.
    c.log('arguments_not_retained', { candidate_act_id: act.candidate_act_id }, 'warn');
  }
}

/** The `--notify-url` notice that an act waits for a person: once per act, never awaited. */
export function notifyWaiting(c: ProxyContext, act: AgentCandidateAct): void {
  if (!c.notifyUrl) return;
  const notice = escalationNotice(act, c.gate.sinkId, c.clock.now(), c.approvalsUrl() ?? null);
  // Never awaited: a slow or failing receiver does not delay the wait or the decision.
  void sendEscalationNotice(c.notifyUrl, notice, (reason) =>
    c.log('notify_failed', { candidate_act_id: act.candidate_act_id, reason }, 'warn'),
  );
}

/**
 * Wait (at most `waitMs`, by default `approvalTimeoutMs`) for a person's decision on an escalated
 * act, sending MCP progress notifications when the agent asked for them, and the `--notify-url`
 * notice unless it went out already (`notified`: a later round of the same call).
 */
export async function awaitApproval(
  c: ProxyContext,
  act: AgentCandidateAct,
  extra: RequestExtra,
  waitMs = c.approvalTimeoutMs,
  notified = false,
) {
  c.log('approval_waiting', { candidate_act_id: act.candidate_act_id, timeout_ms: waitMs });
  if (!notified) notifyWaiting(c, act);
  const token = extra._meta?.progressToken;
  const decided = await waitForEscalationDecision(c.escalations, act.candidate_act_id, {
    timeoutMs: waitMs,
    signal: AbortSignal.any([extra.signal, c.stopped]),
    clock: c.clock,
    onWaiting: (elapsed) => {
      if (token === undefined) return;
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: {
            progressToken: token,
            progress: elapsed / 1000,
            total: waitMs / 1000,
            message: `waiting for a person to approve candidate act ${act.candidate_act_id}`,
          },
        })
        .catch(() => {});
    },
  });
  c.log('approval_wait_ended', { candidate_act_id: act.candidate_act_id, status: decided?.status ?? 'PENDING' });
  return decided;
}
