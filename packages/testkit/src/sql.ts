/**
 * Store schemas for the upgrade tests: a store made by earlier code must end with exactly the
 * schema a fresh store gets (issue 31 item 2: tables defined once must create what the released
 * migrations created).
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

/** Every table and index of an SQLite file with the SQL that created it, by name. */
export function sqliteSchema(file: string): { type: string; name: string; sql: string | null }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare<[], { type: string; name: string; sql: string | null }>(
        "select type, name, sql from sqlite_master where name not like 'sqlite_%' order by name",
      )
      .all();
  } finally {
    db.close();
  }
}

/**
 * An SQLite file made from a fixture's text dump (`sqlite3 FILE .dump`): the upgrade fixtures are
 * stores written by earlier code, kept in git as SQL text rather than as database files.
 */
export function sqliteFromDump(dumpFile: string, file: string): void {
  const db = new Database(file);
  try {
    db.exec(readFileSync(dumpFile, 'utf8'));
  } finally {
    db.close();
  }
}
