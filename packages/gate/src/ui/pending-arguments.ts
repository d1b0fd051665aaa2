/**
 * The port over the arguments of escalated acts (ui/pending-arguments-schema.ts) and its
 * implementation on the store engine: kept for the person deciding (the proxy records them, the
 * approvals page shows them) and purged once decided (or expired) plus a retention period.
 */
import type { Kysely } from 'kysely';
import type { GateDatabase, StoreEngine } from '../store/engine.js';
import type { PendingArgumentsDatabase, PendingArgumentsTable } from './pending-arguments-schema.js';

/** The default retention after a decision (`--retain-arguments`): 7 days. */
export const DEFAULT_ARGUMENTS_RETENTION_MS = 7 * 86_400_000;

export interface PendingArguments {
  /** Keep the arguments of an escalated act (the first copy stays: its digest is the act's, and the act id binds it). */
  record(row: PendingArgumentsTable): Promise<void>;
  get(candidateActId: string): Promise<PendingArgumentsTable | undefined>;
  /**
   * Delete the arguments of acts decided, or expired while pending, more than `retentionMs`
   * ago, and of acts with no escalation at all. Returns how many were purged.
   */
  purge(now: number, retentionMs: number): Promise<number>;
}

/** The pending-arguments queries over the store's own connection. */
export class SqlPendingArguments implements PendingArguments {
  private readonly db: Kysely<GateDatabase & PendingArgumentsDatabase>;

  constructor(engine: StoreEngine) {
    this.db = engine.db.withTables<PendingArgumentsDatabase>();
  }

  async record(row: PendingArgumentsTable): Promise<void> {
    await this.db
      .insertInto('gate_pending_arguments')
      .values(row)
      .onConflict((oc) => oc.column('candidate_act_id').doNothing())
      .execute();
  }

  async get(candidateActId: string): Promise<PendingArgumentsTable | undefined> {
    return await this.db.selectFrom('gate_pending_arguments').selectAll().where('candidate_act_id', '=', candidateActId).executeTakeFirst();
  }

  async purge(now: number, retentionMs: number): Promise<number> {
    const cutoff = now - retentionMs;
    const r = await this.db
      .deleteFrom('gate_pending_arguments')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('gate_escalation')
              .select('gate_escalation.candidate_act_id')
              .whereRef('gate_escalation.candidate_act_id', '=', 'gate_pending_arguments.candidate_act_id')
              .where((e) =>
                e.or([
                  e.and([e('status', '=', 'PENDING'), e('expires_at', '>', cutoff)]),
                  e.and([e('status', '!=', 'PENDING'), e('decided_at', '>', cutoff)]),
                ]),
              ),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
