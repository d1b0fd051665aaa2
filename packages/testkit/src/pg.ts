/**
 * PostgreSQL for the store and gate tests: the server `VRPKIT_TEST_PG_URL` names (each test
 * makes its own schema in it, `pgTestSchemas`, dropped after the file). Without the variable
 * those tests skip, saying so; `.ci/run` sets it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';

export const PG_URL_ENV = 'VRPKIT_TEST_PG_URL';

/**
 * The test PostgreSQL URL, or undefined after a note naming `VRPKIT_TEST_PG_URL` and what the file
 * `label` skips without it: use as `describe.skipIf(!url)`.
 */
export function testPgUrl(label: string, skipped: string): string | undefined {
  const url = process.env[PG_URL_ENV] || undefined;
  if (!url) console.warn(`[${label}] ${PG_URL_ENV} is unset: SKIPPED ${skipped}`);
  return url;
}

/** The test PostgreSQL and the schemas (and roles) a test file made in it, each dropped after the file's tests. */
export interface PgTestSchemas {
  /** `VRPKIT_TEST_PG_URL` as given. */
  readonly url: string;
  /** A fresh schema name, `prefix_` and a random suffix (so runs and helpers never share tables); dropped after the file. */
  schema(prefix: string): string;
  /** The test URL with `?schema=` a fresh schema (see `schema`), as the stores and `--database-url` take it. */
  schemaUrl(prefix: string): string;
  /**
   * A fresh login role `prefix_…` (not a superuser: a deployment's own database user, which a test
   * can lock out with `ALTER ROLE … NOLOGIN`) owning a fresh schema of the same name, and the test
   * URL as that role. Both are dropped after the file, the role after its schema.
   */
  ownedSchema(prefix: string): Promise<{ role: string; schema: string; url: string }>;
  /**
   * A connected client of the test server as its own user, outside the code under test (what a
   * test prepares, inspects, holds locked or tampers with), `search_path` set to `schema` when
   * given. The caller ends it.
   */
  client(schema?: string): Promise<pg.Client>;
  /** One SQL text (one or more statements) on a `client(schema)`; the rows of the last statement. */
  query<T = Record<string, unknown>>(sql: string, schema?: string): Promise<T[]>;
  /** Drop one of the file's schemas now (a file making one per test keeps the server small); the rest go after the file. */
  drop(schema: string): Promise<void>;
}

/**
 * PostgreSQL schemas for one test file: undefined (after the skip note of `testPgUrl`) when
 * `VRPKIT_TEST_PG_URL` is unset, so use as `describe.skipIf(!pg)`. Every schema and role it named is
 * dropped (`CASCADE`) once the file's tests are done. Call it at the top of the file.
 */
export function pgTestSchemas(label: string, skipped: string): PgTestSchemas | undefined {
  const url = testPgUrl(label, skipped);
  if (!url) return undefined;
  const made = new Set<string>();
  const roles = new Set<string>();
  const client = async (schema?: string) => {
    const c = new pg.Client({
      connectionString: url,
      ...(schema === undefined ? {} : { options: `-c search_path=${schemaName(schema)}` }),
    });
    c.on('error', () => {});
    await c.connect();
    return c;
  };
  const query = async <T>(sql: string, schema?: string): Promise<T[]> => {
    const c = await client(schema);
    try {
      const r = await c.query(sql);
      // A multi-statement text answers one result per statement.
      return (Array.isArray(r) ? (r.at(-1)?.rows ?? []) : r.rows) as T[];
    } finally {
      await c.end();
    }
  };
  afterAll(async () => {
    if (made.size === 0 && roles.size === 0) return;
    // Schemas first: a role cannot be dropped while it owns one.
    await query(
      [...[...made].map((s) => `DROP SCHEMA IF EXISTS "${s}" CASCADE`), ...[...roles].map((r) => `DROP ROLE IF EXISTS "${r}"`)].join(';'),
    );
  });
  const schema = (prefix: string) => {
    // Room for the suffix within PostgreSQL's 63 characters.
    if (!/^[a-z][a-z0-9_]{0,40}$/.test(prefix)) throw new TypeError(`pgTestSchemas: "${prefix}" is not a lowercase schema prefix`);
    const s = `${prefix}_${randomBytes(5).toString('hex')}`;
    made.add(s);
    return s;
  };
  return {
    url,
    schema,
    schemaUrl(prefix) {
      const u = new URL(url);
      u.searchParams.set('schema', schema(prefix));
      return u.toString();
    },
    async ownedSchema(prefix) {
      const name = schema(prefix);
      roles.add(name);
      await query(`CREATE ROLE "${name}" LOGIN; CREATE SCHEMA "${name}" AUTHORIZATION "${name}"`);
      const u = new URL(url);
      u.username = name;
      u.password = '';
      return { role: name, schema: name, url: u.toString() };
    },
    client,
    query,
    async drop(s) {
      await query(`DROP SCHEMA IF EXISTS "${schemaName(s)}" CASCADE`);
      made.delete(s);
    },
  };
}

/** A lowercase PostgreSQL name as the tests make them (safe to put in SQL text unquoted). */
function schemaName(name: string): string {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new TypeError(`pgTestSchemas: "${name}" is not a lowercase schema name`);
  return name;
}
