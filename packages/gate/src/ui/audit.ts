/**
 * The audit trail the approvals page shows, read through one interface so the page does not
 * depend on where decisions are recorded.
 */
import type { AuditEntry, AuditKind } from '../audit/chain.js';
import type { AuditLog, AuditSearch } from '../audit/port.js';

/** One entry as `vrp gate audit export` prints it: ids, codes and digests, never arguments. */
export type AuditTrailEntry = AuditEntry;

/** Every kind of entry the chain records (audit/schema.ts), in the order the filter offers them. */
export const AUDIT_KINDS: readonly AuditKind[] = [
  'allow',
  'deny',
  'escalate',
  'approve',
  'reject',
  'issued',
  'consumed',
  'invoked',
  'result',
  'pin',
  'unpin',
];

/** The page's filter: the audit log's search. */
export type AuditTrailFilter = AuditSearch;

/** Where the page reads the audit trail from. */
export interface AuditTrailSource {
  /** The matching entries, newest first, and how many entries the whole chain holds. */
  list(filter: AuditTrailFilter): Promise<{ entries: AuditTrailEntry[]; chain: number }>;
}

/**
 * The audit trail from the store's hash-chained audit log: the entries `vrp gate audit export`
 * streams, every kind (allow, deny with its EF code, escalate, approve, reject, issued,
 * consumed, invoked, result, pin, unpin), newest first. Issue 36: the page once read the
 * evidence and escalation tables instead, which hold one row per act, so a replay denied with
 * EF_005 and the pins never showed (4 rows where the chain held 15).
 */
export function auditChainTrail(audit: Pick<AuditLog, 'search' | 'head'>): AuditTrailSource {
  return {
    async list(f) {
      const [entries, head] = await Promise.all([audit.search(f), audit.head()]);
      return { entries, chain: head.seq };
    },
  };
}
