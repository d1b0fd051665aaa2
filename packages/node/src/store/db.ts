import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, type SqliteDatabase, SqliteDialect } from 'kysely';
import pg from 'pg';
import { NodeError } from '../errors.js';
import { nodeMigrationProvider } from './migrations.js';
import type { NodeDatabase } from './schema.js';

/** Where a node's store lives: an SQLite file (embedded default) or a PostgreSQL schema (scale-out). */
export type PostgresTarget = { kind: 'postgres'; url: string; schema: string };
export type StoreTarget = { kind: 'sqlite'; file: string } | PostgresTarget;

const PG_SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Parse a `postgres://…` URL. An optional `schema` query parameter picks the PostgreSQL schema
 * the node's tables live in (default `public`), so several nodes can share one database.
 */
export function postgresTarget(url: string): PostgresTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new NodeError('invalid_database_url', { problem: 'the database URL is not a URL' });
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new NodeError('invalid_database_url', { problem: 'the database URL must be postgres://…' });
  const schema = u.searchParams.get('schema') ?? 'public';
  if (!PG_SCHEMA_RE.test(schema)) throw new NodeError('invalid_database_url', { problem: 'schema must be a lowercase SQL identifier' });
  u.searchParams.delete('schema');
  return { kind: 'postgres', url: u.toString(), schema };
}

/** Prepared statements kept per SQL text (Kysely's SQLite driver prepares on every execution). */
const STATEMENT_CACHE_SIZE = 256;

/** The rollback of a transaction SQLite already rolled back: nothing to do. */
const ROLLED_BACK = { reader: false, run: () => ({ changes: 0, lastInsertRowid: 0 }) } as unknown as Database.Statement;

/**
 * better-sqlite3 behind Kysely's `SqliteDatabase` interface with a bounded statement cache:
 * the offer path runs the same few statements on every request, and preparing them costs as
 * much as running them. Statements are reusable and parameters bind per call, so caching is
 * invisible to the query layer.
 */
function cachingSqlite(db: Database.Database): SqliteDatabase {
  const cache = new Map<string, Database.Statement>();
  return {
    close: () => db.close(),
    prepare(sqlText: string) {
      // SQLite rolls a transaction back by itself on SQLITE_FULL or SQLITE_IOERR; Kysely's own
      // rollback would then fail ("no transaction is active") and replace the error that says why
      // (issue 36 defect 13: a full disk must be told from a bug).
      if (sqlText === 'rollback' && !db.inTransaction) return ROLLED_BACK;
      let stmt = cache.get(sqlText);
      if (!stmt) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        stmt = db.prepare(sqlText);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

/** Open the store and bring it to the latest migration. */
export async function openNodeDatabase(target: StoreTarget): Promise<Kysely<NodeDatabase>> {
  let db: Kysely<NodeDatabase>;
  if (target.kind === 'sqlite') {
    const sqlite = new Database(target.file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    db = new Kysely<NodeDatabase>({ dialect: new SqliteDialect({ database: cachingSqlite(sqlite) }) });
  } else {
    if (!PG_SCHEMA_RE.test(target.schema))
      throw new NodeError('invalid_database_url', { problem: 'schema must be a lowercase SQL identifier' });
    const bootstrap = new pg.Client({ connectionString: target.url });
    try {
      await bootstrap.connect();
      await bootstrap.query(`CREATE SCHEMA IF NOT EXISTS "${target.schema}"`);
    } catch (cause) {
      throw new NodeError('database_unreachable', { reason: (cause as Error).message }, { cause });
    } finally {
      await bootstrap.end().catch(() => {});
    }
    const pool = new pg.Pool({ connectionString: target.url, options: `-c search_path="${target.schema}"`, max: 10 });
    db = new Kysely<NodeDatabase>({ dialect: new PostgresDialect({ pool }) });
  }
  const migrator = new Migrator({
    db,
    provider: nodeMigrationProvider,
    ...(target.kind === 'postgres' ? { migrationTableSchema: target.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new NodeError('migration_failed', { name: String(failed), reason: (error as Error).message }, { cause: error });
  }
  return db;
}

/** The store revision read the offer path makes on every request (see `NodeStore.snapshot`). */
export interface RevisionReader {
  read(): number | Promise<number>;
  /**
   * The revision without waiting (SQLite; absent where every read is a round trip, PostgreSQL).
   * It may lag a write committed by another process by `REVISION_RECHECK_MS`; a write committed
   * through any store of this process (`committed`) is seen at once.
   */
  readNow?(): number;
  /** Called after this process committed a write that bumped the revision. */
  committed(): void;
  close(): void;
}

/**
 * How long (ms) the offer path's synchronous revision read is reused before the statement runs
 * again. The statement costs as much as the rest of a cache hit; under load many requests share
 * one read, and a write by another process (the CLI, a `--workers` sibling, the primary's hold
 * sweep) is still seen within this bound, far inside the second the cluster and platform
 * promise.
 */
export const REVISION_RECHECK_MS = 1;

/**
 * Writes committed through any store of this process, per SQLite file: a reader reads the
 * revision again as soon as that count moved, so a write is never hidden from the process that
 * made it (a booking request, then the next offer). Counted while a store holds the file open.
 */
const localWrites = new Map<string, { count: number; open: number }>();

function localWritesTo(file: string) {
  let w = localWrites.get(file);
  if (!w) {
    w = { count: 0, open: 0 };
    localWrites.set(file, w);
  }
  w.open++;
  return w;
}

/**
 * The revision reader for an open store. On PostgreSQL it is one compiled query through the
 * pool. On SQLite it is a synchronous statement on a read-only connection of its own: through
 * Kysely every query queues on the one connection's mutex and a promise chain, which measured
 * several times the statement itself when 32 requests are in flight. A separate connection only
 * ever sees committed data (WAL), so a write transaction still open on the main connection can
 * never show it an uncommitted revision; the snapshot guarantee (revision read first, data
 * after, both committed) is unchanged for `read`; `readNow` adds the bound above.
 */
export function openRevisionReader(target: StoreTarget, db: Kysely<NodeDatabase>): RevisionReader {
  if (target.kind === 'sqlite') {
    const reader = new Database(target.file, { readonly: true, fileMustExist: true });
    reader.pragma('busy_timeout = 5000');
    const stmt = reader.prepare<[], number>('SELECT revision FROM store_revision WHERE id = 1').pluck();
    const file = resolve(target.file);
    const writes = localWritesTo(file);
    let seenWrites = -1;
    let readAt = Number.NEGATIVE_INFINITY;
    let revision = 0;
    const read = () => {
      // The count and the time are taken before the statement: a write committing after it is seen by the next read.
      seenWrites = writes.count;
      readAt = performance.now();
      revision = stmt.get() ?? 0;
      return revision;
    };
    return {
      read,
      readNow: () => (writes.count === seenWrites && performance.now() - readAt < REVISION_RECHECK_MS ? revision : read()),
      committed: () => {
        writes.count++;
      },
      close: () => {
        reader.close();
        if (--writes.open === 0) localWrites.delete(file);
      },
    };
  }
  const query = db.selectFrom('store_revision').select('revision').where('id', '=', 1).compile();
  return {
    read: () => db.executeQuery(query).then((r) => Number(r.rows[0]?.revision ?? 0)),
    committed: () => {},
    close: () => {},
  };
}
