/**
 * The embedded gate store: one SQLite file through better-sqlite3 12.
 *
 * Durability: WAL with `synchronous = FULL`, so a COMMIT returns only after the WAL is
 * fsync'd — a consume that enforce reported survives a crash or power loss before invoke
 * (Tool-Use Binding draft, T-G: after a crash between consume and invoke, never invoke again;
 * so the consume is durable before invoke starts).
 * Atomicity across processes: every write transaction is `BEGIN IMMEDIATE`, which takes
 * the database's single write lock up front, so reading the epochs and the authority and
 * the conditional UPDATE are one step no other process can interleave with.
 * Group commit: the consumes (and dispatch's issue-and-consume) of this process that arrive
 * together share one such transaction and one fsync, each in a savepoint (store/group-commit.ts).
 */
import { asRecord, type Clock, systemClock } from '@vrpkit/core';
import { statementCache } from '@vrpkit/sql';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { type Db, type DialectOps, type GateDatabase, type Program, StoreEngine } from './engine.js';
import { StoreTimeoutError } from './errors.js';
import { type GateStore, gateStore } from './gate-store.js';
import { GroupCommit, type Settled } from './group-commit.js';
import { adoptLegacyMigrations, migrateGateStore } from './migrations.js';
import { BoundQuery } from './prepared.js';
import { type Checkpointer, startCheckpointer } from './sqlite-checkpointer.js';

export interface SqliteStoreOptions {
  /** Default bound on waiting for the write lock (ms); a call's own `timeoutMs` overrides it. Default 5000. */
  busyTimeoutMs?: number;
  clock?: Clock;
  /**
   * Where WAL checkpoints run: `background` (default) in a worker thread, off every commit
   * (sqlite-checkpointer.ts); `inline` inside the commit that finds the log full, SQLite's default.
   */
  checkpoints?: 'background' | 'inline';
  /** Told the size of every group of concurrent consumes committed together (metrics; store/group-commit.ts). */
  onGroupCommit?: (members: number) => void;
}

export async function openSqliteStore(file: string, opts: SqliteStoreOptions = {}): Promise<GateStore> {
  const raw = new Database(file);
  const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
  raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  // Checkpoints run in a worker thread, not inside a consume's COMMIT (sqlite-checkpointer.ts).
  const checkpointer = file === ':memory:' || file === '' || opts.checkpoints === 'inline' ? null : startCheckpointer(raw, file);
  const ops = new SqliteTransactions(raw, checkpointer, busyTimeoutMs, opts.onGroupCommit);
  const clock = opts.clock ?? systemClock;
  const engine = new StoreEngine(ops.db, ops, file, clock);
  try {
    await migrate(raw, ops.db, clock.now());
  } catch (e) {
    await engine.close();
    throw e;
  }
  return gateStore(engine);
}

/**
 * Adopt and migrate under the write lock (`BEGIN IMMEDIATE`), as one transaction: concurrent
 * openers of one file wait, then find it migrated. `Migrator` runs no transaction of its own on
 * SQLite (no transactional DDL in Kysely's view), so its statements run inside this one.
 */
async function migrate(raw: Database.Database, db: Kysely<GateDatabase>, now: number): Promise<void> {
  const ctx = { now, dialect: 'sqlite' as const };
  raw.exec('begin immediate');
  try {
    await adoptLegacyMigrations(db as Kysely<unknown>, ctx);
    await migrateGateStore(db as Kysely<unknown>, ctx);
    raw.exec('commit');
  } catch (e) {
    if (raw.inTransaction) raw.exec('rollback');
    throw e;
  }
}

/** No statement result rows: what a step that is not a read receives. */
const NO_ROWS: readonly unknown[] = Object.freeze([]);

/** The SQLite side of the engine: one better-sqlite3 connection, its write transactions and its statement cache. */
class SqliteTransactions implements DialectOps {
  readonly name = 'sqlite';
  readonly db: Kysely<GateDatabase>;
  /** Kysely's SQLite driver prepares every statement anew: the SQL kit's cache reuses them by SQL text. */
  private readonly prepare: (text: string) => Database.Statement;
  private busyTimeout: number;
  /** Set by a synchronous write transaction's body, i.e. once its BEGIN IMMEDIATE took the write lock (`bounded`). */
  private began = false;
  /**
   * Async writers holding or waiting for the connection (Kysely's driver hands it out under a
   * mutex): an async write transaction spans awaits, so while one is open or queued a step
   * program waits its turn behind it; otherwise it runs at once.
   */
  private asyncWriters = 0;
  /** A step program, synchronously, in one better-sqlite3 BEGIN IMMEDIATE transaction (rolled back on any throw). */
  private readonly runImmediate: Database.Transaction<(program: Program<unknown>) => unknown>;
  /** Step programs in one BEGIN IMMEDIATE transaction, each in a savepoint (`runGroup`). */
  private readonly runGroupImmediate: Database.Transaction<(programs: readonly Program<unknown>[]) => Settled<unknown>[]>;
  /** The `grouped` programs waiting for, or in, the next group commit (store/group-commit.ts). */
  private readonly groups: GroupCommit<(db: Db) => Program<unknown>, unknown>;

  constructor(
    private readonly raw: Database.Database,
    private readonly checkpointer: Checkpointer | null,
    private readonly defaultTimeout: number,
    observeGroups: ((members: number) => void) | undefined,
  ) {
    this.busyTimeout = defaultTimeout;
    this.groups = new GroupCommit((programs, timeoutMs) => this.runGroup(programs, timeoutMs), observeGroups);
    this.prepare = statementCache(raw);
    const database = { close: () => raw.close(), prepare: (text: string) => this.prepare(text) };
    this.db = new Kysely<GateDatabase>({ dialect: new SqliteDialect({ database }) });
    this.runImmediate = raw.transaction((program: Program<unknown>) => {
      this.began = true;
      return this.step(program);
    });
    // better-sqlite3 runs a transaction function called inside another as a SAVEPOINT, rolled back alone when it throws.
    const member = raw.transaction((program: Program<unknown>) => this.step(program));
    this.runGroupImmediate = raw.transaction((programs: readonly Program<unknown>[]) => {
      this.began = true;
      return programs.map((program): Settled<unknown> => {
        try {
          return { ok: true, value: member(program) };
        } catch (error) {
          // An error SQLite answers by ending the whole transaction (a full disk, an I/O error) is the group's:
          // the members before it are not committed either, so none of them may be told so.
          if (!raw.inTransaction) throw error;
          return { ok: false, error };
        }
      });
    });
  }

  /** A call's bound on waiting for the write lock (ms): its own, or the store's default. */
  private bound(timeoutMs: number | undefined): number {
    return Math.max(0, Math.floor(timeoutMs ?? this.defaultTimeout));
  }

  private setBusyTimeout(wanted: number): void {
    if (wanted === this.busyTimeout) return;
    // The PRAGMA statement is prepared once per value.
    this.prepare(`PRAGMA busy_timeout = ${wanted}`).get();
    this.busyTimeout = wanted;
  }

  /**
   * A synchronous write transaction bounded by `wanted` ms of waiting for the write lock. The
   * connection's busy timeout is lowered to the bound at once (no write waits past its bound), but
   * a higher bound is not raised in advance: the gate's consumes and its outcome writes have
   * different bounds, and setting the PRAGMA back and forth cost a statement on nearly every
   * transaction. A transaction that finds the lock busy before it began, having waited less than
   * its bound, waits out the rest and begins again: the same total bound as raising it first.
   */
  private bounded<T>(transaction: () => T, wanted: number): T {
    if (wanted < this.busyTimeout) this.setBusyTimeout(wanted);
    const waited = this.busyTimeout;
    this.began = false;
    try {
      return transaction();
    } catch (e) {
      // `began` is set by the transaction's body: after BEGIN IMMEDIATE, nothing of it has run.
      if (!isBusy(e) || this.began || waited >= wanted) throw e;
      this.setBusyTimeout(wanted - waited);
      return transaction();
    }
  }

  /** Drive a step program on the connection, synchronously. */
  private step(program: Program<unknown>): unknown {
    let step = program.next(NO_ROWS);
    while (!step.done) {
      // A prepared query's call binds its parameters to the statement of its SQL text as they are.
      const q = step.value;
      const c = q instanceof BoundQuery ? q.compiled : q.compile();
      const parameters = q instanceof BoundQuery ? q.parameters : c.parameters;
      const stmt = this.prepare(c.sql);
      if (stmt.reader) {
        step = program.next(stmt.all(parameters));
      } else {
        stmt.run(parameters);
        step = program.next(NO_ROWS);
      }
    }
    return step.value;
  }

  /** A transaction on the connection as it is now: its busy timeout, its durability. */
  private runNow<T>(transaction: () => T, timeoutMs: number | undefined, durability: 'disk' | 'process'): T {
    const wanted = this.bound(timeoutMs);
    // WAL with `synchronous = NORMAL`: the commit is in the WAL (the OS has it) but not fsync'd;
    // the next FULL commit syncs it with its own. Back to FULL at once, whatever happens.
    if (durability === 'process') this.prepare('PRAGMA synchronous = NORMAL').run();
    try {
      const result = this.bounded(transaction, wanted);
      this.checkpointer?.committed();
      return result;
    } catch (e) {
      if (isBusy(e)) throw new StoreTimeoutError(`SQLite write lock not acquired within ${wanted} ms`, { cause: e });
      throw e;
    } finally {
      if (durability === 'process') this.prepare('PRAGMA synchronous = FULL').run();
    }
  }

  private queued<T>(fn: (conn: Kysely<GateDatabase>) => Promise<T>): Promise<T> {
    this.asyncWriters++;
    return this.db
      .connection()
      .execute(fn)
      .finally(() => {
        this.asyncWriters--;
      });
  }

  // In-process callers queue on the connection; other processes queue on the file lock.
  write<T>(fn: (db: Db) => Promise<T>, timeoutMs: number | undefined): Promise<T> {
    return this.queued(async (conn) => {
      const wanted = this.bound(timeoutMs);
      this.setBusyTimeout(wanted);
      try {
        await sql`begin immediate`.execute(conn);
      } catch (e) {
        if (isBusy(e)) throw new StoreTimeoutError(`SQLite write lock not acquired within ${wanted} ms`, { cause: e });
        throw e;
      }
      try {
        const result = await fn(conn);
        await sql`commit`.execute(conn);
        this.checkpointer?.committed();
        return result;
      } catch (e) {
        if (this.raw.inTransaction) await sql`rollback`.execute(conn);
        if (isBusy(e)) throw new StoreTimeoutError('SQLite busy inside a write transaction', { cause: e });
        throw e;
      }
    });
  }

  run<T>(
    program: (db: Db) => Program<T>,
    timeoutMs: number | undefined,
    durability: 'disk' | 'process' = 'disk',
    grouped = false,
  ): Promise<T> {
    // The group settles each member with its own program's result: T, as submitted.
    if (grouped && durability === 'disk') return this.groups.submit(program, timeoutMs) as Promise<T>;
    return this.onConnection((conn) => this.runNow(() => this.runImmediate.immediate(program(conn)) as T, timeoutMs, durability));
  }

  /** A group of programs in one transaction, one durable commit; a group of one as `run` alone (no savepoint). */
  private runGroup(
    programs: readonly ((db: Db) => Program<unknown>)[],
    timeoutMs: number | undefined,
  ): Promise<readonly Settled<unknown>[]> {
    if (programs.length === 1) return this.run(programs[0]!, timeoutMs).then((value) => [{ ok: true, value }]);
    return this.onConnection((conn) =>
      this.runNow(() => this.runGroupImmediate.immediate(programs.map((p) => p(conn))), timeoutMs, 'disk'),
    );
  }

  /**
   * better-sqlite3 is synchronous: with no async writer on the connection, `transaction` runs
   * now, in this call, and no other statement of this process can come between its BEGIN
   * IMMEDIATE and its COMMIT; otherwise it waits its turn behind them. The programs only compile
   * their queries with the connection they are given.
   */
  private onConnection<T>(transaction: (conn: Db) => T): Promise<T> {
    if (this.asyncWriters === 0) {
      try {
        return Promise.resolve(transaction(this.db));
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return this.queued(async (conn) => transaction(conn));
  }

  // BEGIN IMMEDIATE already holds the write lock, so a plain read is ordered against bumps.
  epochsQuery(conn: Db) {
    return conn.selectFrom('gate_policy_state').select(['policy_epoch', 'authority_epoch', 'revocation_epoch']).where('id', '=', 1);
  }

  auditHeadQuery(conn: Db) {
    return conn.selectFrom('gate_audit_head').select(['seq', 'hash']).where('id', '=', 1);
  }

  // The checkpoint worker ends first; Kysely's destroy() then closes the better-sqlite3 handle, which checkpoints what is left.
  async close(): Promise<void> {
    await this.checkpointer?.stop();
  }
}

function isBusy(e: unknown): boolean {
  const code = asRecord(e)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
