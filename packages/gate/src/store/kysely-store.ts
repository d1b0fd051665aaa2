/**
 * The authority store on Kysely: one set of queries for SQLite and PostgreSQL. The only
 * per-dialect code is how a write transaction is opened and driven (`DialectOps`), because
 * that is where the two databases differ in how they serialize a consume against other
 * consumes and epoch bumps (see docs/gate.md "Store guarantees").
 *
 * The hot-path transactions (consume, decision, journal transitions, epoch read) are step
 * programs: generators that yield Kysely queries and receive their rows. PostgreSQL drives
 * them asynchronously inside a transaction; SQLite drives them synchronously inside one
 * better-sqlite3 `BEGIN IMMEDIATE` transaction with prepared statements, which keeps the
 * consume's p99 near the raw durable CAS (docs/gate.md "Kysely on the hot path").
 */
import { type Clock, systemClock } from '@vrpkit/core';
import type { Compilable, CompiledQuery, Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { PolicyState } from '../act.js';
import { type AuditEvent, type AuditSigner, chainEntries, checkpointDue, signCheckpoint } from '../audit/chain.js';
import type { EfCode } from '../errors.js';
import type { AuditCheckpointTable, AuditHeadTable, AuditTable } from './audit-schema.js';
import { ActHasAuthority, EscalationBindingConflict, StoreTimeoutError } from './errors.js';
import { BoundQuery, compileMarked, prepared } from './prepared.js';
import { type GateDatabase, type JournalState, MIGRATIONS } from './schema.js';
import type {
  AuditHead,
  AuditReadOptions,
  AuthorityRow,
  AuthorityStore,
  ConsumeOutcome,
  ConsumeRequest,
  DecisionRecord,
  DecisionResult,
  EscalationRow,
  EvidenceRow,
  IssueAndConsumeRecord,
  IssueAndConsumeResult,
  JournalRow,
  OutcomeRecord,
  StoreCallOptions,
} from './types.js';

export type Db = Kysely<GateDatabase> | Transaction<GateDatabase>;

type ConsumeRefusal = Extract<ConsumeOutcome, { ok: false }>;

/** A transaction body: yields queries, receives each one's rows, returns the result. */
export type Program<T> = Generator<Compilable, T, readonly unknown[]>;

export interface DialectOps {
  readonly name: 'sqlite' | 'postgres';
  /**
   * Run `fn` in a transaction that is serialized with every other write transaction
   * touching the same authority or the epochs, within `timeoutMs` or not at all.
   */
  write<T>(fn: (db: Db) => Promise<T>, timeoutMs: number | undefined): Promise<T>;
  /**
   * Run a step program in such a transaction (same guarantees as `write`). `durability: 'process'`
   * relaxes only the commit's flush: the transaction survives a crash of this process but may be
   * lost on power loss or an OS crash (SQLite WAL `synchronous = NORMAL`, PostgreSQL
   * `synchronous_commit = off`), and only as a suffix — the next full commit flushes it too.
   */
  run<T>(program: (db: Db) => Program<T>, timeoutMs: number | undefined, durability?: 'disk' | 'process'): Promise<T>;
  /** The epoch read inside a write transaction, ordered against bumps (PostgreSQL: FOR SHARE). */
  epochsQuery(db: Db): SelectQueryBuilder<GateDatabase, 'gate_policy_state', PolicyState>;
  /** The audit head read inside a write transaction, locked until commit (PostgreSQL: FOR UPDATE), so appends form one chain. */
  auditHeadQuery(db: Db): SelectQueryBuilder<GateDatabase, 'gate_audit_head', Pick<AuditHeadTable, 'seq' | 'hash'>>;
  /**
   * The consume (checks, conditional UPDATE, journal, audit entry) as one statement, where the
   * dialect has one (PostgreSQL: one round trip); otherwise the step program runs.
   */
  consumeOnce?(req: ConsumeRequest, timeoutMs: number | undefined): Promise<{ outcome: ConsumeOutcome; head: AuditHead }>;
  /** `issueAndConsume` as one statement, where the dialect has one (PostgreSQL); `head` is absent when nothing was written. */
  issueAndConsumeOnce?(
    record: IssueAndConsumeRecord,
    req: ConsumeRequest,
    timeoutMs: number | undefined,
  ): Promise<{ result: IssueAndConsumeResult; head?: AuditHead }>;
  /** `recordOutcome` as one statement, where the dialect has one (PostgreSQL); `head` is absent when nothing was written. */
  recordOutcomeOnce?(
    candidateActId: string,
    owner: string,
    outcome: OutcomeRecord,
    now: number,
  ): Promise<{ recorded: boolean; head?: AuditHead }>;
  /** Release what the dialect holds beside the Kysely connection (called before the connection closes). */
  close(): Promise<void>;
}

/** The consume path's queries and the single-entry audit append, compiled once per store (store/prepared.ts). */
function hotQueries(db: Kysely<GateDatabase>, ops: DialectOps) {
  return {
    epochs: prepared([], () => ops.epochsQuery(db)),
    /** The epochs outside a transaction (no lock): what an act is built on. */
    epochsNow: prepared([], () =>
      db.selectFrom('gate_policy_state').select(['policy_epoch', 'authority_epoch', 'revocation_epoch']).where('id', '=', 1),
    ),
    authorityOfAct: prepared(['act'], (m) => db.selectFrom('gate_authority').selectAll().where('candidate_act_id', '=', m.act)),
    /** What the consume checks of an act's authority: not its JWS, nor its evidence or times of use. */
    checkedAuthorityOfAct: prepared(['act'], (m) =>
      db.selectFrom('gate_authority').select(CHECKED_COLUMNS).where('candidate_act_id', '=', m.act),
    ),
    journalOfAct: prepared(['act'], (m) => db.selectFrom('gate_journal').selectAll().where('candidate_act_id', '=', m.act)),
    evidence: prepared(EVIDENCE_COLUMNS, (m) => db.insertInto('gate_evidence').values(m)),
    authority: prepared(AUTHORITY_COLUMNS, (m) => db.insertInto('gate_authority').values(m)),
    /** MUST 4's conditional UPDATE: it repeats every binding, so a writer that slipped past the checks cannot consume twice. */
    consume: prepared(['id', 'now', 'owner', 'sink', 'digest', 'pe', 'ae', 're'], (m) =>
      db
        .updateTable('gate_authority')
        .set({ state: 'CONSUMED', consumed_at: m.now, consumed_by: m.owner })
        .where('authority_id', '=', m.id)
        .where('state', '=', 'ISSUED')
        .where('sink_id', '=', m.sink)
        .where('arguments_digest', '=', m.digest)
        .where('expires_at', '>', m.now)
        .where('policy_epoch', '=', m.pe)
        .where('authority_epoch', '=', m.ae)
        .where('revocation_epoch', '=', m.re)
        .returning('authority_id'),
    ),
    journalConsumed: prepared(['act', 'authority', 'digest', 'tool', 'owner', 'state', 'now', 'invoked'], (m) =>
      db.insertInto('gate_journal').values({
        candidate_act_id: m.act,
        authority_id: m.authority,
        arguments_digest: m.digest,
        tool_id: m.tool,
        owner: m.owner,
        state: m.state,
        consumed_at: m.now,
        invoked_at: m.invoked,
        finished_at: null,
        result_json: null,
        error_code: null,
      }),
    ),
    auditHead: prepared([], () => ops.auditHeadQuery(db)),
    auditEntries: auditInserts(db),
    moveHead: prepared(['seq', 'hash'], (m) => db.updateTable('gate_audit_head').set({ seq: m.seq, hash: m.hash }).where('id', '=', 1)),
    checkpoint: prepared(CHECKPOINT_COLUMNS, (m) => db.insertInto('gate_audit_checkpoint').values(m)),
  };
}

type HotQueries = ReturnType<typeof hotQueries>;

/**
 * The INSERT of n chained audit entries as one multi-row statement (an act appends up to four in
 * its transaction), compiled once per n: one statement to step instead of n. Each parameter is
 * bound straight from its entry's column.
 */
function auditInserts(db: Kysely<GateDatabase>): (entries: readonly AuditTable[]) => BoundQuery<unknown> {
  /** Per n: the statement, and per parameter the entry and the column it binds. */
  const byCount = new Map<number, { compiled: CompiledQuery<unknown>; row: number[]; column: AuditColumn[] }>();
  return (entries) => {
    const n = entries.length;
    let query = byCount.get(n);
    if (query === undefined) {
      const keys = Array.from({ length: n }, (_, i) => AUDIT_COLUMNS.map((c) => `${c}${i}`)).flat();
      const { compiled, binds } = compileMarked(keys, (m) =>
        db
          .insertInto('gate_audit')
          .values(
            Array.from({ length: n }, (_, i) => Object.fromEntries(AUDIT_COLUMNS.map((c) => [c, m[`${c}${i}`]!])) as unknown as AuditTable),
          ),
      );
      if (binds.includes(-1)) throw new Error('audit insert: a parameter binds no entry column');
      const row = binds.map((k) => Math.floor(k / AUDIT_COLUMNS.length));
      const column = binds.map((k) => AUDIT_COLUMNS[k % AUDIT_COLUMNS.length]!);
      query = { compiled, row, column };
      byCount.set(n, query);
    }
    const parameters = new Array<unknown>(query.row.length);
    for (let i = 0; i < parameters.length; i++) parameters[i] = entries[query.row[i]!]![query.column[i]!];
    return new BoundQuery(query.compiled, parameters);
  };
}

type JournalColumn = keyof Omit<JournalRow, 'candidate_act_id'>;
/** The values of a journal transition: the columns it sets (the query binds only those) and the row's act and owner. */
type TransitionValues = { readonly [k in JournalColumn | '_act' | '_owner']: unknown };
type TransitionQuery = (values: TransitionValues) => Compilable<Pick<JournalRow, 'tool_id' | 'arguments_digest'>>;

const AUDIT_COLUMNS = ['seq', 'at', 'kind', 'act_id', 'tool', 'server', 'digest', 'code', 'actor', 'prev_hash', 'hash'] as const;
type AuditColumn = (typeof AUDIT_COLUMNS)[number];
const CHECKPOINT_COLUMNS = ['seq', 'hash', 'at', 'kid', 'public_jwk', 'jws'] as const satisfies readonly (keyof AuditCheckpointTable)[];
/** The authority columns `checkAuthority` reads. */
const CHECKED_COLUMNS = [
  'authority_id',
  'state',
  'expires_at',
  'sink_id',
  'policy_epoch',
  'authority_epoch',
  'revocation_epoch',
  'destination_id',
  'tool_endpoint',
  'arguments_digest',
  'tool_id',
  'function_id',
  'consequence_class',
] as const satisfies readonly (keyof AuthorityRow)[];
type CheckedAuthority = Pick<AuthorityRow, (typeof CHECKED_COLUMNS)[number]>;
const EVIDENCE_COLUMNS = [
  'evidence_id',
  'candidate_act_id',
  'act_digest',
  'arguments_digest',
  'decision',
  'code',
  'reason',
  'policy_id',
  'policy_epoch',
  'authority_epoch',
  'revocation_epoch',
  'approver',
  'recorded_at',
] as const satisfies readonly (keyof EvidenceRow)[];
const AUTHORITY_COLUMNS = [
  'authority_id',
  'candidate_act_id',
  'evidence_id',
  'arguments_digest',
  'tool_id',
  'function_id',
  'tool_endpoint',
  'destination_id',
  'sink_id',
  'consequence_class',
  'issued_at',
  'expires_at',
  'policy_epoch',
  'authority_epoch',
  'revocation_epoch',
  'jws',
  'state',
  'consumed_at',
  'consumed_by',
  'revoked_at',
] as const satisfies readonly (keyof AuthorityRow)[];

/** Yield a query and take its first row. */
function* first<O>(q: Compilable<O>): Program<O | undefined> {
  const rows = (yield q) as O[];
  return rows[0];
}

/** Drive a step program asynchronously against a Kysely connection or transaction. */
export async function runAsync<T>(program: Program<T>, db: Db): Promise<T> {
  let step = program.next();
  while (!step.done) {
    const { rows } = await db.executeQuery(step.value.compile());
    step = program.next(rows);
  }
  return step.value;
}

const EPOCHS = ['policy_epoch', 'authority_epoch', 'revocation_epoch'] as const;

/** Apply pending migrations to a freshly built store; one that cannot migrate is closed (pool or file handle released) and the error rethrown. */
export async function migrated(store: KyselyAuthorityStore, now: number): Promise<KyselyAuthorityStore> {
  try {
    await store.migrate(now);
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}

export class KyselyAuthorityStore implements AuthorityStore {
  private auditSigner: AuditSigner | undefined;
  private readonly q: HotQueries;
  private readonly transitions = new Map<string, TransitionQuery>();
  /** Checkpoints being signed after a one-statement consume; close() waits for them. */
  private readonly signing = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<GateDatabase>,
    private readonly ops: DialectOps,
    readonly location: string,
    /** Dialect setup run inside the migration transaction before anything else (PostgreSQL: lock + schema). */
    private readonly beforeMigrate?: (db: Db) => Promise<void>,
    /** Dates the checkpoint signed on close. */
    private readonly clock: Clock = systemClock,
  ) {
    this.q = hotQueries(db, ops);
  }

  get dialect(): 'sqlite' | 'postgres' {
    return this.ops.name;
  }

  /** The query layer, for the additive tables whose queries live in their own module (store/proxy-tables.ts). */
  get kysely(): Kysely<GateDatabase> {
    return this.db;
  }

  /** Apply pending migrations in one write transaction (concurrent openers wait, then see them applied). */
  async migrate(now: number): Promise<void> {
    await this.ops.write(async (db) => {
      await this.beforeMigrate?.(db);
      await db.schema
        .createTable('gate_schema_migrations')
        .ifNotExists()
        .addColumn('version', 'integer', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('applied_at', 'bigint', (c) => c.notNull())
        .execute();
      const applied = new Set((await db.selectFrom('gate_schema_migrations').select('version').execute()).map((r) => Number(r.version)));
      for (const m of MIGRATIONS) {
        if (applied.has(m.version)) continue;
        await m.up(db as Kysely<GateDatabase>, now, this.ops.name);
        await db.insertInto('gate_schema_migrations').values({ version: m.version, name: m.name, applied_at: now }).execute();
      }
    }, undefined);
  }

  useAuditSigner(signer: AuditSigner): void {
    this.auditSigner = signer;
  }

  async appendAudit(events: readonly AuditEvent[], now: number, opts?: StoreCallOptions): Promise<AuditHead> {
    const { ops, q, auditSigner } = this;
    return ops.run(() => appendEntries(q, events, now, auditSigner), opts?.timeoutMs);
  }

  /** Within a caller's write transaction (store/proxy-tables.ts: a pin and its entry commit together). */
  appendAuditIn(db: Db, events: readonly AuditEvent[], now: number): Promise<AuditHead> {
    return runAsync(appendEntries(this.q, events, now, this.auditSigner), db);
  }

  /** A write transaction of this store, for the additive tables' queries (store/proxy-tables.ts). */
  write<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.ops.write(fn, undefined);
  }

  async auditHead(): Promise<AuditHead> {
    return await this.db.selectFrom('gate_audit_head').select(['seq', 'hash']).where('id', '=', 1).executeTakeFirstOrThrow();
  }

  async readAudit(opts: AuditReadOptions): Promise<AuditTable[]> {
    let q = this.db
      .selectFrom('gate_audit')
      .selectAll()
      .where('seq', '>', opts.afterSeq ?? 0);
    if (opts.since !== undefined) q = q.where('at', '>=', opts.since);
    return q.orderBy('seq').limit(opts.limit).execute();
  }

  async listAuditCheckpoints(): Promise<AuditCheckpointTable[]> {
    return this.db.selectFrom('gate_audit_checkpoint').selectAll().orderBy('seq').execute();
  }

  private async signHead(head: AuditHead, now: number): Promise<void> {
    const s = this.auditSigner;
    if (!s) return;
    await this.db
      .insertInto('gate_audit_checkpoint')
      .values(signCheckpoint(s, head.seq, head.hash, now))
      .onConflict((oc) => oc.column('seq').doNothing())
      .execute();
  }

  /** Sign the current head unless it is already signed (on shutdown). */
  async checkpointAudit(now: number): Promise<void> {
    const s = this.auditSigner;
    if (!s) return;
    await this.ops.write(async (db) => {
      const head = await runAsync(first(this.q.auditHead({})), db);
      if (!head || head.seq === 0) return;
      const signed = await db.selectFrom('gate_audit_checkpoint').select('seq').where('seq', '=', head.seq).executeTakeFirst();
      if (!signed)
        await db
          .insertInto('gate_audit_checkpoint')
          .values(signCheckpoint(s, head.seq, head.hash, now))
          .execute();
    }, undefined);
  }

  /**
   * The current epochs: one plain read, outside any transaction. What an act is built on need not
   * be ordered against bumps: every write that depends on the epochs reads them again in its own
   * transaction (`epochsQuery`), so a bump committed after this read makes that act stale there,
   * never allowed. A transaction here would cost a PostgreSQL call three more round trips
   * (BEGIN, its bounds, COMMIT) and a SQLite call the write lock. Past `timeoutMs` the read fails
   * with StoreTimeoutError (enforce() contract MUST 5: "never return allow=true on timeout").
   */
  async policyState(opts?: StoreCallOptions): Promise<PolicyState> {
    const read = this.db.executeQuery(this.q.epochsNow({}).compile()).then(({ rows }) => {
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
    return this.ops.write(async (db) => {
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
    }, undefined);
  }

  async bumpEpoch(epoch: keyof PolicyState, now: number): Promise<PolicyState> {
    if (!EPOCHS.includes(epoch)) throw new RangeError(`unknown epoch ${String(epoch)}`);
    return this.ops.write(async (db) => {
      const updated = await db
        .updateTable('gate_policy_state')
        .set((eb) => ({ [epoch]: eb(epoch, '+', 1), updated_at: now }))
        .where('id', '=', 1)
        .returningAll()
        .executeTakeFirstOrThrow();
      return pickEpochs(updated);
    }, undefined);
  }

  async recordDecision(record: DecisionRecord, opts?: StoreCallOptions): Promise<DecisionResult> {
    const { ops, q, auditSigner } = this;
    return ops.run(function* (db): Program<DecisionResult> {
      if (record.expectEpochs) {
        const current = yield* currentEpochs(q);
        if (!sameEpochs(current, record.expectEpochs)) return { recorded: false, current };
      }
      const esc = record.escalation;
      // An escalation row is immutable in what it binds: the act a person reviews is the act
      // an approval issues authority for. Re-escalating the act id with another binding is refused.
      if (esc) {
        const prior = yield* first(
          db.selectFrom('gate_escalation').select('binding_digest').where('candidate_act_id', '=', esc.candidate_act_id),
        );
        if (prior && prior.binding_digest !== esc.binding_digest) return { recorded: false, conflict: 'escalation_binding' };
      }
      // Evidence before authority: the authority row references it (foreign key), so it cannot exist without it.
      yield q.evidence(record.evidence);
      if (record.authority) yield q.authority(record.authority);
      if (esc) {
        const written = yield* first(
          db
            .insertInto('gate_escalation')
            .values(esc)
            .onConflict((oc) =>
              oc
                .column('candidate_act_id')
                .doUpdateSet({
                  evidence_id: esc.evidence_id,
                  act_json: esc.act_json,
                  status: 'PENDING',
                  approver: null,
                  requested_at: esc.requested_at,
                  decided_at: null,
                  expires_at: esc.expires_at,
                })
                // Only ever the same binding (a concurrent writer may have inserted another one since the read above).
                .where('gate_escalation.binding_digest', '=', esc.binding_digest),
            )
            .returning('candidate_act_id'),
        );
        // Another binding won the race: throw, so the evidence written above rolls back with it.
        if (!written) throw new EscalationBindingConflict(esc.candidate_act_id);
      }
      if (record.audit) yield* appendEntries(q, record.audit, record.evidence.recorded_at, auditSigner);
      return { recorded: true };
    }, opts?.timeoutMs);
  }

  async issueAndConsume(record: IssueAndConsumeRecord, req: ConsumeRequest, opts?: StoreCallOptions): Promise<IssueAndConsumeResult> {
    const { ops, q, auditSigner } = this;
    if (ops.issueAndConsumeOnce) {
      const { result, head } = await ops.issueAndConsumeOnce(record, req, opts?.timeoutMs);
      // Stale epochs are checked before the insert that would meet an existing authority: tell that case apart (rare, so read after).
      if (!result.recorded && (await this.getAuthority(req.candidate_act_id))) throw new ActHasAuthority(req.candidate_act_id);
      if (head && result.recorded) this.signAfter(head, (record.audit?.length ?? 0) + consumeEvents(req, result.outcome).length, req.now);
      return result;
    }
    return ops.run(function* (db): Program<IssueAndConsumeResult> {
      const current = yield* currentEpochs(q);
      if (!sameEpochs(current, record.expectEpochs)) {
        // An act that has authority already is not stale but taken: its caller reads that authority.
        if (yield* first(q.authorityOfAct({ act: req.candidate_act_id }))) throw new ActHasAuthority(req.candidate_act_id);
        return { recorded: false, current };
      }
      // Evidence before authority (foreign key), then the consume step reads the authority back and checks it like any other.
      yield q.evidence(record.evidence);
      yield q.authority(record.authority);
      // The epochs were just read under the same write lock: the consume checks against them.
      const outcome = yield* consumeSteps(q, db, req, current);
      // One append for the decision's and the consume's entries: one head read, one head move.
      yield* appendEntries(q, [...(record.audit ?? []), ...consumeEvents(req, outcome)], req.now, auditSigner);
      return { recorded: true, outcome };
    }, opts?.timeoutMs);
  }

  async getAuthority(candidateActId: string): Promise<AuthorityRow | undefined> {
    return await this.db.executeQuery(this.q.authorityOfAct({ act: candidateActId }).compile()).then((r) => r.rows[0]);
  }

  async getAuthorityById(authorityId: string): Promise<AuthorityRow | undefined> {
    return await this.db.selectFrom('gate_authority').selectAll().where('authority_id', '=', authorityId).executeTakeFirst();
  }

  async getEvidence(evidenceId: string) {
    return await this.db.selectFrom('gate_evidence').selectAll().where('evidence_id', '=', evidenceId).executeTakeFirst();
  }

  async revokeAuthority(authorityId: string, now: number): Promise<boolean> {
    return this.ops.write(async (db) => {
      const r = await db
        .updateTable('gate_authority')
        .set({ state: 'REVOKED', revoked_at: now })
        .where('authority_id', '=', authorityId)
        .where('state', '=', 'ISSUED')
        .returning('authority_id')
        .executeTakeFirst();
      return r !== undefined;
    }, undefined);
  }

  consume(req: ConsumeRequest, opts?: StoreCallOptions): Promise<ConsumeOutcome> {
    const { ops, q, auditSigner } = this;
    if (ops.consumeOnce)
      return ops.consumeOnce(req, opts?.timeoutMs).then(({ outcome, head }) => {
        this.signAfter(head, consumeEvents(req, outcome).length, req.now);
        return outcome;
      });
    return ops.run(function* (db): Program<ConsumeOutcome> {
      const outcome = yield* consumeSteps(q, db, req);
      // The decision and its audit entries commit together: a consume is never without its entry.
      yield* appendEntries(q, consumeEvents(req, outcome), req.now, auditSigner);
      return outcome;
    }, opts?.timeoutMs);
  }

  /**
   * After a one-statement write that appended `appended` entries up to `head`: sign the head when a
   * checkpoint fell due, off the write's round trip (close() waits for it, and signs any head left unsigned).
   */
  private signAfter(head: AuditHead, appended: number, now: number): void {
    const s = this.auditSigner;
    if (!s || !checkpointDue(head.seq - appended, head.seq, s.every)) return;
    const p = this.signHead(head, now).catch(() => {});
    this.signing.add(p);
    void p.finally(() => this.signing.delete(p));
  }

  async getEscalation(candidateActId: string): Promise<EscalationRow | undefined> {
    return await this.db.selectFrom('gate_escalation').selectAll().where('candidate_act_id', '=', candidateActId).executeTakeFirst();
  }

  async listEscalations(status?: EscalationRow['status']): Promise<EscalationRow[]> {
    let q = this.db.selectFrom('gate_escalation').selectAll();
    if (status) q = q.where('status', '=', status);
    return q.orderBy('requested_at').execute();
  }

  async decideEscalation(
    candidateActId: string,
    bindingDigest: string,
    status: 'APPROVED' | 'REJECTED',
    approver: string,
    now: number,
  ): Promise<EscalationRow | undefined> {
    return this.ops.write(async (db) => {
      const r = await db
        .updateTable('gate_escalation')
        .set({ status, approver, decided_at: now })
        .where('candidate_act_id', '=', candidateActId)
        // The decision binds to the act the person reviewed, never to whatever the row holds now.
        .where('binding_digest', '=', bindingDigest)
        .where('status', '=', 'PENDING')
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      if (r) {
        const tool = actTool(r.act_json);
        await this.appendAuditIn(
          db,
          [{ kind: status === 'APPROVED' ? 'approve' : 'reject', act_id: candidateActId, ...tool, digest: bindingDigest, actor: approver }],
          now,
        );
      }
      return r;
    }, undefined);
  }

  async getJournal(candidateActId: string): Promise<JournalRow | undefined> {
    return await this.db.executeQuery(this.q.journalOfAct({ act: candidateActId }).compile()).then((r) => r.rows[0]);
  }

  async listJournal(opts: { limit?: number; state?: JournalState } = {}): Promise<JournalRow[]> {
    let q = this.db.selectFrom('gate_journal').selectAll();
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
    if (this.ops.recordOutcomeOnce) {
      const { recorded, head } = await this.ops.recordOutcomeOnce(candidateActId, owner, outcome, now);
      if (head) this.signAfter(head, 1, now);
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
    return this.ops.write(async (db) => {
      const rows = await db
        .updateTable('gate_journal')
        .set({ state: 'EFFECT_RESULT_UNKNOWN', finished_at: now })
        .where('owner', '=', owner)
        .where('state', 'in', ['CONSUMED', 'INVOKED'])
        .returning(['candidate_act_id', 'tool_id', 'arguments_digest'])
        .execute();
      await this.appendAuditIn(
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
    }, undefined);
  }

  async close(): Promise<void> {
    // On shutdown the head is signed, so a truncation after this point is caught by the signature.
    await Promise.all(this.signing);
    try {
      await this.checkpointAudit(this.clock.now());
    } catch {}
    // The dialect's own helpers first (SQLite's checkpoint worker), then the connection, whose close checkpoints the rest.
    await this.ops.close();
    await this.db.destroy();
  }

  /** The journal transition's UPDATE, compiled once per (from state, columns set) shape. */
  private transitionQuery(from: JournalState, cols: readonly JournalColumn[]): TransitionQuery {
    const key = `${from}:${cols.join(',')}`;
    let query = this.transitions.get(key);
    if (query === undefined) {
      query = prepared<JournalColumn | '_act' | '_owner', Pick<JournalRow, 'tool_id' | 'arguments_digest'>>(
        [...cols, '_act', '_owner'],
        (m) =>
          this.db
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
    const { ops, q, auditSigner } = this;
    const update = this.transitionQuery(from, Object.keys(set) as (keyof typeof set)[]);
    return ops.run(
      function* () {
        const r = yield* first(update({ ...set, _act: candidateActId, _owner: owner } as TransitionValues));
        if (!r) return false;
        const entry = { ...event, act_id: candidateActId, tool: r.tool_id, digest: r.arguments_digest, actor: owner };
        yield* appendEntries(q, [entry], now, auditSigner);
        return true;
      },
      undefined,
      durability,
    );
  }
}

/**
 * Consume an authority as refused, in the consume's transaction (Tool-Use Binding draft,
 * computer use: "Origin change MUST invalidate prior authority"): the authority can never be
 * used again, not even on its original origin, and the journal records why it was spent.
 */
function* invalidate(db: Db, auth: CheckedAuthority, req: ConsumeRequest, refusal: ConsumeRefusal): Program<ConsumeOutcome> {
  const spent = yield* first(
    db
      .updateTable('gate_authority')
      .set({ state: 'CONSUMED', consumed_at: req.now, consumed_by: req.owner })
      .where('authority_id', '=', auth.authority_id)
      .where('state', '=', 'ISSUED')
      .returning('authority_id'),
  );
  if (!spent) return refusal; // a concurrent writer consumed or revoked it first: it is unusable either way
  yield db.insertInto('gate_journal').values({
    candidate_act_id: req.candidate_act_id,
    authority_id: auth.authority_id,
    arguments_digest: req.arguments_digest,
    tool_id: req.tool_id,
    owner: req.owner,
    state: 'REFUSED',
    consumed_at: req.now,
    invoked_at: null,
    finished_at: req.now,
    result_json: null,
    error_code: refusal.code,
  });
  return { ...refusal, invalidated: auth.authority_id };
}

/**
 * The consume's checks and its conditional UPDATE (enforce MUSTs 3–5), inside the caller's
 * transaction; `read`: the epochs that transaction read already.
 */
function* consumeSteps(q: HotQueries, db: Db, req: ConsumeRequest, read?: PolicyState): Program<ConsumeOutcome> {
  const epochs = read ?? (yield* first(q.epochs({})));
  // MUST 5: an epoch we cannot read is uncertain → never allow.
  if (!epochs) return deny('EF_FAIL_CLOSED', 'policy state unavailable');
  const auth = yield* first(q.checkedAuthorityOfAct({ act: req.candidate_act_id }));
  const refusal = checkAuthority(auth, req, epochs);
  if (refusal?.code === 'EF_DESTINATION_MISMATCH' && req.invalidate_on_origin_change) return yield* invalidate(db, auth!, req, refusal);
  if (refusal) return refusal;
  const a = auth!;
  // MUST 4 — the linearization point (hotQueries `consume`).
  const won = yield* first(
    q.consume({
      id: a.authority_id,
      now: req.now,
      owner: req.owner,
      sink: req.sink_id,
      digest: req.arguments_digest,
      pe: epochs.policy_epoch,
      ae: epochs.authority_epoch,
      re: epochs.revocation_epoch,
    }),
  );
  if (!won) {
    // A concurrent writer got there between our read and the UPDATE (PostgreSQL): re-read for the accurate refusal.
    const latest = yield* first(db.selectFrom('gate_authority').select(CHECKED_COLUMNS).where('authority_id', '=', a.authority_id));
    return checkAuthority(latest, req, epochs) ?? deny('EF_005', 'authority consumed concurrently');
  }
  // The journal row commits with the consume, so a crash right after leaves a trace (T-G); for
  // dispatch it is INVOKED already: the invoke follows this commit, and a restart makes it EFFECT_RESULT_UNKNOWN.
  yield q.journalConsumed({
    act: req.candidate_act_id,
    authority: a.authority_id,
    digest: req.arguments_digest,
    tool: req.tool_id,
    owner: req.owner,
    state: req.invoke ? 'INVOKED' : 'CONSUMED',
    now: req.now,
    invoked: req.invoke ? req.now : null,
  });
  return { ok: true, authority_id: a.authority_id };
}

/** The audit entries a consume commits with: its refusal, or `consumed` (and `invoked` when the journal row is INVOKED). */
function consumeEvents(req: ConsumeRequest, outcome: ConsumeOutcome): AuditEvent[] {
  const { candidate_act_id: act_id, tool_id: tool, tool_endpoint: server, arguments_digest: digest, owner: actor } = req;
  if (!outcome.ok) return [{ kind: 'deny', act_id, tool, server, digest, code: outcome.code, actor }];
  const consumed: AuditEvent = { kind: 'consumed', act_id, tool, server, digest, actor };
  return req.invoke ? [consumed, { kind: 'invoked', act_id, tool, digest, actor }] : [consumed];
}

/**
 * Append entries to the audit chain inside the caller's transaction: lock and read the head,
 * chain, insert, move the head, and sign it when a checkpoint falls due. Concurrent writers
 * queue on the head (SQLite: the write lock; PostgreSQL: FOR UPDATE), so there is one chain.
 */
function* appendEntries(q: HotQueries, events: readonly AuditEvent[], now: number, signer: AuditSigner | undefined): Program<AuditHead> {
  const head = yield* first(q.auditHead({}));
  if (!head) throw new Error('gate_audit_head row is missing');
  if (events.length === 0) return head;
  const entries = chainEntries(head, events, now);
  // One prepared multi-row INSERT: no per-call query compilation, one statement however many entries.
  yield q.auditEntries(entries);
  const last = entries[entries.length - 1]!;
  yield q.moveHead(last);
  if (signer && checkpointDue(head.seq, last.seq, signer.every)) yield q.checkpoint(signCheckpoint(signer, last.seq, last.hash, now));
  return { seq: last.seq, hash: last.hash };
}

/** The tool and server of an escalated act (its stored JSON), for the audit entry of a decision on it. */
function actTool(actJson: string): { tool: string | null; server: string | null } {
  try {
    const t = (JSON.parse(actJson) as { tool?: { tool_id?: unknown; tool_endpoint?: unknown } }).tool;
    return {
      tool: typeof t?.tool_id === 'string' ? t.tool_id : null,
      server: typeof t?.tool_endpoint === 'string' ? t.tool_endpoint : null,
    };
  } catch {
    return { tool: null, server: null };
  }
}

function* currentEpochs(q: HotQueries): Program<PolicyState> {
  const s = yield* first(q.epochs({}));
  if (!s) throw new Error('gate_policy_state row is missing');
  return s;
}

function deny(code: EfCode, reason: string): ConsumeRefusal {
  return { ok: false, code, reason };
}

/**
 * The refusals of enforce MUST 3, in the order of the execution-handle reference's
 * `_verify_inside` (Execution Handle draft, sink verification): existence, single use, revocation, expiry,
 * sink, epochs, destination, then the arguments/tool scope.
 */
function checkAuthority(auth: CheckedAuthority | undefined, req: ConsumeRequest, epochs: PolicyState): ConsumeRefusal | undefined {
  if (!auth) return deny('EF_002', 'no authority for this act');
  if (auth.state === 'CONSUMED') return deny('EF_005', 'authority already consumed');
  if (auth.state === 'REVOKED') return deny('EF_REVOKED', 'authority revoked');
  if (auth.expires_at <= req.now) return deny('EF_002', 'authority expired');
  // The sink compares with its own identity only (Tool-Use Binding draft, enforce() contract MUST 3: "sink-mismatched").
  if (auth.sink_id !== req.sink_id) return deny('EF_040', 'authority bound to another sink');
  // Finality-bound revocation draft: a revocation epoch bump revokes everything issued before it; a policy/authority bump makes it stale.
  if (auth.revocation_epoch !== epochs.revocation_epoch || req.act_policy_state.revocation_epoch !== auth.revocation_epoch)
    return deny('EF_REVOKED', 'revocation epoch advanced');
  if (
    auth.policy_epoch !== epochs.policy_epoch ||
    auth.authority_epoch !== epochs.authority_epoch ||
    req.act_policy_state.policy_epoch !== auth.policy_epoch ||
    req.act_policy_state.authority_epoch !== auth.authority_epoch
  )
    return deny('EF_EPOCH_STALE', 'policy or authority epoch differs');
  // Tool-Use Binding draft, MCP mapping: server identity is in tool_endpoint and destination, so a swapped server fails here.
  if (auth.destination_id !== req.destination_id || auth.tool_endpoint !== req.tool_endpoint)
    return deny('EF_DESTINATION_MISMATCH', 'live destination differs');
  if (
    auth.arguments_digest !== req.arguments_digest ||
    auth.tool_id !== req.tool_id ||
    auth.function_id !== req.function_id ||
    auth.consequence_class !== req.consequence_class
  )
    return deny('EF_SCOPE_MISMATCH', 'live act differs from the authorized scope');
  return undefined;
}

function sameEpochs(a: PolicyState, b: PolicyState): boolean {
  return a.policy_epoch === b.policy_epoch && a.authority_epoch === b.authority_epoch && a.revocation_epoch === b.revocation_epoch;
}

function pickEpochs(row: PolicyState): PolicyState {
  return { policy_epoch: row.policy_epoch, authority_epoch: row.authority_epoch, revocation_epoch: row.revocation_epoch };
}
