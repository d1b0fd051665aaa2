/**
 * The audit trail the approvals page shows, read through one interface so the page does not
 * depend on where decisions are recorded.
 */
import type { DecisionTrailEntry, DecisionTrailFilter, Ledger } from '../store/ports.js';

export type AuditTrailEntry = DecisionTrailEntry;
export type AuditTrailFilter = DecisionTrailFilter;

/** Where the page reads the audit trail from. */
export interface AuditTrailSource {
  list(filter: AuditTrailFilter): Promise<AuditTrailEntry[]>;
}

/**
 * The audit trail from the gate's decision tables: the evidence of every authorize decision
 * and the people's decisions on escalations, newest first. This is the seam where a
 * hash-chained audit log, when the store has one, replaces these tables as the source.
 */
export function decisionTablesAuditTrail(ledger: Pick<Ledger, 'decisionTrail'>): AuditTrailSource {
  return { list: (filter) => ledger.decisionTrail(filter) };
}
