/**
 * The dispatch journal port on the store engine (Tool-Use Binding draft, T-G and retries):
 * CONSUMED → INVOKED → EFFECTUATED | FAILED, each transition with its audit entry in its transaction.
 */
import type { Compilable } from 'kysely';
import type { AuditEvent } from '../audit/chain.js';
import { appendEntries, first, type StoreEngine } from './engine.js';
import type { JournalState } from './ledger-schema.js';
import type { Journal, JournalRow, OutcomeRecord } from './ports.js';
import { prepared } from './prepared.js';

type JournalColumn = keyof Omit<JournalRow, 'candidate_act_id'>;
/** The values of a journal transition: the columns it sets (the query binds only those) and the row's act and owner. */
type TransitionValues = { readonly [k in JournalColumn | '_act' | '_owner']: unknown };
type TransitionQuery = (values: TransitionValues) => Compilable<Pick<JournalRow, 'tool_id' | 'arguments_digest'>>;

export class SqlJournal implements Journal {
  private readonly transitions = new Map<string, TransitionQuery>();

  constructor(private readonly engine: StoreEngine) {}

  async get(candidateActId: string): Promise<JournalRow | undefined> {
    return await this.engine.db.executeQuery(this.engine.q.journalOfAct({ act: candidateActId }).compile()).then((r) => r.rows[0]);
  }

  async list(opts: { limit?: number; state?: JournalState } = {}): Promise<JournalRow[]> {
    let q = this.engine.db.selectFrom('gate_journal').selectAll();
    if (opts.state) q = q.where('state', '=', opts.state);
    const rows = await q
      .orderBy('consumed_at', 'desc')
      .orderBy('candidate_act_id')
      .limit(opts.limit ?? 1000)
      .execute();
    return rows;
  }

  async markInvoked(candidateActId: string, owner: string, now: number): Promise<boolean> {
    return this.transition(candidateActId, owner, 'CONSUMED', { state: 'INVOKED', invoked_at: now }, { kind: 'invoked' }, now);
  }

  /**
   * The outcome is the one write that need not wait for the disk: the effect has happened and
   * its consume is already durable, so losing this row to a power failure leaves the act INVOKED,
   * which a restart reports as EFFECT_RESULT_UNKNOWN (the truth for that case) and never as a
   * second invoke. A crash of the process loses nothing.
   */
  async recordOutcome(candidateActId: string, owner: string, outcome: OutcomeRecord, now: number): Promise<boolean> {
    if (this.engine.ops.recordOutcomeOnce) {
      const { recorded, head } = await this.engine.ops.recordOutcomeOnce(candidateActId, owner, outcome, now);
      if (head) this.engine.signAfter(head, now);
      return recorded;
    }
    const set =
      outcome.state === 'EFFECTUATED'
        ? { state: 'EFFECTUATED' as const, result_json: outcome.result_json, finished_at: now }
        : { state: 'FAILED' as const, error_code: outcome.error_code, finished_at: now };
    return this.transition(
      candidateActId,
      owner,
      'INVOKED',
      set,
      { kind: 'result', code: outcome.state === 'FAILED' ? outcome.error_code : null },
      now,
      'process',
    );
  }

  async recoverUnfinished(owner: string, now: number): Promise<number> {
    return this.engine.write(async (db) => {
      const rows = await db
        .updateTable('gate_journal')
        .set({ state: 'EFFECT_RESULT_UNKNOWN', finished_at: now })
        .where('owner', '=', owner)
        .where('state', 'in', ['CONSUMED', 'INVOKED'])
        .returning(['candidate_act_id', 'tool_id', 'arguments_digest'])
        .execute();
      await this.engine.appendAuditIn(
        db,
        rows.map((r) => ({
          kind: 'result' as const,
          act_id: r.candidate_act_id,
          tool: r.tool_id,
          digest: r.arguments_digest,
          code: 'EF_EFFECT_RESULT_UNKNOWN',
          actor: owner,
        })),
        now,
      );
      return rows.length;
    });
  }

  /** The journal transition's UPDATE, compiled once per (from state, columns set) shape. */
  private transitionQuery(from: JournalState, cols: readonly JournalColumn[]): TransitionQuery {
    const key = `${from}:${cols.join(',')}`;
    let query = this.transitions.get(key);
    if (query === undefined) {
      query = prepared<JournalColumn | '_act' | '_owner', Pick<JournalRow, 'tool_id' | 'arguments_digest'>>(
        [...cols, '_act', '_owner'],
        (m) =>
          this.engine.db
            .updateTable('gate_journal')
            .set(Object.fromEntries(cols.map((c) => [c, m[c]])))
            .where('candidate_act_id', '=', m._act)
            .where('owner', '=', m._owner)
            .where('state', '=', from)
            .returning(['tool_id', 'arguments_digest']),
      );
      this.transitions.set(key, query);
    }
    return query;
  }

  private async transition(
    candidateActId: string,
    owner: string,
    from: JournalState,
    set: Partial<Omit<JournalRow, 'candidate_act_id'>>,
    event: Pick<AuditEvent, 'kind' | 'code'>,
    now: number,
    durability: 'disk' | 'process' = 'disk',
  ): Promise<boolean> {
    const { ops, q, checkpoints } = this.engine;
    const update = this.transitionQuery(from, Object.keys(set) as (keyof typeof set)[]);
    return ops.run(
      function* () {
        const r = yield* first(update({ ...set, _act: candidateActId, _owner: owner } as TransitionValues));
        if (!r) return false;
        const entry = { ...event, act_id: candidateActId, tool: r.tool_id, digest: r.arguments_digest, actor: owner };
        yield* appendEntries(q, [entry], now, checkpoints);
        return true;
      },
      undefined,
      durability,
    );
  }
}
