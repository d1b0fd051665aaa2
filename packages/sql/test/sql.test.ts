/**
 * The SQL kit on real SQLite files and, when VRPKIT_TEST_PG_URL is set, a real PostgreSQL: target
 * URLs and their coded errors, the schema-name check, the LRU statement cache, tables defined
 * once, migrations (once, under the lock, naming the one that failed), and a pool that outlives
 * its connections (issue 36 defect 1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertSchemaName,
  createTable,
  isConnectionLoss,
  listenPg,
  openDatabase,
  openPgPool,
  openSqliteFile,
  type PostgresTarget,
  parsePostgresTarget,
  parseTarget,
  perTenant,
  redactedTarget,
  SqlError,
  STATEMENT_CACHE_SIZE,
  withStatementCache,
} from '@vrpkit/sql';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { Kysely, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-sql-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const pgs = pgTestSchemas('sql kit', 'the PostgreSQL cases of the SQL kit (pool, lock, schema)');

describe('store targets', () => {
  it('reads sqlite:PATH and postgres URLs, taking the schema out of the URL', () => {
    expect(parseTarget('sqlite:/var/lib/p.sqlite', 'x')).toEqual({ kind: 'sqlite', file: '/var/lib/p.sqlite' });
    expect(parseTarget('postgresql://u:pw@db/vrp?schema=tenant_a&sslmode=require', 'x')).toEqual({
      kind: 'postgres',
      url: 'postgresql://u:pw@db/vrp?sslmode=require',
      schema: 'tenant_a',
    });
    expect(parsePostgresTarget('postgres://db/vrp', 'public')).toMatchObject({ schema: 'public' });
  });

  it.each([
    ['sqlite:', 'invalid_database_url'],
    ['not a url', 'invalid_database_url'],
    ['mysql://db/vrp', 'invalid_database_url'],
    ['postgres://db/vrp?schema=Robert";drop', 'invalid_schema_name'],
    ['postgres://db/vrp?schema=a-b', 'invalid_schema_name'],
  ])('%s is refused with %s', (url, code) => {
    expect(() => parseTarget(url, 'public')).toThrow(SqlError);
    expect(() => parseTarget(url, 'public')).toThrow(expect.objectContaining({ code }));
  });

  it('a PostgreSQL-only store refuses sqlite:', () => {
    expect(() => parsePostgresTarget('sqlite:x.db', 'public')).toThrow(expect.objectContaining({ code: 'invalid_database_url' }));
  });

  it('checks schema names once for every store: a lowercase identifier of at most 63 characters', () => {
    expect(assertSchemaName('_a1')).toBe('_a1');
    for (const bad of ['', '1a', 'A', 'a'.repeat(64), 'a b', 'a"']) expect(() => assertSchemaName(bad)).toThrow(SqlError);
  });

  it('redacts the password for messages', () => {
    const t = parseTarget('postgres://vrp:s3cret@db:5432/vrp?schema=p', 'x');
    expect(redactedTarget(t)).toBe('postgres://vrp@db:5432/vrp (schema p)');
    expect(redactedTarget(t)).not.toContain('s3cret');
  });
});

describe('the SQLite statement cache', () => {
  it('reuses a statement by SQL text and drops the least recently used when full (not everything at once)', () => {
    const sqlite = openSqliteFile(join(tmp, 'cache.sqlite'));
    const cache = withStatementCache(sqlite);
    try {
      const hot = cache.prepare('select 0 as n');
      for (let i = 1; i <= STATEMENT_CACHE_SIZE; i++) {
        cache.prepare(`select ${i} as n`);
        // The hot statement is used all along, so it stays.
        expect(cache.prepare('select 0 as n')).toBe(hot);
      }
      // The first cold statement was the least recently used: it was dropped and is prepared afresh.
      const cold = cache.prepare('select 1 as n');
      expect(cache.prepare('select 1 as n')).toBe(cold);
      expect(cache.prepare('select 0 as n')).toBe(hot);
    } finally {
      cache.close();
    }
  });
});

describe('tables defined once', () => {
  const BLOCK = {
    id: { type: 'text', primaryKey: true },
    start_date: { type: 'text', notNull: true },
    note: { type: 'text' },
  } as const;
  const FEED = { name: { type: 'text', primaryKey: true }, event_count: { type: 'integer', notNull: true, defaultTo: 0 } } as const;

  it('a store-wide key keeps its key and takes domain after it; a per-tenant name is keyed by (domain, name)', async () => {
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openSqliteFile(join(tmp, 'tables.sqlite')) }) });
    try {
      await createTable(db, 'tenant', { domain: { type: 'text', primaryKey: true } });
      const block = perTenant(BLOCK, { tenantKey: 'tenant.domain', key: 'store-wide' });
      await createTable(db, 'tenant_block', block.columns, block.options);
      const feed = perTenant(FEED, { tenantKey: 'tenant.domain', key: 'per-tenant' });
      await createTable(db, 'tenant_feed', feed.columns, feed.options);
      const ddl = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'table' order by name`.execute(
        db,
      );
      expect(Object.fromEntries(ddl.rows.map((r) => [r.name, r.sql]))).toEqual({
        tenant: 'CREATE TABLE "tenant" ("domain" text primary key)',
        tenant_block:
          'CREATE TABLE "tenant_block" ("id" text primary key, "domain" text not null references "tenant" ("domain") on delete cascade, "start_date" text not null, "note" text)',
        tenant_feed:
          'CREATE TABLE "tenant_feed" ("domain" text not null references "tenant" ("domain") on delete cascade, "name" text not null, "event_count" integer default 0 not null, constraint "tenant_feed_pk" primary key ("domain", "name"))',
      });
    } finally {
      await db.destroy();
    }
  });

  it('perTenant needs the key first', () => {
    expect(() => perTenant({ note: { type: 'text' } }, { tenantKey: 't.domain', key: 'store-wide' })).toThrow(TypeError);
  });
});

describe('migrations', () => {
  it('a failing migration is migration_failed naming it, and the database is closed', async () => {
    const err = await openDatabase(
      { kind: 'sqlite', file: join(tmp, 'failing.sqlite') },
      {
        applicationName: 'vrpkit-sql-test',
        migrations: {
          '0001_ok': { up: async (db) => createTable(db, 'a', { id: { type: 'integer', primaryKey: true } }) },
          '0002_broken': { up: async (db) => createTable(db, 'a', { id: { type: 'integer', primaryKey: true } }) },
        },
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SqlError);
    expect(err).toMatchObject({ code: 'migration_failed', message: expect.stringContaining('0002_broken') });
  });
});

describe('connection loss', () => {
  it('is told from a statement fault: SQLSTATE 08/57P0x, socket errors, pg-pool timeouts, wrapped or aggregated', () => {
    const coded = (code: string) => Object.assign(new Error('x'), { code });
    for (const e of [
      coded('57P01'),
      coded('08006'),
      coded('ECONNREFUSED'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new AggregateError([coded('ECONNREFUSED')], 'connect failed'),
      new Error('query failed', { cause: coded('57P01') }),
      new SqlError('store_unavailable'),
    ])
      expect(isConnectionLoss(e), String(e)).toBe(true);
    for (const e of [coded('23505'), coded('42P01'), new Error('boom'), 'text', undefined]) expect(isConnectionLoss(e)).toBe(false);
  });
});

describe.skipIf(!pgs)('PostgreSQL', () => {
  const target = (prefix: string): PostgresTarget => ({ kind: 'postgres', url: pgs!.url, schema: pgs!.schema(prefix) });

  it('a pool whose every connection the server terminates stays up, reports the loss, and answers the next query', async () => {
    const app = `vrpkit_sql_test_${process.pid}`;
    const losses: Error[] = [];
    const pool = openPgPool(target('sqlpool'), { applicationName: app, onConnectionLoss: (e) => losses.push(e) });
    const admin = new pg.Client({ connectionString: pgs!.url });
    await admin.connect();
    try {
      // Three idle connections in the pool.
      const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
      for (const c of clients) c.release();
      const cut = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [app]);
      expect(cut.rowCount).toBe(3);
      await new Promise((r) => setTimeout(r, 300));
      expect(losses.length).toBe(3);
      expect(losses[0]?.message).toContain('terminating connection due to administrator command');
      expect((await pool.query<{ s: string }>("select current_setting('application_name') as s")).rows[0]?.s).toBe(app);
    } finally {
      await admin.end();
      await pool.end();
    }
  });

  it('processes opening one new schema at once create it and migrate it once', async () => {
    const t = target('sqllock');
    let runs = 0;
    const migrations = {
      '0001': {
        up: async (db: Kysely<unknown>) => {
          runs++;
          await createTable(db, 'once', { id: { type: 'integer', primaryKey: true } });
        },
      },
    };
    const opened = await Promise.all(
      [1, 2, 3, 4].map(() => openDatabase(t, { migrations, applicationName: 'vrpkit-sql-test', poolSize: 2 })),
    );
    await Promise.all(opened.map((o) => o.db.destroy()));
    expect(runs).toBe(1);
  });

  it('migrations run while another session creates and drops schemas (Kysely introspects every schema): each store opens', async () => {
    const admin = new pg.Client({ connectionString: pgs!.url });
    await admin.connect();
    let churning = true;
    const churn = (async () => {
      // Another application's schemas coming and going: a table with a serial column is what the introspector asks about.
      for (let i = 0; churning; i++) {
        const s = `${pgs!.schema('churn')}_${i % 4}`;
        await admin.query(`create schema if not exists ${s}; create table if not exists ${s}.t (id serial primary key, a text, b text)`);
        await admin.query(`drop schema ${s} cascade`);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      const migrations = {
        '0001': { up: (db: Kysely<unknown>) => createTable(db, 'racing', { id: { type: 'integer', primaryKey: true } }) },
      };
      for (let i = 0; i < 12; i++) {
        const opened = await openDatabase(target(`sqlrace${i}`), { migrations, applicationName: 'vrpkit-sql-test', poolSize: 1 });
        await opened.db.destroy();
      }
    } finally {
      churning = false;
      await churn;
      await admin.end();
    }
  });

  it('a LISTEN connection: notifications in commit order, each committed before a confirmation handed over by then; a cut connection comes back under a new epoch', async () => {
    const app = `vrpkit_sql_listen_${process.pid}`;
    const channel = `vrpkit_sql_test_${process.pid}`;
    const got: string[] = [];
    let ups = 0;
    const losses: Error[] = [];
    const listener = await listenPg(target('sqllisten'), {
      channel,
      applicationName: app,
      onNotification: (p) => got.push(p),
      onUp: () => ups++,
      onDown: (e) => losses.push(e),
      confirmEveryMs: 20,
    });
    const admin = new pg.Client({ connectionString: pgs!.url });
    await admin.connect();
    const confirmedAfter = async (t: number) => {
      while (listener.confirmedAt() <= t) await new Promise((r) => setTimeout(r, 5));
    };
    try {
      expect([listener.up(), listener.epoch(), ups]).toEqual([true, 1, 1]);
      for (const n of ['a', 'b', 'c']) await admin.query('select pg_notify($1, $2)', [channel, n]);
      const committed = performance.now();
      await confirmedAfter(committed);
      // A confirmation that started after the commits: every one of them was handed over before it completed.
      expect(got).toEqual(['a', 'b', 'c']);
      const cut = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [app]);
      expect(cut.rowCount).toBe(1);
      const until = Date.now() + 5000;
      while (listener.epoch() < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect([listener.epoch(), ups, losses.length]).toEqual([2, 2, 1]);
      await admin.query('select pg_notify($1, $2)', [channel, 'd']);
      const again = performance.now();
      await confirmedAfter(again);
      expect(got).toEqual(['a', 'b', 'c', 'd']);
    } finally {
      await admin.end();
      await listener.close();
    }
    expect(listener.up()).toBe(false);
  });
});
