/**
 * The dispatch journal: consumed → invoked → result (Tool-Use Binding draft, T-G and retries),
 * and the draft's retry rule for a repeated candidate act id (retries): "If consume already
 * happened, retry is a new act or a fetch of the original tool_result, never a second
 * invoke."
 */
import { denyDecision } from './enforce.js';
import type { EnforceDecision } from './errors.js';
import type { JournalState } from './store/ledger-schema.js';
import type { JournalRow } from './store/ports.js';

export type { JournalState };

/** What a retry of an act that already has a journal row gets. Never an invoke. */
export interface RetryOutcome {
  decision: EnforceDecision;
  /** The recorded tool result, when the first run finished and the live arguments are the same. */
  result?: unknown;
  replayed: boolean;
}

/**
 * The retry rule. The authority of this act was consumed (the journal row exists), so the
 * answer is a deny — with the original result attached when it was recorded for the same
 * arguments digest ("a fetch of the original tool_result").
 */
export function retryOutcome(row: JournalRow, liveDigest: string): RetryOutcome {
  if (row.state === 'EFFECT_RESULT_UNKNOWN') return { decision: denyDecision('EF_EFFECT_RESULT_UNKNOWN'), replayed: false };
  if (row.state === 'EFFECTUATED' && row.arguments_digest === liveDigest) {
    const out: RetryOutcome = { decision: denyDecision('EF_005'), replayed: true };
    if (row.result_json !== null) out.result = JSON.parse(row.result_json);
    return out;
  }
  // In flight elsewhere, failed, or other arguments under a reused id: never a second invoke.
  return { decision: denyDecision('EF_005'), replayed: false };
}

/** A journal row for people and scripts (`vrp gate journal`): digests and states only, never arguments. */
export interface JournalEntryView {
  candidate_act_id: string;
  state: JournalState;
  tool_id: string;
  authority_id: string;
  arguments_digest: string;
  owner: string;
  consumed_at: string;
  invoked_at: string | null;
  finished_at: string | null;
  error_code: string | null;
  has_result: boolean;
}

export function journalEntryView(row: JournalRow): JournalEntryView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    candidate_act_id: row.candidate_act_id,
    state: row.state,
    tool_id: row.tool_id,
    authority_id: row.authority_id,
    arguments_digest: row.arguments_digest,
    owner: row.owner,
    consumed_at: new Date(row.consumed_at).toISOString(),
    invoked_at: iso(row.invoked_at),
    finished_at: iso(row.finished_at),
    error_code: row.error_code,
    has_result: row.result_json !== null,
  };
}
