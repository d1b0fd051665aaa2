/** The audit log port on the store engine: the chain's appends, reads and signed checkpoints (audit/chain.ts). */
import { sql } from 'kysely';
import type { AuditEvent, AuditKind, AuditSigner } from '../audit/chain.js';
import type { AuditHead, AuditLog, AuditReadOptions, AuditSearch } from '../audit/port.js';
import type { AuditCheckpointTable, AuditTable } from '../audit/schema.js';
import type { StoreCallOptions } from './dialect.js';
import { appendEntries, type StoreEngine } from './engine.js';

export class SqlAuditLog implements AuditLog {
  constructor(private readonly engine: StoreEngine) {}

  append(events: readonly AuditEvent[], now: number, opts?: StoreCallOptions): Promise<AuditHead> {
    const { ops, q, checkpoints } = this.engine;
    return ops.run(() => appendEntries(q, events, now, checkpoints), opts?.timeoutMs);
  }

  async head(): Promise<AuditHead> {
    return await this.engine.db.selectFrom('gate_audit_head').select(['seq', 'hash']).where('id', '=', 1).executeTakeFirstOrThrow();
  }

  async read(opts: AuditReadOptions): Promise<AuditTable[]> {
    let q = this.engine.db
      .selectFrom('gate_audit')
      .selectAll()
      .where('seq', '>', opts.afterSeq ?? 0);
    if (opts.since !== undefined) q = q.where('at', '>=', opts.since);
    return q.orderBy('seq').limit(opts.limit).execute();
  }

  async search(f: AuditSearch): Promise<AuditTable[]> {
    let q = this.engine.db.selectFrom('gate_audit').selectAll().orderBy('seq', 'desc').limit(f.limit);
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
    return rows.map((r) => ({ ...r, seq: Number(r.seq), at: Number(r.at) }));
  }

  async checkpoints(): Promise<AuditCheckpointTable[]> {
    return this.engine.db.selectFrom('gate_audit_checkpoint').selectAll().orderBy('seq').execute();
  }

  useSigner(signer: AuditSigner): void {
    this.engine.useAuditSigner(signer);
  }

  checkpoint(now: number, opts?: { ifOwed?: boolean }): Promise<void> {
    return this.engine.checkpointAudit(now, opts);
  }
}
