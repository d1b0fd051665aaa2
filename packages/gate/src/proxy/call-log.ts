/** What the proxy records of each `tools/call`: one log line, and the observation metric. Ids, codes and digests only. */
import type { AgentCandidateAct } from '../act.js';
import type { ProxyContext } from './options.js';
import type { ProxyMode } from './schema.js';

/** The call being answered: its tool name, when it started, and its act once mapped. */
export interface CallAt {
  name: string;
  started: number;
  act?: AgentCandidateAct;
}

export function logCall(c: ProxyContext, at: CallAt, fields: Record<string, unknown>): void {
  c.log('tools/call', {
    mode: c.mode,
    server_id: c.serverId,
    tool: at.name,
    candidate_act_id: at.act?.candidate_act_id ?? null,
    arguments_digest: at.act?.arguments_digest.value ?? null,
    consequence_class: at.act?.consequence_class ?? null,
    ...fields,
    ms: c.clock.now() - at.started,
  });
}

/** One deny (enforced, or what observe mode would have refused) for the pilot metric. */
export async function recordObservation(c: ProxyContext, mode: ProxyMode, code: string, at: CallAt): Promise<void> {
  const { act, name } = at;
  try {
    await c.tables.recordObservation({
      recorded_at: c.clock.now(),
      mode,
      server_id: c.serverId,
      tool_name: name,
      consequence_class:
        act?.consequence_class ?? c.gate.classify({ tool_id: name, function_id: name, tool_protocol: 'MCP', tool_endpoint: c.serverId }),
      code,
      candidate_act_id: act?.candidate_act_id ?? null,
      arguments_digest: act?.arguments_digest.value ?? null,
    });
  } catch {
    // The metric is best effort; the decision it describes already stands.
    c.log('observation_not_recorded', { tool: name, code }, 'warn');
  }
}
