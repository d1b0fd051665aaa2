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

/** The test PostgreSQL and the schemas a test file made in it, each dropped after the file's tests. */
export interface PgTestSchemas {
  /** `VRPKIT_TEST_PG_URL` as given. */
  readonly url: string;
  /** A fresh schema name, `prefix_` and a random suffix (so runs and helpers never share tables); dropped after the file. */
  schema(prefix: string): string;
  /** The test URL with `?schema=` a fresh schema (see `schema`), as the stores and `--database-url` take it. */
  schemaUrl(prefix: string): string;
}

/**
 * PostgreSQL schemas for one test file: undefined (after the skip note of `testPgUrl`) when
 * `VRPKIT_TEST_PG_URL` is unset, so use as `describe.skipIf(!pg)`. Every schema it named is
 * dropped (`CASCADE`) once the file's tests are done. Call it at the top of the file.
 */
export function pgTestSchemas(label: string, skipped: string): PgTestSchemas | undefined {
  const url = testPgUrl(label, skipped);
  if (!url) return undefined;
  const made: string[] = [];
  afterAll(async () => {
    if (made.length === 0) return;
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    try {
      for (const s of made) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    } finally {
      await client.end();
    }
  });
  const schema = (prefix: string) => {
    if (!/^[a-z][a-z0-9_]{0,40}$/.test(prefix)) throw new TypeError(`pgTestSchemas: "${prefix}" is not a lowercase schema prefix`);
    const s = `${prefix}_${randomBytes(5).toString('hex')}`;
    made.push(s);
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
  };
}
