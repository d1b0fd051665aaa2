/**
 * The embedded authority store: one SQLite file through better-sqlite3 12.
 *
 * Durability: WAL with `synchronous = FULL`, so a COMMIT returns only after the WAL is
 * fsync'd — a consume that enforce reported survives a crash or power loss before invoke
 * (Tool-Use Binding draft, T-G: after a crash between consume and invoke, never invoke again;
 * so the consume is durable before invoke starts).
 * Atomicity across processes: every write transaction is `BEGIN IMMEDIATE`, which takes
 * the database's single write lock up front, so reading the epochs and the authority and
 * the conditional UPDATE are one step no other process can interleave with.
 */
import { asRecord, type Clock, systemClock } from '@vrpkit/core';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { StoreTimeoutError } from './errors.js';
import { type Db, type DialectOps, KyselyAuthorityStore, migrated, type Program } from './kysely-store.js';
import { BoundQuery } from './prepared.js';
import type { GateDatabase } from './schema.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import type { AuthorityStore } from './types.js';

export interface SqliteStoreOptions {
  /** Default bound on waiting for the write lock (ms); a call's own `timeoutMs` overrides it. Default 5000. */
  busyTimeoutMs?: number;
  clock?: Clock;
  /**
   * Where WAL checkpoints run: `background` (default) in a worker thread, off every commit
   * (sqlite-checkpointer.ts); `inline` inside the commit that finds the log full, SQLite's default.
   */
  checkpoints?: 'background' | 'inline';
}

export async function openSqliteStore(file: string, opts: SqliteStoreOptions = {}): Promise<AuthorityStore> {
  const defaultTimeout = opts.busyTimeoutMs ?? 5000;
  const raw = new Database(file);
  let busyTimeout = defaultTimeout;
  raw.pragma(`busy_timeout = ${busyTimeout}`);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  // Checkpoints run in a worker thread, not inside a consume's COMMIT (sqlite-checkpointer.ts).
  const checkpointer = file === ':memory:' || file === '' || opts.checkpoints === 'inline' ? null : startCheckpointer(raw, file);
  // Kysely's SQLite driver prepares every statement anew; prepared statements are cached per
  // SQL text instead (the set of query shapes is small and fixed).
  const statements = new Map<string, Database.Statement>();
  const database = {
    close: () => raw.close(),
    prepare(text: string) {
      let stmt = statements.get(text);
      if (!stmt) {
        stmt = raw.prepare(text);
        statements.set(text, stmt);
      }
      return stmt;
    },
  };
  const db = new Kysely<GateDatabase>({ dialect: new SqliteDialect({ database }) });

  function setBusyTimeout(timeoutMs: number | undefined): number {
    const wanted = Math.max(0, Math.floor(timeoutMs ?? defaultTimeout));
    if (wanted !== busyTimeout) {
      // Calls alternate between the gate's bound and the default; the PRAGMA statement is prepared once per value.
      database.prepare(`PRAGMA busy_timeout = ${wanted}`).get();
      busyTimeout = wanted;
    }
    return wanted;
  }

  /** No statement result rows: what a step that is not a read receives. */
  const NO_ROWS: readonly unknown[] = Object.freeze([]);

  /** A step program, synchronously, in one better-sqlite3 BEGIN IMMEDIATE transaction (rolled back on any throw). */
  const runImmediate = raw.transaction(<T>(program: Program<T>): T => {
    let step = program.next(NO_ROWS);
    while (!step.done) {
      // A prepared query's call binds its parameters to the statement of its SQL text as they are.
      const q = step.value;
      const c = q instanceof BoundQuery ? q.compiled : q.compile();
      const parameters = q instanceof BoundQuery ? q.parameters : c.parameters;
      const stmt = database.prepare(c.sql);
      if (stmt.reader) {
        step = program.next(stmt.all(parameters));
      } else {
        stmt.run(parameters);
        step = program.next(NO_ROWS);
      }
    }
    return step.value;
  });

  /** `run`'s transaction, on the connection as it is now: its busy timeout, its durability. */
  function runNow<T>(program: Program<T>, timeoutMs: number | undefined, durability: 'disk' | 'process'): T {
    const wanted = setBusyTimeout(timeoutMs);
    // WAL with `synchronous = NORMAL`: the commit is in the WAL (the OS has it) but not fsync'd;
    // the next FULL commit syncs it with its own. Back to FULL at once, whatever happens.
    if (durability === 'process') database.prepare('PRAGMA synchronous = NORMAL').run();
    try {
      const result = runImmediate.immediate(program) as T;
      checkpointer?.committed();
      return result;
    } catch (e) {
      if (isBusy(e)) throw new StoreTimeoutError(`SQLite write lock not acquired within ${wanted} ms`, { cause: e });
      throw e;
    } finally {
      if (durability === 'process') database.prepare('PRAGMA synchronous = FULL').run();
    }
  }

  /**
   * Async writers holding or waiting for the connection (Kysely's driver hands it out under a
   * mutex): an async write transaction spans awaits, so while one is open or queued a step
   * program waits its turn behind it; otherwise it runs at once.
   */
  let asyncWriters = 0;
  function queued<T>(fn: (conn: Kysely<GateDatabase>) => Promise<T>): Promise<T> {
    asyncWriters++;
    return db
      .connection()
      .execute(fn)
      .finally(() => {
        asyncWriters--;
      });
  }

  const ops: DialectOps = {
    name: 'sqlite',
    write: (fn, timeoutMs) =>
      // In-process callers queue on the connection; other processes queue on the file lock below.
      queued(async (conn) => {
        const wanted = setBusyTimeout(timeoutMs);
        try {
          await sql`begin immediate`.execute(conn);
        } catch (e) {
          if (isBusy(e)) throw new StoreTimeoutError(`SQLite write lock not acquired within ${wanted} ms`, { cause: e });
          throw e;
        }
        try {
          const result = await fn(conn);
          await sql`commit`.execute(conn);
          checkpointer?.committed();
          return result;
        } catch (e) {
          if (raw.inTransaction) await sql`rollback`.execute(conn);
          if (isBusy(e)) throw new StoreTimeoutError('SQLite busy inside a write transaction', { cause: e });
          throw e;
        }
      }),
    run: <T>(program: (db: Db) => Program<T>, timeoutMs: number | undefined, durability: 'disk' | 'process' = 'disk') => {
      // better-sqlite3 is synchronous: with no async writer on the connection, the whole
      // transaction runs now, in this call, and no other statement of this process can come
      // between its BEGIN IMMEDIATE and its COMMIT. The program only compiles its queries with `db`.
      if (asyncWriters === 0) {
        try {
          return Promise.resolve(runNow(program(db), timeoutMs, durability));
        } catch (e) {
          return Promise.reject(e);
        }
      }
      return queued(async (conn) => runNow(program(conn), timeoutMs, durability));
    },
    // BEGIN IMMEDIATE already holds the write lock, so a plain read is ordered against bumps.
    epochsQuery: (conn) =>
      conn.selectFrom('gate_policy_state').select(['policy_epoch', 'authority_epoch', 'revocation_epoch']).where('id', '=', 1),
    auditHeadQuery: (conn) => conn.selectFrom('gate_audit_head').select(['seq', 'hash']).where('id', '=', 1),
    // The checkpoint worker ends first; Kysely's destroy() then closes the better-sqlite3 handle, which checkpoints what is left.
    close: async () => {
      await checkpointer?.stop();
    },
  };

  const clock = opts.clock ?? systemClock;
  const store = new KyselyAuthorityStore(db, ops, file, undefined, clock);
  return migrated(store, clock.now());
}

function isBusy(e: unknown): boolean {
  const code = asRecord(e)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
