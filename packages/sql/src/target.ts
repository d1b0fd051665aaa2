/**
 * Where a store lives, from the URL an operator gives: `sqlite:PATH` (one machine) or
 * `postgres://…[?schema=name]` (several machines share one database; the optional `schema`
 * query parameter picks the PostgreSQL schema, so several stores share one database).
 */
import { SqlError } from './errors.js';

export type SqliteTarget = { kind: 'sqlite'; file: string };
export type PostgresTarget = { kind: 'postgres'; url: string; schema: string };
export type SqlTarget = SqliteTarget | PostgresTarget;

/** A schema name is spliced into `CREATE SCHEMA` and `search_path`: an unquoted lowercase identifier only (at most 63 bytes, PostgreSQL's NAMEDATALEN). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** `name` if it is a schema name the kit will splice into SQL; `invalid_schema_name` otherwise. */
export function assertSchemaName(name: string): string {
  if (!SCHEMA_NAME.test(name)) throw new SqlError('invalid_schema_name', { schema: name.slice(0, 80) });
  return name;
}

/** A `postgres://` or `postgresql://` URL; `schema` (default `defaultSchema`) is taken out of it. */
export function parsePostgresTarget(url: string, defaultSchema: string): PostgresTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SqlError('invalid_database_url', { problem: 'not a URL' });
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new SqlError('invalid_database_url', { problem: `${u.protocol} is not postgres:` });
  const schema = assertSchemaName(u.searchParams.get('schema') ?? defaultSchema);
  u.searchParams.delete('schema');
  return { kind: 'postgres', url: u.toString(), schema };
}

/** `sqlite:PATH` or a PostgreSQL URL (see `parsePostgresTarget`). */
export function parseTarget(url: string, defaultSchema: string): SqlTarget {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (!file) throw new SqlError('invalid_database_url', { problem: 'sqlite: names no file' });
    return { kind: 'sqlite', file };
  }
  return parsePostgresTarget(url, defaultSchema);
}

/** A target without its password, for messages and logs. */
export function redactedTarget(t: SqlTarget): string {
  if (t.kind === 'sqlite') return `sqlite:${t.file}`;
  const u = new URL(t.url);
  u.password = '';
  return `${u.toString()} (schema ${t.schema})`;
}
