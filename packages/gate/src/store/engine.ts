/**
 * The gate store's engine on Kysely: one set of queries for SQLite and PostgreSQL. The only
 * per-dialect code is how a write transaction is opened and driven (`DialectOps`), because
 * that is where the two databases differ in how they serialize a consume against other
 * consumes and epoch bumps (see docs/gate.md "Store guarantees"). The ports (store/ledger.ts,
 * epochs.ts, escalations.ts, journal.ts, audit-log.ts, and the features' own: proxy/tables.ts,
 * ui/pending-arguments.ts) run their queries through it.
 *
 * The hot-path transactions (consume, decision, journal transitions, epoch read) are step
 * programs: generators that yield Kysely queries and receive their rows. PostgreSQL drives
 * them asynchronously inside a transaction; SQLite drives them synchronously inside one
 * better-sqlite3 `BEGIN IMMEDIATE` transaction with prepared statements, which keeps the
 * consume's p99 near the raw durable CAS (docs/gate.md "Kysely on the hot path").
 *
 * Every decision appends its audit entries in its own transaction (`appendEntries`): the head
 * row is locked and moved, and a checkpoint is signed when one falls due (audit/chain.ts).
 */
import type { Clock } from '@vrpkit/core';
import type { Compilable, CompiledQuery, Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { PolicyState } from '../act.js';
import { type AuditEvent, type AuditSigner, chainEntries, checkpointDue, signCheckpoint } from '../audit/chain.js';
import type { AuditHead } from '../audit/port.js';
import type { AuditCheckpointTable, AuditDatabase, AuditHeadTable, AuditTable } from '../audit/schema.js';
import type { Dialect } from './dialect.js';
import type { Settled } from './group-commit.js';
import type { LedgerDatabase } from './ledger-schema.js';
import type {
  AuthorityRow,
  ConsumeOutcome,
  ConsumeRequest,
  EvidenceRow,
  IssueAndConsumeRecord,
  IssueAndConsumeResult,
  OutcomeRecord,
} from './ports.js';
import { BoundQuery, compileMarked, prepared } from './prepared.js';

/** The tables the engine's own queries read and write: the ledger's and the audit log's. */
export type GateDatabase = LedgerDatabase & AuditDatabase;

export type Db = Kysely<GateDatabase> | Transaction<GateDatabase>;

/** A transaction body: yields queries, receives each one's rows, returns the result. */
export type Program<T> = Generator<Compilable, T, readonly unknown[]>;

export interface DialectOps {
  readonly name: Dialect;
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
   * `grouped`: the program may share its transaction and durable commit with other grouped
   * programs that arrive together (store/group-commit.ts), in a savepoint of its own, so its throw
   * rolls back and fails only itself (SQLite: the consumes; a dialect without groups runs it alone).
   */
  run<T>(program: (db: Db) => Program<T>, timeoutMs: number | undefined, durability?: 'disk' | 'process', grouped?: boolean): Promise<T>;
  /** The epoch read inside a write transaction, ordered against bumps (PostgreSQL: FOR SHARE). */
  epochsQuery(db: Db): SelectQueryBuilder<GateDatabase, 'gate_policy_state', PolicyState>;
  /** The audit head read inside a write transaction, locked until commit (PostgreSQL: FOR UPDATE), so appends form one chain. */
  auditHeadQuery(db: Db): SelectQueryBuilder<GateDatabase, 'gate_audit_head', Pick<AuditHeadTable, 'seq' | 'hash'>>;
  /**
   * A group of consumes (store/group-commit.ts: checks, conditional UPDATE, journal, audit entry
   * of each) as one statement, one transaction, where the dialect has one (PostgreSQL: one round
   * trip); one result per member, in order. Otherwise the step programs run, `grouped`.
   */
  consumeGroupOnce?(
    reqs: readonly ConsumeRequest[],
    timeoutMs: number | undefined,
  ): Promise<readonly Settled<{ outcome: ConsumeOutcome; head: AuditHead }>[]>;
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
    lastCheckpoint: prepared([], () => db.selectFrom('gate_audit_checkpoint').select((eb) => eb.fn.max('seq').as('seq'))),
  };
}

export type HotQueries = ReturnType<typeof hotQueries>;

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

const AUDIT_COLUMNS = ['seq', 'at', 'kind', 'act_id', 'tool', 'server', 'digest', 'code', 'actor', 'prev_hash', 'hash'] as const;
type AuditColumn = (typeof AUDIT_COLUMNS)[number];
const CHECKPOINT_COLUMNS = ['seq', 'hash', 'at', 'kid', 'public_jwk', 'jws'] as const satisfies readonly (keyof AuditCheckpointTable)[];
/** The authority columns `checkAuthority` reads. */
export const CHECKED_COLUMNS = [
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
export type CheckedAuthority = Pick<AuthorityRow, (typeof CHECKED_COLUMNS)[number]>;
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
export function* first<O>(q: Compilable<O>): Program<O | undefined> {
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

/**
 * A writer's checkpoint signing: the gate key, and the last checkpoint this writer knows of
 * (read once, then moved by its own signatures; another writer's later checkpoint only makes it
 * sign once more than needed, never less).
 */
export interface Checkpointing {
  signer: AuditSigner;
  known?: number;
}

/**
 * Append entries to the audit chain inside the caller's transaction: lock and read the head,
 * chain, insert, move the head, and sign it when a checkpoint falls due. Concurrent writers
 * queue on the head (SQLite: the write lock; PostgreSQL: FOR UPDATE), so there is one chain.
 *
 * Due (audit/chain.ts `checkpointDue`): the new head is in a later window of `every` entries than
 * the last checkpoint known — so the append that reaches a boundary signs, and when a writer
 * without the gate key reached it (`vrp gate approve`, the approvals page in its own process),
 * the next signing append in that window does. Verify counts on one checkpoint per window
 * (issue 36 defect 3).
 */
export function* appendEntries(
  q: HotQueries,
  events: readonly AuditEvent[],
  now: number,
  cp: Checkpointing | undefined,
): Program<AuditHead> {
  const head = yield* first(q.auditHead({}));
  if (!head) throw new Error('gate_audit_head row is missing');
  if (events.length === 0) return head;
  const entries = chainEntries(head, events, now);
  // One prepared multi-row INSERT: no per-call query compilation, one statement however many entries.
  yield q.auditEntries(entries);
  const last = entries[entries.length - 1]!;
  yield q.moveHead(last);
  if (cp) {
    cp.known ??= Number((yield* first(q.lastCheckpoint({})))?.seq ?? 0);
    if (checkpointDue(cp.known, last.seq, cp.signer.every)) {
      yield q.checkpoint(signCheckpoint(cp.signer, last.seq, last.hash, now));
      cp.known = last.seq;
    }
  }
  return { seq: last.seq, hash: last.hash };
}

/**
 * One open store: its connection, its dialect's transactions, the hot queries compiled once, and
 * the audit signer every port's appends sign checkpoints with. The ports share it, so a decision
 * and its audit entries commit in one transaction whichever port writes them.
 */
export class StoreEngine {
  private checkpointing: Checkpointing | undefined;
  readonly q: HotQueries;
  /** Checkpoints being signed after a one-statement write; close() waits for them. */
  private readonly signing = new Set<Promise<void>>();

  constructor(
    readonly db: Kysely<GateDatabase>,
    readonly ops: DialectOps,
    /** Where the store lives, for messages (a file path, or a URL without credentials). */
    readonly location: string,
    /** Dates the checkpoint signed on close. */
    readonly clock: Clock,
    /** Told the size of every group of consumes the ledger commits together (store/group-commit.ts; PostgreSQL). */
    readonly observeGroups?: (members: number) => void,
  ) {
    this.q = hotQueries(db, ops);
  }

  get dialect(): Dialect {
    return this.ops.name;
  }

  /** How this store's appends sign checkpoints; undefined until a gate key is given (`useAuditSigner`). */
  get checkpoints(): Checkpointing | undefined {
    return this.checkpointing;
  }

  useAuditSigner(signer: AuditSigner): void {
    this.checkpointing = { signer };
  }

  /** A write transaction (serialized with every other write on the epochs and the authority; DialectOps.write). */
  write<T>(fn: (db: Db) => Promise<T>, timeoutMs?: number): Promise<T> {
    return this.ops.write(fn, timeoutMs);
  }

  /** Append audit entries within a caller's write transaction (a decision and its entries commit together). */
  appendAuditIn(db: Db, events: readonly AuditEvent[], now: number): Promise<AuditHead> {
    return runAsync(appendEntries(this.q, events, now, this.checkpointing), db);
  }

  /**
   * After a one-statement write (PostgreSQL) that moved the head to `head`: sign it when a
   * checkpoint fell due (`appendEntries`' rule), off the write's round trip (close() waits for it,
   * and signs any head left unsigned).
   */
  signAfter(head: AuditHead, now: number): void {
    const cp = this.checkpointing;
    // Known not due: nothing to do, and nothing to wait for (the common case of every consume).
    if (!cp || (cp.known !== undefined && !checkpointDue(cp.known, head.seq, cp.signer.every))) return;
    const p = (async () => {
      cp.known ??= await this.lastCheckpoint(this.db);
      if (!checkpointDue(cp.known, head.seq, cp.signer.every)) return;
      cp.known = Math.max(cp.known, head.seq);
      await this.db
        .insertInto('gate_audit_checkpoint')
        .values(signCheckpoint(cp.signer, head.seq, head.hash, now))
        .onConflict((oc) => oc.column('seq').doNothing())
        .execute();
    })().catch(() => {});
    this.signing.add(p);
    void p.finally(() => this.signing.delete(p));
  }

  private async lastCheckpoint(db: Db): Promise<number> {
    const { rows } = await db.executeQuery(this.q.lastCheckpoint({}).compile());
    return Number(rows[0]?.seq ?? 0);
  }

  /**
   * Sign the current head unless it is signed already (on shutdown); with `ifOwed`, only when no
   * checkpoint is in the head's window (a writer without the gate key reached a boundary: a gate
   * starting signs it, so verify finds one checkpoint per window).
   */
  async checkpointAudit(now: number, opts: { ifOwed?: boolean } = {}): Promise<void> {
    const cp = this.checkpointing;
    if (!cp) return;
    await this.ops.write(async (db) => {
      const head = await runAsync(first(this.q.auditHead({})), db);
      if (!head || head.seq === 0) return;
      const last = await this.lastCheckpoint(db);
      cp.known = Math.max(cp.known ?? 0, last);
      if (last === head.seq || (opts.ifOwed && !checkpointDue(last, head.seq, cp.signer.every))) return;
      await db
        .insertInto('gate_audit_checkpoint')
        .values(signCheckpoint(cp.signer, head.seq, head.hash, now))
        // Another writer's one-statement write may have signed this head meanwhile (signAfter).
        .onConflict((oc) => oc.column('seq').doNothing())
        .execute();
      cp.known = head.seq;
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
}
