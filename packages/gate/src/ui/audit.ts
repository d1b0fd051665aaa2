/**
 * The audit trail the approvals page shows, read through one interface so the page does not
 * depend on where decisions are recorded.
 */
import { sql } from 'kysely';
import type { AuditEntry, AuditKind } from '../audit/chain.js';
import { KyselyAuthorityStore } from '../store/kysely-store.js';
import type { AuthorityStore } from '../store/types.js';

/** One entry as `vrp gate audit export` prints it: ids, codes and digests, never arguments. */
export type AuditTrailEntry = AuditEntry;

/** Every kind of entry the chain records (store/audit-schema.ts), in the order the filter offers them. */
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

export interface AuditTrailFilter {
  /** The entry's kind: what was decided (`deny`, `approve`, …). */
  kind?: string;
  /** The EF code (exact). */
  code?: string;
  /** Who decided (exact): the approver, the pinning person, the enforcer instance. */
  actor?: string;
  /** Substring of the candidate act id. */
  act?: string;
  since?: number;
  limit: number;
}

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
export function auditChainTrail(store: AuthorityStore): AuditTrailSource {
  if (!(store instanceof KyselyAuthorityStore)) throw new TypeError('the audit trail needs a Kysely authority store');
  const db = store.kysely;
  return {
    async list(f) {
      let q = db.selectFrom('gate_audit').selectAll().orderBy('seq', 'desc').limit(f.limit);
      if (f.kind) q = q.where('kind', '=', f.kind as AuditKind);
      if (f.code) q = q.where('code', '=', f.code);
      if (f.actor) q = q.where('actor', '=', f.actor);
      if (f.since !== undefined) q = q.where('at', '>=', f.since);
      if (f.act) {
        // The substring matches literally: `%`, `_` and `\` in the filter box are escaped.
        const pattern = `%${f.act.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        q = q.where(sql<boolean>`act_id like ${pattern} escape '\\'`);
      }
      const rows = await q.execute();
      // bigint columns come back as strings from PostgreSQL: numbers, as the export prints them.
      const entries = rows.map((r) => ({ ...r, seq: Number(r.seq), at: Number(r.at) }));
      return { entries, chain: (await store.auditHead()).seq };
    },
  };
}
