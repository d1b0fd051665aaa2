/**
 * One escalated act as the approvals page shows it (the list at `/` and an approval link's page):
 * the act, its retained arguments — shown only when their digest is the act's (fail closed) — and
 * its tool's pin.
 */
import type { AgentCandidateAct } from '../act.js';
import { digestArguments } from '../act.js';
import type { ProxyTables } from '../proxy/tables.js';
import type { EscalationRow } from '../store/ports.js';
import type { PendingView } from './pages.js';
import type { PendingArguments } from './pending-arguments.js';

/** Where a view's parts are read from. */
export interface PendingViewSources {
  pins: Pick<ProxyTables, 'getPin'>;
  pendingArguments: Pick<PendingArguments, 'get'>;
}

/** One pending act as the page shows it: the act, its retained arguments (checked against the act's digest), its tool's pin. */
export async function pendingView(o: PendingViewSources, row: EscalationRow): Promise<PendingView> {
  const act = JSON.parse(row.act_json) as AgentCandidateAct;
  const retained = await o.pendingArguments.get(row.candidate_act_id);
  let args: PendingView['args'] = { state: 'absent' };
  if (retained) {
    try {
      const parsed: unknown = JSON.parse(retained.arguments_json);
      // Shown only if they are exactly the arguments the act's digest covers (fail closed).
      args =
        digestArguments(parsed).value === act.arguments_digest.value
          ? { state: 'ok', pretty: JSON.stringify(parsed, null, 2) }
          : { state: 'mismatch' };
    } catch {
      args = { state: 'mismatch' };
    }
  }
  const server = act.tool.tool_endpoint;
  const pin = server ? await o.pins.getPin(server, act.tool.tool_id) : undefined;
  return {
    row,
    act,
    args,
    pin: pin
      ? {
          pinned_digest: pin.pinned_digest,
          seen_digest: pin.seen_digest,
          definition: pin.pinned_digest === pin.seen_digest ? JSON.stringify(JSON.parse(pin.seen_definition), null, 2) : null,
        }
      : null,
  };
}
