import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, type SqliteDatabase, SqliteDialect } from 'kysely';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { PlatformError } from '../errors.js';
import { platformMigrationProvider } from './migrations.js';
import type { PlatformDatabase } from './schema.js';

/** Environment variable naming the platform database when `--database-url` is absent. */
export const PLATFORM_DATABASE_URL_ENV = 'VRP_PLATFORM_DATABASE_URL';

/** `postgres://…[?schema=name]` (the system of record for several machines) or `sqlite:PATH` (one machine, tests). */
export type PlatformTarget = { kind: 'postgres'; url: string; schema: string } | { kind: 'sqlite'; file: string };

const PG_SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export function platformTarget(url: string | undefined): PlatformTarget {
  const u = url ?? process.env[PLATFORM_DATABASE_URL_ENV];
  if (!u) throw new PlatformError('database_url_required', { env: PLATFORM_DATABASE_URL_ENV });
  if (u.startsWith('sqlite:')) {
    const file = u.slice('sqlite:'.length);
    if (!file) throw new PlatformError('invalid_database_url', { problem: 'sqlite: names no file' });
    return { kind: 'sqlite', file };
  }
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    throw new PlatformError('invalid_database_url', { problem: 'not a URL' });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new PlatformError('invalid_database_url', { problem: `${parsed.protocol} is neither` });
  const schema = parsed.searchParams.get('schema') ?? 'vrpkit_platform';
  if (!PG_SCHEMA_RE.test(schema)) throw new PlatformError('invalid_database_url', { problem: 'schema must be a lowercase SQL identifier' });
  parsed.searchParams.delete('schema');
  return { kind: 'postgres', url: parsed.toString(), schema };
}

/** A database URL with its password removed, for messages and logs. */
export function redactedTarget(t: PlatformTarget): string {
  if (t.kind === 'sqlite') return `sqlite:${t.file}`;
  const u = new URL(t.url);
  u.password = '';
  return `${u.toString()} (schema ${t.schema})`;
}

/** Statements kept prepared per SQLite connection: the serving path's few query shapes, with room for the `IN (…)` lengths. */
const SQLITE_STATEMENT_CACHE = 256;

/**
 * better-sqlite3 with its prepared statements reused by SQL text. Kysely prepares every query
 * afresh; on the serving path (a head read per request) preparing was most of the read's CPU.
 * Reuse is safe: better-sqlite3 runs a statement to completion synchronously (`all`/`run`; the
 * platform never iterates one), so no two uses of one statement overlap.
 */
function withStatementCache(sqlite: Database.Database): SqliteDatabase {
  const prepared = new LRUCache<string, Database.Statement>({ max: SQLITE_STATEMENT_CACHE });
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let stmt = prepared.get(sql);
      if (!stmt) {
        stmt = sqlite.prepare(sql);
        prepared.set(sql, stmt);
      }
      return stmt;
    },
  };
}

/** The opened database; `sqlite`: the SQLite connection Kysely runs on, for the reads the serving path makes in its own turn. */
export interface PlatformDatabaseHandle {
  db: Kysely<PlatformDatabase>;
  sqlite?: Database.Database;
}

/** Open the platform database and bring it to the latest migration (Kysely's migration lock serialises concurrent openers). */
export async function openPlatformDatabase(t: PlatformTarget, poolSize = 10): Promise<PlatformDatabaseHandle> {
  let db: Kysely<PlatformDatabase>;
  let sqlite: Database.Database | undefined;
  if (t.kind === 'sqlite') {
    try {
      sqlite = new Database(t.file);
    } catch (cause) {
      throw new PlatformError('database_unreachable', { target: t.file, reason: (cause as Error).message }, { cause });
    }
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    db = new Kysely<PlatformDatabase>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  } else {
    const bootstrap = new pg.Client({ connectionString: t.url });
    try {
      await bootstrap.connect();
      await bootstrap.query(`CREATE SCHEMA IF NOT EXISTS "${t.schema}"`).catch((e: { code?: string }) => {
        // Two processes creating the schema at once: the loser sees a duplicate, which is success.
        if (e.code !== '23505' && e.code !== '42P06') throw e;
      });
    } catch (cause) {
      throw new PlatformError('database_unreachable', { target: redactedTarget(t), reason: (cause as Error).message }, { cause });
    } finally {
      await bootstrap.end().catch(() => {});
    }
    const pool = new pg.Pool({ connectionString: t.url, options: `-c search_path="${t.schema}"`, max: poolSize });
    db = new Kysely<PlatformDatabase>({ dialect: new PostgresDialect({ pool }) });
  }
  const migrator = new Migrator({
    db,
    provider: platformMigrationProvider,
    migrationTableName: 'platform_migration',
    migrationLockTableName: 'platform_migration_lock',
    ...(t.kind === 'postgres' ? { migrationTableSchema: t.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new PlatformError('migration_failed', { name: failed, reason: (error as Error).message }, { cause: error });
  }
  return sqlite ? { db, sqlite } : { db };
}
