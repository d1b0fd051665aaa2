/**
 * @vrpkit/sql — the one SQL kit of the node, platform and gate stores (issue 31 item 2): store
 * target URLs, the PostgreSQL schema-name check, the SQLite statement cache, PostgreSQL pools
 * that survive connection loss (issue 36 defect 1), migrations over Kysely's `Migrator`, tables
 * defined once, and the code table of all of it.
 */
export { SQL_CODES, type SqlCode, SqlError } from './errors.js';
export { listenPg, type PgListener, type PgListenerOptions } from './listen.js';
export { migrateToLatest, type OpenDatabaseOptions, type OpenedDatabase, openDatabase, runMigrator } from './open.js';
export { type ConnectionLossListener, ensureSchema, isConnectionLoss, openPgClient, openPgPool, type PgPoolOptions } from './postgres.js';
export { openSqliteFile, STATEMENT_CACHE_SIZE, statementCache, withStatementCache } from './sqlite.js';
export { type ColumnSpec, type Columns, createTable, perTenant, type TableOptions, withColumnsAfter } from './tables.js';
export {
  assertSchemaName,
  type PostgresTarget,
  parsePostgresTarget,
  parseTarget,
  redactedTarget,
  type SqliteTarget,
  type SqlTarget,
} from './target.js';
