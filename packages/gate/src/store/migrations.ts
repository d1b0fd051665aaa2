/**
 * The gate store's one migration registry: every feature's migrations, in the order they run,
 * applied by Kysely's `Migrator` (as the node's and the platform's stores are). The features own
 * their tables and migrations (store/ledger-schema.ts, audit/schema.ts, proxy/schema.ts,
 * ui/pending-arguments-schema.ts, store/postgres-consume.ts, approvals/link-schema.ts, auth/credentials-schema.ts,
 * approvers/passkeys-schema.ts); this file imports them, never the
 * reverse. Append only: a released migration is never edited, the next one is added.
 *
 * Adoption: a store the gate's own runner migrated (before `Migrator`) records its versions in
 * `gate_schema_migrations`. On open those versions are recorded in `Migrator`'s table under the
 * names they have here and the old table is dropped, in the caller's exclusive section, so
 * nothing runs twice and the data stays as it is.
 */

import { runMigrator } from '@vrpkit/sql';
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { APPROVAL_LINKS_MIGRATION } from '../approvals/link-schema.js';
import { APPROVER_PASSKEYS_MIGRATION } from '../approvers/passkeys-schema.js';
import { AUDIT_LOG_MIGRATION, AUDIT_ROWID_MIGRATION, NO_AUDIT_AT_INDEX_MIGRATION } from '../audit/schema.js';
import { DOWNSTREAM_CREDENTIALS_MIGRATION } from '../auth/credentials-schema.js';
import { PIN_VERSION_MIGRATION, PROXY_TABLES_MIGRATION } from '../proxy/schema.js';
import { PENDING_ARGUMENTS_MIGRATION } from '../ui/pending-arguments-schema.js';
import { StoreConfigError } from './errors.js';
import { AUTHORITY_FILLFACTOR_MIGRATION, LEDGER_MIGRATION, NO_EVIDENCE_ACT_INDEX_MIGRATION } from './ledger-schema.js';
import type { GateMigration, MigrationContext } from './migration.js';
import { CONSUME_GROUP_MIGRATION, ONE_ROUND_TRIP_DISPATCH_MIGRATION, ONE_STATEMENT_OUTCOME_MIGRATION } from './postgres-consume.js';

export const GATE_MIGRATIONS: readonly GateMigration[] = [
  LEDGER_MIGRATION,
  PROXY_TABLES_MIGRATION,
  AUDIT_LOG_MIGRATION,
  PENDING_ARGUMENTS_MIGRATION,
  ONE_ROUND_TRIP_DISPATCH_MIGRATION,
  PIN_VERSION_MIGRATION,
  ONE_STATEMENT_OUTCOME_MIGRATION,
  NO_EVIDENCE_ACT_INDEX_MIGRATION,
  AUDIT_ROWID_MIGRATION,
  APPROVAL_LINKS_MIGRATION,
  CONSUME_GROUP_MIGRATION,
  AUTHORITY_FILLFACTOR_MIGRATION,
  DOWNSTREAM_CREDENTIALS_MIGRATION,
  APPROVER_PASSKEYS_MIGRATION,
  NO_AUDIT_AT_INDEX_MIGRATION,
];

/** `Migrator`'s tables in the gate store (named like the gate's other tables). */
export const MIGRATION_TABLE = 'gate_migration';
const MIGRATION_LOCK_TABLE = 'gate_migration_lock';
/** The table the gate's own runner kept its applied versions in. */
const LEGACY_TABLE = 'gate_schema_migrations';

/**
 * Record the versions the gate's own runner applied as `Migrator` runs, and drop its table. Run
 * inside the dialect's exclusive section (SQLite: the write lock; PostgreSQL: the store's advisory
 * lock), before `migrateGateStore`. A no-op on a new store and on an adopted one.
 */
export async function adoptLegacyMigrations(db: Kysely<unknown>, ctx: MigrationContext): Promise<number> {
  const exists =
    ctx.dialect === 'sqlite'
      ? await sql<{ n: string }>`select name as n from sqlite_master where type = 'table' and name = ${LEGACY_TABLE}`.execute(db)
      : await sql<{ n: string }>`select to_regclass(${LEGACY_TABLE})::text as n`.execute(db);
  if (!exists.rows[0]?.n) return 0;
  const { rows } = await sql<{ version: number; applied_at: number }>`select version, applied_at from ${sql.table(LEGACY_TABLE)}`.execute(
    db,
  );
  // The same layout `Migrator` gives the table it creates, so it takes this one as its own.
  await db.schema
    .createTable(MIGRATION_TABLE)
    .ifNotExists()
    .addColumn('name', 'varchar(255)', (c) => c.notNull().primaryKey())
    .addColumn('timestamp', 'varchar(255)', (c) => c.notNull())
    .execute();
  // `Migrator` orders what ran by its timestamp, then by name, and refuses an order that is not the
  // registry's: so one time for every adopted row, no later than now (the runner's times come from
  // whichever clock each opener had; the migrations run after adoption are dated now).
  const adopted = new Date(Math.min(Date.now(), ...rows.map((r) => Number(r.applied_at)))).toISOString();
  for (const r of rows) {
    const m = GATE_MIGRATIONS.find((g) => g.legacyVersion === Number(r.version));
    // A version this code does not know: the store was migrated by a newer gate. Refuse rather than guess.
    if (!m)
      throw new StoreConfigError(`the store has migration version ${r.version}, which this gate does not know (a newer gate made it)`);
    await sql`insert into ${sql.table(MIGRATION_TABLE)} (name, timestamp) values (${m.name}, ${adopted}) on conflict (name) do nothing`.execute(
      db,
    );
  }
  await db.schema.dropTable(LEGACY_TABLE).execute();
  return rows.length;
}

/** Bring the store to the latest migration with Kysely's `Migrator`; `schema`: PostgreSQL's schema of the gate tables. */
export async function migrateGateStore(db: Kysely<unknown>, ctx: MigrationContext, schema?: string): Promise<void> {
  const migrations: Record<string, Migration> = Object.fromEntries(
    GATE_MIGRATIONS.map((m) => [m.name, { up: (d: Kysely<unknown>) => m.up(d, ctx) }]),
  );
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    ...(schema !== undefined ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await runMigrator(migrator);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new StoreConfigError(`gate store migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}
