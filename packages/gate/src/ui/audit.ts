/**
 * The audit trail the approvals page shows, read through one interface so the page does not
 * depend on where decisions are recorded.
 */
import { sql } from 'kysely';
import { KyselyAuthorityStore } from '../store/kysely-store.js';
import type { AuthorityStore } from '../store/types.js';

export interface AuditTrailEntry {
  at: number;
  /** What was decided: ISSUED, ESCALATED, DENIED (the gate), APPROVED, REJECTED (a person). */
  decision: string;
  candidate_act_id: string;
  code: string | null;
  /** Digests only: the trail never holds raw arguments. */
  digest: string | null;
  actor: string | null;
}

export interface AuditTrailFilter {
  decision?: string;
  /** Substring of the candidate act id. */
  act?: string;
  since?: number;
  limit: number;
}

/** Where the page reads the audit trail from. */
export interface AuditTrailSource {
  list(filter: AuditTrailFilter): Promise<AuditTrailEntry[]>;
}

/**
 * The audit trail from the gate's decision tables: the evidence of every authorize decision
 * and the people's decisions on escalations, newest first. This is the seam where a
 * hash-chained audit log, when the store has one, replaces these tables as the source.
 */
export function decisionTablesAuditTrail(store: AuthorityStore): AuditTrailSource {
  if (!(store instanceof KyselyAuthorityStore)) throw new TypeError('the audit trail needs a Kysely authority store');
  const db = store.kysely;
  return {
    async list(f) {
      let ev = db
        .selectFrom('gate_evidence')
        .select(['recorded_at', 'decision', 'candidate_act_id', 'code', 'arguments_digest', 'approver'])
        .orderBy('recorded_at', 'desc')
        .limit(f.limit);
      let esc = db
        .selectFrom('gate_escalation')
        .select(['decided_at', 'status', 'candidate_act_id', 'binding_digest', 'approver'])
        .where('status', '!=', 'PENDING')
        .orderBy('decided_at', 'desc')
        .limit(f.limit);
      if (f.since !== undefined) {
        ev = ev.where('recorded_at', '>=', f.since);
        esc = esc.where('decided_at', '>=', f.since);
      }
      if (f.act) {
        // The substring matches literally: `%`, `_` and `\` in the filter box are escaped.
        const pattern = `%${f.act.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        ev = ev.where(sql<boolean>`candidate_act_id like ${pattern} escape '\\'`);
        esc = esc.where(sql<boolean>`candidate_act_id like ${pattern} escape '\\'`);
      }
      const gate = f.decision === undefined || ['ISSUED', 'ESCALATED', 'DENIED'].includes(f.decision);
      const person = f.decision === undefined || ['APPROVED', 'REJECTED'].includes(f.decision);
      if (f.decision !== undefined) {
        ev = ev.where('decision', '=', f.decision as 'ISSUED');
        esc = esc.where('status', '=', f.decision as 'APPROVED');
      }
      const entries: AuditTrailEntry[] = [
        ...(gate ? await ev.execute() : []).map((r) => ({
          at: Number(r.recorded_at),
          decision: r.decision,
          candidate_act_id: r.candidate_act_id,
          code: r.code,
          digest: r.arguments_digest,
          actor: r.approver ?? 'gate',
        })),
        ...(person ? await esc.execute() : []).map((r) => ({
          at: Number(r.decided_at),
          decision: r.status,
          candidate_act_id: r.candidate_act_id,
          code: null,
          digest: r.binding_digest,
          actor: r.approver,
        })),
      ];
      return entries.sort((a, b) => b.at - a.at).slice(0, f.limit);
    },
  };
}
