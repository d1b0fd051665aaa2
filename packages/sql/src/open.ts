import { asRecord } from '@vrpkit/core';
import type Database from 'better-sqlite3';
import { Kysely, type Migration, type MigrationResultSet, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import type pg from 'pg';
import { SqlError } from './errors.js';
import { type ConnectionLossListener, ensureSchema, openPgPool } from './postgres.js';
import { openSqliteFile, withStatementCache } from './sqlite.js';
import { redactedTarget, type SqlTarget } from './target.js';

export interface OpenDatabaseOptions {
  /** The store's migrations by name, applied in name order (Kysely's `Migrator`). */
  migrations: Readonly<Record<string, Migration>>;
  /** The migration bookkeeping tables (Kysely's defaults when absent); a store sharing a schema with another names its own. */
  migrationTable?: { name: string; lockName: string };
  /** `application_name` of the PostgreSQL connections (see `openPgPool`). */
  applicationName: string;
  poolSize?: number;
  foreignKeys?: boolean;
  onConnectionLoss?: ConnectionLossListener;
}

/**
 * An opened store; `sqlite`: the connection Kysely runs on, for reads a serving path makes in its
 * own turn; `pool`: the PostgreSQL pool Kysely runs on, for a hot read sent as a named prepared
 * statement (parsed and planned once per connection; Kysely sends every statement unnamed).
 */
export interface OpenedDatabase<DB> {
  db: Kysely<DB>;
  sqlite?: Database.Database;
  pool?: pg.Pool;
}

/**
 * Open a store's database (an SQLite file, or a PostgreSQL schema created if missing) and bring it
 * to its latest migration. On PostgreSQL the migrations run in one transaction under Kysely's
 * advisory lock (`pg_advisory_lock`), so processes starting together migrate once; on SQLite,
 * under its lock table and the file's write lock.
 */
export async function openDatabase<DB>(t: SqlTarget, o: OpenDatabaseOptions): Promise<OpenedDatabase<DB>> {
  let opened: OpenedDatabase<DB>;
  if (t.kind === 'sqlite') {
    let sqlite: Database.Database;
    try {
      sqlite = openSqliteFile(t.file, o);
    } catch (cause) {
      throw new SqlError('database_unreachable', { target: redactedTarget(t), reason: (cause as Error).message }, { cause });
    }
    opened = { db: new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) }), sqlite };
  } else {
    await ensureSchema(t, o.applicationName);
    const pool = openPgPool(t, { applicationName: o.applicationName, max: o.poolSize, onConnectionLoss: o.onConnectionLoss });
    opened = { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), pool };
  }
  try {
    await migrateToLatest(opened.db, o.migrations, { ...o.migrationTable, schema: t.kind === 'postgres' ? t.schema : undefined });
  } catch (e) {
    await opened.db.destroy();
    throw e;
  }
  return opened;
}

/** Apply every pending migration (Kysely's `Migrator`); `migration_failed` names the one that failed. */
export async function migrateToLatest<DB>(
  db: Kysely<DB>,
  migrations: Readonly<Record<string, Migration>>,
  o: { name?: string; lockName?: string; schema?: string | undefined } = {},
): Promise<void> {
  const migrator = new Migrator({
    db: db as unknown as Kysely<unknown>,
    provider: { getMigrations: async () => ({ ...migrations }) },
    ...(o.name ? { migrationTableName: o.name } : {}),
    ...(o.lockName ? { migrationLockTableName: o.lockName } : {}),
    ...(o.schema ? { migrationTableSchema: o.schema } : {}),
  });
  const { error, results } = await runMigrator(migrator);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new SqlError('migration_failed', { name: failed, reason: (error as Error).message }, { cause: error });
  }
}

/** PostgreSQL's `invalid_schema_name` and `undefined_table`: a schema or table dropped under the introspector's feet. */
const INTROSPECTION_RACES: ReadonlySet<unknown> = new Set(['3F000', '42P01']);
const MIGRATOR_RUNS = 10;

/**
 * `migrator.migrateToLatest()`, run again when it failed before any migration ran because another
 * session dropped a schema or table meanwhile. Kysely's `Migrator` looks for its own tables with the
 * dialect's introspector, which on PostgreSQL lists the tables of every schema in the database and
 * asks `pg_get_serial_sequence` of each column (kysely 0.28 postgres-introspector.js); a schema
 * another application (or a test) drops between the catalog read and that call fails the whole
 * query with 3F000 or 42P01, though nothing of ours changed. Nothing was migrated then (`results`
 * is absent), so running it again, after a pause that grows with each run, is safe; a failing
 * migration is never retried.
 */
export async function runMigrator(migrator: Migrator): Promise<MigrationResultSet> {
  for (let run = 1; ; run++) {
    const outcome = await migrator.migrateToLatest();
    const raced = outcome.error !== undefined && outcome.results === undefined && INTROSPECTION_RACES.has(asRecord(outcome.error)?.code);
    if (!raced || run === MIGRATOR_RUNS) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 10 * run));
  }
}
