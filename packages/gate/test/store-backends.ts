/**
 * The two databases every port's contract suite runs on: a real SQLite file in a tmp dir, and a
 * fresh schema of the PostgreSQL server `VRPKIT_TEST_PG_URL` names (testkit's `pgTestSchemas`; that
 * half skips, saying so, without it). Each suite takes a fresh database per test, opens stores on
 * it, and drops it after (testkit drops any schema left after the file).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type GateStore, openPostgresStore, openSqliteStore } from '@vrpkit/gate';
import { type PgTestSchemas, pgTestSchemas } from '@vrpkit/testkit/pg';
import Database from 'better-sqlite3';

export interface StoreOpenOptions {
  /** Bound on lock waits and statements (SQLite: its busy timeout). */
  timeoutMs?: number;
  /** PostgreSQL pool size (default 2: a suite opens several stores on one server). */
  poolSize?: number;
  /** Told the size of every group of consumes committed together. */
  onGroupCommit?: (members: number) => void;
}

export interface StoreDatabase {
  /** Open a store on this database (each call a new connection or pool). */
  open(opts?: StoreOpenOptions): Promise<GateStore>;
  /** Raw SQL on this database, outside the gate: an inspector's, or a tamperer's, access. */
  exec(sql: string): Promise<void>;
  /** Hold the write path (the epochs row) from another connection until the returned release() is called. */
  holdLock(): Promise<() => Promise<void>>;
  /** What a child process opens this database with (test/procs). */
  config: { sqlite: string } | { postgres: string; schema: string };
  /** Remove the database (PostgreSQL: its schema). */
  drop(): Promise<void>;
}

export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  skip: boolean;
  fresh(): Promise<StoreDatabase>;
}

/** SQLite in `dir`, PostgreSQL in schemas named `${prefix}_…`; `label` names the file in the skip note. */
export function storeBackends(label: string, dir: string, prefix: string): StoreBackend[] {
  const pgs = pgTestSchemas(label, `the PostgreSQL half of ${label}`);
  return [
    { name: 'sqlite', skip: false, fresh: async () => sqliteDatabase(join(dir, `${randomBytes(6).toString('hex')}.db`)) },
    { name: 'postgres', skip: !pgs, fresh: async () => postgresDatabase(pgs!, pgs!.schema(prefix)) },
  ];
}

function sqliteDatabase(file: string): StoreDatabase {
  return {
    open: (opts = {}) =>
      openSqliteStore(file, {
        ...(opts.timeoutMs === undefined ? {} : { busyTimeoutMs: opts.timeoutMs }),
        ...(opts.onGroupCommit ? { onGroupCommit: opts.onGroupCommit } : {}),
      }),
    async exec(sql) {
      const db = new Database(file);
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    },
    async holdLock() {
      const other = new Database(file);
      other.exec('BEGIN IMMEDIATE');
      return async () => {
        other.exec('ROLLBACK');
        other.close();
      };
    },
    config: { sqlite: file },
    async drop() {},
  };
}

function postgresDatabase(pgs: PgTestSchemas, schema: string): StoreDatabase {
  return {
    open: (opts = {}) =>
      openPostgresStore(pgs.url, {
        schema,
        poolSize: opts.poolSize ?? 2,
        ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
        ...(opts.onGroupCommit ? { onGroupCommit: opts.onGroupCommit } : {}),
      }),
    exec: (sql) => pgs.query(sql, schema).then(() => {}),
    async holdLock() {
      const c = await pgs.client(schema);
      await c.query('BEGIN');
      await c.query('SELECT * FROM gate_policy_state WHERE id = 1 FOR UPDATE');
      return async () => {
        await c.query('ROLLBACK');
        await c.end();
      };
    },
    config: { postgres: pgs.url, schema },
    drop: () => pgs.drop(schema),
  };
}
