import Database from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import { LRUCache } from 'lru-cache';

/** Statements kept prepared per connection: the serving paths' few query shapes, with room for the `IN (…)` lengths. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * Prepared statements reused by SQL text (least recently used dropped first): Kysely prepares
 * every query afresh, and on the offer, tenant-head and gate consume paths preparing cost as much
 * as running. Reuse is invisible to the query layer: parameters bind per call, and better-sqlite3
 * runs a statement to completion synchronously (`all`/`run`/`get`; no store iterates one), so no
 * two uses of one statement overlap.
 */
export function statementCache(sqlite: Database.Database): (sql: string) => Database.Statement {
  const prepared = new LRUCache<string, Database.Statement>({ max: STATEMENT_CACHE_SIZE });
  return (sql) => {
    let stmt = prepared.get(sql);
    if (!stmt) {
      stmt = sqlite.prepare(sql);
      prepared.set(sql, stmt);
    }
    return stmt;
  };
}

/** The rollback of a transaction SQLite already rolled back: nothing to do. */
const ROLLED_BACK = { reader: false, run: () => ({ changes: 0, lastInsertRowid: 0 }) } as unknown as Database.Statement;

/** better-sqlite3 behind Kysely's `SqliteDatabase`, its statements from `statementCache`. */
export function withStatementCache(sqlite: Database.Database): SqliteDatabase {
  const prepare = statementCache(sqlite);
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      // SQLite rolls a transaction back by itself on SQLITE_FULL or SQLITE_IOERR; Kysely's own
      // rollback would then fail ("no transaction is active") and replace the error that says why
      // (issue 36 defect 13: a full disk must be told from a bug).
      if (sql === 'rollback' && !sqlite.inTransaction) return ROLLED_BACK;
      return prepare(sql);
    },
  };
}

/** Open an SQLite file for a store: WAL (readers never wait for the writer), a 5 s busy wait, foreign keys if asked. */
export function openSqliteFile(file: string, o: { foreignKeys?: boolean } = {}): Database.Database {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  if (o.foreignKeys) sqlite.pragma('foreign_keys = ON');
  return sqlite;
}
