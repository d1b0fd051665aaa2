/**
 * Observe mode (docs/gateway.md, "Observe mode"): every call is forwarded; what enforce would have
 * refused is recorded (the pilot metric), never enforced.
 */
import type { CallToolRequest, CallToolResult, InputRequiredResult } from '@modelcontextprotocol/client';
import type { AgentCandidateAct, PolicyState } from '../act.js';
import type { Gate } from '../gate.js';
import type { DispatchGate } from '../host/dispatch-mapped.js';
import { type CallAt, logCall, recordObservation } from './call-log.js';
import type { Downstream, RequestExtra } from './downstream-link.js';
import type { ProxyContext } from './options.js';
import { downstreamFailure } from './results.js';

/**
 * Observe mode only: how long the policy epochs read from the store are reused for the acts it
 * builds. Observe forwards every call whatever the epochs, and policy evaluation does not read
 * them; enforce mode reads them per call, as the gate refuses authority for an act whose epochs
 * are no longer current (Tool-Use Binding draft, enforce() contract MUST 5).
 */
export const OBSERVE_EPOCHS_CACHE_MS = 1000;

/** The gate as observe mode's mappers see it: the epochs read at most every `OBSERVE_EPOCHS_CACHE_MS`; a failed read is not kept. */
export function observeModeGate(gate: Gate): DispatchGate {
  let epochs: { readAt: number; state: Promise<PolicyState> } | undefined;
  return {
    sinkId: gate.sinkId,
    classify: (tool) => gate.classify(tool),
    dispatch: (act, liveArgs, invoke) => gate.dispatch(act, liveArgs, invoke),
    policyState: () => {
      const now = performance.now();
      if (!epochs || now - epochs.readAt >= OBSERVE_EPOCHS_CACHE_MS) {
        const state = gate.policyState();
        const entry = { readAt: now, state };
        epochs = entry;
        state.catch(() => {
          if (epochs === entry) epochs = undefined;
        });
      }
      return epochs.state;
    },
  };
}

/** Forward the call as it is; record what enforce would have refused (an unpinned tool, a policy deny or escalation). */
export async function forwardObserved(
  c: ProxyContext,
  link: Downstream,
  call: { act: AgentCandidateAct; sent: CallToolRequest['params'] },
  pinned: boolean,
  at: CallAt,
  extra: RequestExtra,
): Promise<{ downstream: CallToolResult | InputRequiredResult } | { own: CallToolResult }> {
  const would = pinned ? c.policy.evaluate(call.act) : { decision: 'deny' as const, code: 'EF_TOOL_NOT_PINNED' as const };
  if (would.decision !== 'issue') await recordObservation(c, 'observe', would.code, at);
  try {
    const result = await link.callTool(call.sent, extra);
    logCall(c, at, { allow: true, invoked: true, would_deny: would.decision === 'issue' ? null : would.code });
    return { downstream: result };
  } catch (e) {
    logCall(c, at, { allow: true, invoked: true, error: true });
    return { own: downstreamFailure(e) };
  }
}
