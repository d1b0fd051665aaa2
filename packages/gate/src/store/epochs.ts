/** The epochs port on the store engine (Finality-bound revocation draft: policy, authority and revocation epochs). */
import type { PolicyState } from '../act.js';
import type { StoreCallOptions } from './dialect.js';
import type { StoreEngine } from './engine.js';
import { StoreTimeoutError } from './errors.js';
import type { Epochs } from './ports.js';

const EPOCHS = ['policy_epoch', 'authority_epoch', 'revocation_epoch'] as const;

export class SqlEpochs implements Epochs {
  constructor(private readonly engine: StoreEngine) {}

  /**
   * The current epochs: one plain read, outside any transaction. What an act is built on need not
   * be ordered against bumps: every write that depends on the epochs reads them again in its own
   * transaction (`epochsQuery`), so a bump committed after this read makes that act stale there,
   * never allowed. A transaction here would cost a PostgreSQL call three more round trips
   * (BEGIN, its bounds, COMMIT) and a SQLite call the write lock. Past `timeoutMs` the read fails
   * with StoreTimeoutError (enforce() contract MUST 5: "never return allow=true on timeout").
   */
  async current(opts?: StoreCallOptions): Promise<PolicyState> {
    const { db, q } = this.engine;
    const read = db.executeQuery(q.epochsNow({}).compile()).then(({ rows }) => {
      if (!rows[0]) throw new Error('gate_policy_state row is missing');
      return rows[0];
    });
    const ms = opts?.timeoutMs;
    if (ms === undefined) return read;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreTimeoutError(`the store did not answer the epoch read within ${ms} ms`)), ms);
    });
    try {
      return await Promise.race([read, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async syncPolicyDigest(digest: string, now: number): Promise<PolicyState> {
    return this.engine.write(async (db) => {
      const row = await db.selectFrom('gate_policy_state').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
      if (row.policy_digest === digest) return pickEpochs(row);
      // A first policy only records its digest; a changed policy invalidates authority issued under the old one.
      const bump = row.policy_digest === null ? 0 : 1;
      const updated = await db
        .updateTable('gate_policy_state')
        .set((eb) => ({ policy_epoch: eb('policy_epoch', '+', bump), policy_digest: digest, updated_at: now }))
        .where('id', '=', 1)
        .returningAll()
        .executeTakeFirstOrThrow();
      return pickEpochs(updated);
    });
  }

  async bump(epoch: keyof PolicyState, now: number): Promise<PolicyState> {
    if (!EPOCHS.includes(epoch)) throw new RangeError(`unknown epoch ${String(epoch)}`);
    return this.engine.write(async (db) => {
      const updated = await db
        .updateTable('gate_policy_state')
        .set((eb) => ({ [epoch]: eb(epoch, '+', 1), updated_at: now }))
        .where('id', '=', 1)
        .returningAll()
        .executeTakeFirstOrThrow();
      return pickEpochs(updated);
    });
  }
}

export function sameEpochs(a: PolicyState, b: PolicyState): boolean {
  return a.policy_epoch === b.policy_epoch && a.authority_epoch === b.authority_epoch && a.revocation_epoch === b.revocation_epoch;
}

function pickEpochs(row: PolicyState): PolicyState {
  return { policy_epoch: row.policy_epoch, authority_epoch: row.authority_epoch, revocation_epoch: row.revocation_epoch };
}
