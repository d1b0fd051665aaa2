/**
 * The tenant store: every tenant is a full VRP node (its own canonical domain, property, key
 * ring, calendar) kept as rows of one platform database. Writes to a tenant bump its revision
 * in the same transaction, so every serving process reloads a tenant exactly when it changed
 * (on SQLite its head read again once anything was written, `commitCounterNow`, as the
 * single-domain node reads its store revision).
 */

import { randomUUID } from 'node:crypto';
import { type Clock, generateEd25519Jwk, publicJwkOf, systemClock } from '@vrpkit/core';
import {
  assertCanonicalDomain,
  assertFeedName,
  assertFeedUrl,
  assertUrlOnDomain,
  feedUrlForMessages,
  type PropertyDescription,
  REVISION_RECHECK_MS,
  type SigningKeyRecord,
  type StoreSnapshot,
  validatePropertyDescription,
} from '@vrpkit/node';
import type { OpenedDatabase } from '@vrpkit/sql';
import Database, { type Database as SqliteDatabase, type Statement } from 'better-sqlite3';
import { CompiledQuery, type ExpressionBuilder, type Kysely, sql, type Transaction } from 'kysely';
import { jsonArrayFrom as pgJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import { PlatformError } from './errors.js';
import { type MasterKey, openPrivateKey, sealPrivateKey } from './master-key.js';
import { openPlatformDatabase, type PlatformTarget, platformTarget } from './store/db.js';
import type { PlatformDatabase, TenantStatus } from './store/schema.js';
import { INVALIDATION_WINDOW_MS } from './tenant-watch.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** What disable, remove and key revocation wait after their commit on SQLite (ms): the commit counter's recheck bound (`commitCounterNow`) and a margin for timers. */
export const SQLITE_INVALIDATION_WINDOW_MS = REVISION_RECHECK_MS + 4;

export interface TenantSummary {
  domain: string;
  status: TenantStatus;
  property_id: string;
  name: string;
  revision: number;
  created_at: string;
  updated_at: string;
}

/**
 * One calendar feed as an operator sees it: its URL as logs show it (origin and digest; its path
 * and query may hold a token), its sync history and its state by the node's freshness rule
 * (Core VRP v0.1 §7): `failed` (last sync failed), `stale` (no success within the tenant's
 * calendar age, or none yet) or `fresh`. Any feed not fresh makes the tenant's offers non-quoteable.
 */
export interface TenantFeedStatus {
  name: string;
  url: string;
  state: 'fresh' | 'stale' | 'failed';
  last_success_at: string | null;
  /** When the feed turns stale unless it succeeds again first (its last success plus the calendar age); null before a first success. */
  stale_at: string | null;
  last_attempt_at: string | null;
  /** The stable code of the last sync's error (`feed_http_error`, `feed_address_refused`, …), null after a success. */
  last_error_code: string | null;
  /** Failed syncs in a row. */
  failures: number;
  next_due_at: string;
  event_count: number;
}

export interface TenantDetail extends TenantSummary {
  node_id: string;
  keys: { kid: string; status: string; created_at: string; activates_at: string; retired_at: string | null; revoked_at: string | null }[];
  feeds: TenantFeedStatus[];
}

/** One tenant's state as of its revision: the node snapshot plus the sealed private halves of its signing keys. */
export interface TenantSnapshot extends StoreSnapshot {
  status: TenantStatus;
  sealed: ReadonlyMap<string, string>;
}

/** A new tenant: its canonical domain and validated property. */
export interface NewTenant {
  domain: string;
  property: PropertyDescription;
}

type Tx = Transaction<PlatformDatabase>;

/** What the serving path reads of a tenant on every request. */
export interface TenantHead {
  status: TenantStatus;
  revision: number;
  created_at: string;
}
type HeadRow = { status: TenantStatus; revision: number | bigint | string; created_at: string };
const toHead = (row: HeadRow | undefined): TenantHead | undefined =>
  row ? { status: row.status, revision: Number(row.revision), created_at: row.created_at } : undefined;

export class PlatformStore {
  private headQuery: CompiledQuery<HeadRow> | undefined;
  private headStatement: Statement<[string], HeadRow> | undefined;
  /** SQLite: `PRAGMA data_version` on a read-only connection of its own, its last value and when it was read (`commitCounterNow`); null: none. */
  private commitCounter: { reader: SqliteDatabase; statement: Statement<[], number>; value: number; readAt: number } | null | undefined;
  /** `snapshotRows`' compiled statements by shape (domain count, enabled only). */
  private readonly snapshotStatements = new Map<string, CompiledQuery<SnapshotRow>>();
  /** PostgreSQL: `activeTenantSnapshots`' statement, its domains one array parameter, sent named (see there). */
  private activeSnapshotsStatement: { name: string; text: string; values: readonly unknown[] } | undefined;

  private constructor(
    readonly db: Kysely<PlatformDatabase>,
    readonly target: PlatformTarget,
    readonly clock: Clock,
    private readonly sqlite: SqliteDatabase | undefined,
    /** PostgreSQL: the pool `db` runs on, for the named statement of `activeTenantSnapshots`. */
    private readonly pool: OpenedDatabase<PlatformDatabase>['pool'],
  ) {}

  /** Open the platform database at `url` (postgres://… or sqlite:PATH), migrated to the latest version. */
  static async open(url: string | undefined, o: { clock?: Clock; poolSize?: number } = {}): Promise<PlatformStore> {
    const target = platformTarget(url);
    const { db, sqlite, pool } = await openPlatformDatabase(target, o.poolSize);
    return new PlatformStore(db, target, o.clock ?? systemClock, sqlite, pool);
  }

  close(): Promise<void> {
    this.commitCounter?.reader.close();
    return this.db.destroy();
  }

  // ── the platform ──────────────────────────────────────────────────────────────────────

  /** `vrp platform init`: record the master key's id (and the operator's own domain); idempotent for the same master key. */
  async init(master: MasterKey, operatorDomain: string | null): Promise<{ created: boolean }> {
    if (operatorDomain !== null) assertCanonicalDomain(operatorDomain);
    return this.db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('platform_info').selectAll().where('id', '=', 1).executeTakeFirst();
      if (row) {
        if (row.master_key_id !== master.id) throw new PlatformError('master_key_mismatch', { given: 'the one given' });
        if (operatorDomain !== null && operatorDomain !== row.operator_domain)
          await tx.updateTable('platform_info').set({ operator_domain: operatorDomain }).where('id', '=', 1).execute();
        return { created: false };
      }
      await tx
        .insertInto('platform_info')
        .values({ id: 1, operator_domain: operatorDomain, master_key_id: master.id, created_at: iso(this.clock.now()) })
        .execute();
      return { created: true };
    });
  }

  async info(): Promise<{ operator_domain: string | null; master_key_id: string; created_at: string; console_origin: string | null }> {
    const row = await this.db.selectFrom('platform_info').selectAll().where('id', '=', 1).executeTakeFirst();
    if (!row) throw new PlatformError('platform_not_initialized');
    return row;
  }

  /** Fail unless `master` is the key the platform's private keys are sealed under. */
  async assertMasterKey(master: MasterKey): Promise<void> {
    const { master_key_id } = await this.info();
    if (master_key_id !== master.id) throw new PlatformError('master_key_mismatch', { given: 'the one given' });
  }

  // ── tenants ───────────────────────────────────────────────────────────────────────────

  /**
   * Add tenants, each with its first signing key, in one transaction (all or nothing). With
   * `skipExisting` a tenant whose domain is already present is left as it is (idempotent import);
   * otherwise it is `tenant_exists`. Returns the domains added. Each property is validated here,
   * on its way in (as the node's store takes only a validated property), so serving reads it
   * back without validating it again: a cold tenant's load then costs no schema validation.
   */
  async addTenants(master: MasterKey, tenants: readonly NewTenant[], o: { skipExisting?: boolean } = {}): Promise<string[]> {
    const now = this.clock.now();
    const valid = tenants.map((t) => {
      assertCanonicalDomain(t.domain);
      const property = validatePropertyDescription(t.property, t.domain);
      assertUrlOnDomain(property, t.domain, t.domain);
      return { domain: t.domain, property };
    });
    // Keys are generated before the transaction: no key material waits on a lock.
    const prepared = await Promise.all(
      valid.map(async (t) => {
        const kid = `${t.domain}-${iso(now).slice(0, 10)}-01`;
        const { privateJwk } = await generateEd25519Jwk();
        return {
          ...t,
          kid,
          public_jwk: JSON.stringify(publicJwkOf(privateJwk, kid)),
          sealed: sealPrivateKey(master, t.domain, kid, privateJwk),
        };
      }),
    );
    await this.assertMasterKey(master);
    return this.db.transaction().execute(async (tx) => {
      const domains = prepared.map((t) => t.domain);
      const existing = new Set<string>();
      for (let i = 0; i < domains.length; i += 500) {
        const rows = await tx
          .selectFrom('platform_tenant')
          .select('domain')
          .where('domain', 'in', domains.slice(i, i + 500))
          .execute();
        for (const r of rows) existing.add(r.domain);
      }
      if (existing.size > 0 && !o.skipExisting) {
        throw new PlatformError('tenant_exists', { domain: [...existing][0]! });
      }
      const fresh = prepared.filter((t) => !existing.has(t.domain));
      // Bulk inserts in chunks (PostgreSQL caps a statement at 65,535 parameters; SQLite at 32,766).
      for (let i = 0; i < fresh.length; i += 200) {
        const chunk = fresh.slice(i, i + 200);
        await tx
          .insertInto('platform_tenant')
          .values(
            chunk.map((t) => ({
              domain: t.domain,
              node_id: t.domain,
              status: 'active' as const,
              property: JSON.stringify(t.property),
              revision: 1,
              created_at: iso(now),
              updated_at: iso(now),
            })),
          )
          .execute();
        await tx
          .insertInto('platform_tenant_key')
          .values(chunk.map((t) => activeKeyRow({ kid: t.kid, domain: t.domain, public_jwk: t.public_jwk, sealed_private: t.sealed }, now)))
          .execute();
      }
      return fresh.map((t) => t.domain);
    });
  }

  async listTenants(o: { status?: TenantStatus; limit?: number; after?: string } = {}): Promise<TenantSummary[]> {
    let q = this.db.selectFrom('platform_tenant').selectAll().orderBy('domain');
    if (o.status) q = q.where('status', '=', o.status);
    if (o.after) q = q.where('domain', '>', o.after);
    if (o.limit) q = q.limit(o.limit);
    return (await q.execute()).map(summaryOf);
  }

  async countTenants(status?: TenantStatus): Promise<number> {
    let q = this.db.selectFrom('platform_tenant').select((eb) => eb.fn.countAll<number>().as('n'));
    if (status) q = q.where('status', '=', status);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  async showTenant(domain: string): Promise<TenantDetail> {
    const row = await this.db.selectFrom('platform_tenant').selectAll().where('domain', '=', domain).executeTakeFirst();
    if (!row) throw unknownTenant(domain);
    const keys = await this.db
      .selectFrom('platform_tenant_key')
      .select(['kid', 'status', 'created_at', 'activates_at', 'retired_at', 'revoked_at'])
      .where('domain', '=', domain)
      .orderBy('created_at')
      .orderBy('kid')
      .execute();
    const feeds = await this.db.selectFrom('platform_tenant_feed').selectAll().where('domain', '=', domain).orderBy('name').execute();
    const maxAgeMs = (JSON.parse(row.property) as PropertyDescription).calendar_max_age_minutes * 60_000;
    const cutoff = iso(this.clock.now() - maxAgeMs);
    return {
      ...summaryOf(row),
      node_id: row.node_id,
      keys,
      feeds: feeds.map((f) => ({
        name: f.name,
        url: f.url ? feedUrlForMessages(f.url) : '',
        state: f.last_error !== null ? 'failed' : f.last_success_at === null || f.last_success_at < cutoff ? 'stale' : 'fresh',
        last_success_at: f.last_success_at,
        stale_at: f.last_success_at === null ? null : iso(Date.parse(f.last_success_at) + maxAgeMs),
        last_attempt_at: f.last_attempt_at,
        // Recorded as `code: message` (syncFeed).
        last_error_code: f.last_error === null ? null : f.last_error.split(':', 1)[0]!,
        failures: Number(f.failures),
        next_due_at: f.next_due_at,
        event_count: Number(f.event_count),
      })),
    };
  }

  /**
   * Disable or re-enable a tenant. Returns once every serving process honours it: a disabled
   * tenant is then served by none (on PostgreSQL after the invalidation window, `honoured`).
   */
  async setTenantStatus(domain: string, status: TenantStatus, actor = CLI_ACTOR): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction().execute(async (tx) => {
      const r = await tx
        .updateTable('platform_tenant')
        .set({ status, revision: sql<number>`revision + 1`, updated_at: iso(now) })
        .where('domain', '=', domain)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) throw unknownTenant(domain);
      await audit(tx, now, actor, status === 'disabled' ? 'tenant_disable' : 'tenant_enable', domain);
    });
    if (status === 'disabled') await this.honoured();
  }

  /** Remove a tenant and everything it owns (keys, feeds, blocks, sessions and holds); returns once no serving process serves it (`honoured`). */
  async removeTenant(domain: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const owned = [
        'platform_tenant_ucp_session',
        'platform_tenant_booking',
        'platform_tenant_block',
        'platform_tenant_feed',
        'platform_tenant_key',
      ] as const;
      for (const t of owned) await tx.deleteFrom(t).where('domain', '=', domain).execute();
      const r = await tx.deleteFrom('platform_tenant').where('domain', '=', domain).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) throw unknownTenant(domain);
    });
    await this.honoured();
  }

  /**
   * Wait, after a commit, until every serving process honours it. On PostgreSQL serving processes
   * keep tenant state in memory for at most the lease past its last confirmation (tenant-watch.ts),
   * so the invalidation window after the commit is the bound: waiting it out needs no list of
   * serving processes and no acknowledgement from each. SQLite serving processes check in each
   * request's own turn whether anything was written, with a check at most `REVISION_RECHECK_MS`
   * old (`commitCounterNow`): that bound, with a margin for timers, is the wait.
   */
  private honoured(): Promise<void> {
    const ms = this.target.kind === 'postgres' ? INVALIDATION_WINDOW_MS : SQLITE_INVALIDATION_WINDOW_MS;
    return new Promise((r) => setTimeout(r, ms));
  }

  // ── the serving path ──────────────────────────────────────────────────────────────────

  /**
   * A tenant's status, revision and creation time (one indexed read), or undefined when no such
   * tenant exists. The creation time tells a tenant removed and added again under its domain (a
   * new property and key, its revision starting over) from the one a server has loaded.
   */
  async tenantHead(domain: string): Promise<TenantHead | undefined> {
    const head = this.compiledHead();
    const { rows } = await this.db.executeQuery(CompiledQuery.raw(head.sql, [domain]) as typeof head);
    return toHead(rows[0]);
  }

  /**
   * `tenantHead` in the caller's own turn, on SQLite (better-sqlite3 reads synchronously), so the
   * serving path dispatches a request without yielding, as the single-domain node does; `null`
   * when it cannot: on PostgreSQL (a round trip), and while this process has a transaction open
   * on the connection (its uncommitted writes must not be read; `tenantHead` waits for it).
   */
  tenantHeadNow(domain: string): TenantHead | undefined | null {
    if (!this.sqlite || this.sqlite.inTransaction) return null;
    this.headStatement ??= this.sqlite.prepare<[string], HeadRow>(this.compiledHead().sql);
    return toHead(this.headStatement.get(domain));
  }

  /**
   * SQLite: a number that changes once a write has committed to the database, whichever process or
   * connection wrote (this process's own included): `PRAGMA data_version` on a read-only connection
   * of its own, which counts every other connection's commits. As the node's store revision
   * (`REVISION_RECHECK_MS`), it is read again once a millisecond at most, so under load many
   * requests share one statement, and a write shows here within that bound; `honoured` waits it
   * out. While it returns what it returned before a tenant's head was read, that head still holds:
   * the serving path skips the head read (tenant-node.ts). `null` when it cannot tell in the
   * caller's turn: as `tenantHeadNow`, and for an in-memory database (no second connection sees it).
   */
  commitCounterNow(): number | null {
    if (!this.sqlite || this.sqlite.inTransaction || this.target.kind !== 'sqlite') return null;
    if (this.commitCounter === undefined) {
      const { file } = this.target;
      const reader = file === ':memory:' ? undefined : new Database(file, { readonly: true, fileMustExist: true });
      const statement = reader?.prepare<[], number>('PRAGMA data_version').pluck();
      this.commitCounter = reader && statement ? { reader, statement, value: 0, readAt: Number.NEGATIVE_INFINITY } : null;
    }
    const c = this.commitCounter;
    if (!c) return null;
    const now = performance.now();
    if (now - c.readAt >= REVISION_RECHECK_MS) {
      // The time is taken before the statement: a write committing after it shows at the next read.
      c.readAt = now;
      c.value = c.statement.get() ?? 0;
    }
    return c.value;
  }

  /** The head query, compiled once (it runs on every request; building and compiling it each time was a third of its CPU): the domain is its parameter. */
  private compiledHead(): CompiledQuery<HeadRow> {
    this.headQuery ??= this.db
      .selectFrom('platform_tenant')
      .select(['status', 'revision', 'created_at'])
      .where('domain', '=', '')
      .compile();
    return this.headQuery;
  }

  /** Ages of the signing keys of enabled tenants (oldest, newest) in seconds, or undefined without tenants. */
  async signingKeyAges(): Promise<{ oldestSeconds: number; newestSeconds: number } | undefined> {
    const row = await this.db
      .selectFrom('platform_tenant_key as k')
      .innerJoin('platform_tenant as t', 't.domain', 'k.domain')
      .where('t.status', '=', 'active')
      .where('k.status', '=', 'active')
      .select((eb) => [eb.fn.min('k.created_at').as('oldest'), eb.fn.max('k.created_at').as('newest')])
      .executeTakeFirst();
    if (!row?.oldest || !row.newest) return undefined;
    const now = this.clock.now();
    return { oldestSeconds: (now - Date.parse(row.oldest)) / 1000, newestSeconds: (now - Date.parse(row.newest)) / 1000 };
  }

  /** Everything a tenant's offer service reads, as of its current revision (one statement), through `db` (a transaction's, for a hold). */
  async tenantSnapshot(domain: string, db: Kysely<PlatformDatabase> = this.db): Promise<TenantSnapshot> {
    const [row] = await this.snapshotRows([domain], false, db);
    if (!row) throw unknownTenant(domain);
    return snapshotOf(row);
  }

  /**
   * The enabled tenants among `domains`, each with everything its offer service reads: what the
   * first requests of the tenants serving some hosts need, in one statement (one round trip).
   */
  async activeTenantSnapshots(domains: readonly string[]): Promise<TenantSnapshot[]> {
    if (domains.length === 0) return [];
    if (!this.pool) return (await this.snapshotRows(domains, true)).map(snapshotOf);
    // On PostgreSQL one statement for any count (the domains one text[] parameter), sent as a
    // named prepared statement: each pooled connection parses and plans it once, then is sent
    // its parameters alone. Unnamed (as Kysely sends every statement), its text went with every
    // cold tenant's lookup and PostgreSQL parsed and planned it each time (planning: 0.8 ms of
    // the database's CPU under load, more than it took to run).
    this.activeSnapshotsStatement ??= (() => {
      const { sql: text, parameters } = this.snapshotQuery()
        .where('t.domain', '=', sql<string>`any(${[]})`)
        .where('t.status', '=', 'active')
        .compile();
      return { name: 'vrpkit_platform_tenant_snapshots', text, values: parameters };
    })();
    const statement = this.activeSnapshotsStatement;
    const { rows } = await this.pool.query<SnapshotRow>({ ...statement, values: [domains, ...statement.values.slice(1)] });
    return rows.map(snapshotOf);
  }

  /**
   * The snapshot statement for `domains` (enabled tenants only with `activeOnly`), compiled once
   * per shape: building and compiling it cost more CPU than the round trip on a cold tenant's
   * first request. The domains are its first parameters.
   */
  private async snapshotRows(domains: readonly string[], activeOnly: boolean, db = this.db): Promise<SnapshotRow[]> {
    const shape = `${domains.length}:${activeOnly}`;
    let compiled = this.snapshotStatements.get(shape);
    if (!compiled) {
      let q = this.snapshotQuery().where(
        't.domain',
        'in',
        domains.map(() => ''),
      );
      if (activeOnly) q = q.where('t.status', '=', 'active');
      compiled = q.compile() as CompiledQuery<SnapshotRow>;
      this.snapshotStatements.set(shape, compiled);
    }
    const parameters = [...domains, ...compiled.parameters.slice(domains.length)];
    const { rows } = await db.executeQuery(CompiledQuery.raw(compiled.sql, parameters) as typeof compiled);
    return rows;
  }

  /** A tenant's row with its keys, feeds and blocks as JSON arrays (Kysely's helper of the store's dialect). */
  private snapshotQuery() {
    const json = this.target.kind === 'postgres' ? pgJsonArrayFrom : sqliteJsonArrayFrom;
    return this.db
      .selectFrom('platform_tenant as t')
      .select(TENANT_FIELDS)
      .select((eb) => [
        json(
          eb
            .selectFrom('platform_tenant_key as k')
            .select(KEY_FIELDS)
            .whereRef('k.domain', '=', 't.domain')
            .orderBy('k.created_at')
            .orderBy('k.kid'),
        ).as('keys'),
        // The feed as the node's freshness rule reads it; the sync columns (due time, lease) are the workers'.
        json(eb.selectFrom('platform_tenant_feed as f').select(FEED_FIELDS).whereRef('f.domain', '=', 't.domain').orderBy('f.name')).as(
          'feeds',
        ),
        json(
          eb.selectFrom('platform_tenant_block as b').select(BLOCK_FIELDS).whereRef('b.domain', '=', 't.domain').orderBy('b.start_date'),
        ).as('blocks'),
        // From then on the blocks show held nights that are free (`TenantSource.snapshot` expires them first).
        eb
          .selectFrom('platform_tenant_booking as h')
          .select((h) => h.fn.min('h.hold_expires_at').as('at'))
          .whereRef('h.domain', '=', 't.domain')
          // A literal: the statement's first parameters are the domains (`snapshotRows`).
          .where('h.status', '=', sql.lit('pending'))
          .as('next_hold_expiry'),
      ]);
  }

  // ── calendar feeds ────────────────────────────────────────────────────────────────────

  /**
   * Add iCal feeds (https URLs) to tenants, in one transaction. A new feed has never synced, so its
   * tenant's calendar is stale (offers non-quoteable, as on a single node) until a sync worker
   * imports it; it is due at once.
   */
  async addTenantFeeds(feeds: readonly { domain: string; name: string; url: string }[]): Promise<void> {
    for (const f of feeds) {
      assertFeedName(f.name);
      assertFeedUrl(f.url);
    }
    const now = iso(this.clock.now());
    await this.db.transaction().execute(async (tx) => {
      const domains = [...new Set(feeds.map((f) => f.domain))];
      for (let i = 0; i < domains.length; i += 500) {
        const chunk = domains.slice(i, i + 500);
        const found = new Set(
          (await tx.selectFrom('platform_tenant').select('domain').where('domain', 'in', chunk).execute()).map((r) => r.domain),
        );
        const missing = chunk.find((d) => !found.has(d));
        if (missing) throw unknownTenant(missing);
      }
      // 200 pairs a statement keeps the OR chain well under SQLite's expression depth limit (1000).
      for (let i = 0; i < feeds.length; i += 200) {
        const chunk = feeds.slice(i, i + 200);
        const taken = await tx
          .selectFrom('platform_tenant_feed')
          .select(['domain', 'name'])
          .where((eb) => eb.or(chunk.map((f) => eb.and([eb('domain', '=', f.domain), eb('name', '=', f.name)]))))
          .executeTakeFirst();
        if (taken) throw new PlatformError('feed_exists', { domain: taken.domain, name: taken.name });
        await tx
          .insertInto('platform_tenant_feed')
          .values(
            chunk.map((f) => ({
              domain: f.domain,
              name: f.name,
              url: f.url,
              created_at: now,
              event_count: 0,
              next_due_at: now,
              failures: 0,
            })),
          )
          .execute();
      }
      for (const d of domains) await bump(tx, d, this.clock.now());
    });
  }

  /**
   * Remove one feed of a tenant, named by its name or its URL, with the blocks it imported; its
   * freshness no longer counts for the tenant's offers. A URL that names several feeds of the
   * tenant is `ambiguous_feed` (remove by name). Errors never repeat the URL (it may hold a token).
   */
  async removeTenantFeed(domain: string, feed: string): Promise<{ name: string }> {
    return this.db.transaction().execute(async (tx) => {
      const tenant = await tx.selectFrom('platform_tenant').select('domain').where('domain', '=', domain).executeTakeFirst();
      if (!tenant) throw unknownTenant(domain);
      const matches = await tx
        .selectFrom('platform_tenant_feed')
        .select('name')
        .where('domain', '=', domain)
        .where((eb) => eb.or([eb('name', '=', feed), eb('url', '=', feed)]))
        .execute();
      // A name is matched first: a feed's name is unique within its tenant.
      const named = matches.find((m) => m.name === feed);
      if (!named && matches.length > 1) throw new PlatformError('ambiguous_feed', { domain, count: matches.length });
      const target = named ?? matches[0];
      if (!target) throw new PlatformError('unknown_feed', { domain });
      await tx.deleteFrom('platform_tenant_block').where('domain', '=', domain).where('feed_name', '=', target.name).execute();
      await tx.deleteFrom('platform_tenant_feed').where('domain', '=', domain).where('name', '=', target.name).execute();
      await bump(tx, domain, this.clock.now());
      return { name: target.name };
    });
  }

  // ── keys ──────────────────────────────────────────────────────────────────────────────

  /**
   * Activate a fresh key for `domain` (Core VRP v0.1 §3.1, additive rotation): the signing key
   * is retired now and stays published until `now + retention`; the retired private half is
   * dropped from the database. One transaction, so at any instant exactly one key signs.
   */
  async rotateTenantKey(master: MasterKey, domain: string, tx?: Tx, actor = CLI_ACTOR): Promise<{ kid: string; retired: string[] }> {
    const now = this.clock.now();
    const { privateJwk } = await generateEd25519Jwk();
    const run = async (t: Tx) => {
      const tenant = await t.selectFrom('platform_tenant').select(['property']).where('domain', '=', domain).executeTakeFirst();
      if (!tenant) throw unknownTenant(domain);
      const lifetimeMs = (JSON.parse(tenant.property) as PropertyDescription).offer_lifetime_minutes * 60_000;
      const prefix = `${domain}-${iso(now).slice(0, 10)}-`;
      const used = (await t.selectFrom('platform_tenant_key').select('kid').where('kid', 'like', `${prefix}%`).execute())
        .map((r) => Number(r.kid.slice(prefix.length)))
        .filter(Number.isInteger);
      const kid = `${prefix}${String(Math.max(0, ...used) + 1).padStart(2, '0')}`;
      const signing = (w: ExpressionBuilder<PlatformDatabase, 'platform_tenant_key'>) =>
        w.and([w('domain', '=', domain), w('status', '=', 'active')]);
      const retired = (await t.selectFrom('platform_tenant_key').select('kid').where(signing).execute()).map((r) => r.kid);
      await t
        .updateTable('platform_tenant_key')
        .set({ status: 'retired', retired_at: iso(now), retain_until: iso(now + lifetimeMs), sealed_private: null })
        .where(signing)
        .execute();
      await t
        .insertInto('platform_tenant_key')
        .values(
          activeKeyRow(
            {
              kid,
              domain,
              public_jwk: JSON.stringify(publicJwkOf(privateJwk, kid)),
              sealed_private: sealPrivateKey(master, domain, kid, privateJwk),
            },
            now,
          ),
        )
        .execute();
      await bump(t, domain, now);
      await audit(t, now, actor, 'key_rotate', domain, kid);
      return { kid, retired };
    };
    return tx ? run(tx) : this.db.transaction().execute(run);
  }

  /**
   * `vrp platform keys rotate --older-than AGE --batch N`: rotate every enabled tenant whose
   * signing key was created before `cutoff`, N tenants per transaction. Safe to run from several
   * processes and machines at once: on PostgreSQL each batch locks its tenant rows with
   * `FOR UPDATE SKIP LOCKED` (another rotator takes other tenants, never the same one), and each
   * tenant's key age is checked again under the lock, so a tenant another rotator has just done
   * is left alone. SQLite has a single writer: its transactions serialise.
   */
  async rotateKeysOlderThan(
    master: MasterKey,
    cutoff: number,
    batch: number,
    onProgress?: (rotated: number) => void,
  ): Promise<{ rotated: string[] }> {
    await this.assertMasterKey(master);
    const rotated: string[] = [];
    const stale = (db: Kysely<PlatformDatabase> | Tx) =>
      db
        .selectFrom('platform_tenant')
        .select('domain')
        .where('status', '=', 'active')
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('platform_tenant_key as k')
              .select('k.kid')
              .whereRef('k.domain', '=', 'platform_tenant.domain')
              .where('k.status', '=', 'active')
              .where('k.created_at', '<', iso(cutoff)),
          ),
        );
    for (;;) {
      const done = await this.db.transaction().execute(async (tx) => {
        let q = stale(tx).orderBy('domain').limit(batch);
        if (this.target.kind === 'postgres') q = q.forUpdate().skipLocked();
        const locked = (await q.execute()).map((r) => r.domain);
        const mine: string[] = [];
        for (const domain of locked) {
          // Re-read under the lock: a rotator that committed after this statement's snapshot has already done it.
          const still = await stale(tx).where('domain', '=', domain).executeTakeFirst();
          if (!still) continue;
          await this.rotateTenantKey(master, domain, tx);
          mine.push(domain);
        }
        return { locked: locked.length, mine };
      });
      rotated.push(...done.mine);
      onProgress?.(rotated.length);
      if (done.locked === 0) {
        // Nothing left this process could lock: either all done, or the rest is locked by another rotator right now.
        if (!(await stale(this.db).limit(1).executeTakeFirst())) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return { rotated };
  }

  /**
   * Revoke a key at once (compromise); revoking the signing key first activates a fresh one, so the
   * tenant keeps signing. Returns once no serving process signs with the key (`honoured`).
   */
  async revokeTenantKey(
    master: MasterKey,
    domain: string,
    kid: string,
    actor = CLI_ACTOR,
  ): Promise<{ kid: string; new_active_kid: string | null }> {
    const revoked = await this.db.transaction().execute(async (tx) => {
      const key = await tx
        .selectFrom('platform_tenant_key')
        .selectAll()
        .where('kid', '=', kid)
        .where('domain', '=', domain)
        .executeTakeFirst();
      if (!key) throw new PlatformError('unknown_kid', { kid, domain });
      if (key.status === 'revoked') throw new PlatformError('already_revoked', { kid });
      const replacement = key.status === 'active' ? await this.rotateTenantKey(master, domain, tx, actor) : null;
      await tx
        .updateTable('platform_tenant_key')
        .set({ status: 'revoked', revoked_at: iso(this.clock.now()), sealed_private: null })
        .where('kid', '=', kid)
        .execute();
      await bump(tx, domain, this.clock.now());
      await audit(tx, this.clock.now(), actor, 'key_revoke', domain, kid);
      return { kid, new_active_kid: replacement?.kid ?? null };
    });
    await this.honoured();
    return revoked;
  }

  /**
   * Re-seal every stored private key from `from` to `to` (`vrp platform master-key rotate`), in
   * batches, each its own transaction; the platform records `to` once every key is under it.
   * Safe to re-run after an interruption: a key already under `to` is left alone.
   */
  async rotateMasterKey(from: MasterKey, to: MasterKey, onProgress?: (done: number) => void): Promise<{ resealed: number }> {
    const info = await this.info();
    if (info.master_key_id !== from.id && info.master_key_id !== to.id)
      throw new PlatformError('master_key_mismatch', { given: 'the old one given' });
    let resealed = 0;
    let after = '';
    for (;;) {
      const batch = await this.db
        .selectFrom('platform_tenant_key')
        .select(['kid', 'domain', 'sealed_private'])
        .where('sealed_private', 'is not', null)
        .where('kid', '>', after)
        .orderBy('kid')
        .limit(500)
        .execute();
      if (batch.length === 0) break;
      await this.db.transaction().execute(async (tx) => {
        for (const k of batch) {
          let jwk: ReturnType<typeof openPrivateKey>;
          try {
            jwk = openPrivateKey(from, k.domain, k.kid, k.sealed_private!);
          } catch {
            openPrivateKey(to, k.domain, k.kid, k.sealed_private!); // already under the new key (an earlier interrupted run)
            continue;
          }
          await tx
            .updateTable('platform_tenant_key')
            .set({ sealed_private: sealPrivateKey(to, k.domain, k.kid, jwk) })
            .where('kid', '=', k.kid)
            .execute();
          resealed++;
        }
      });
      after = batch[batch.length - 1]!.kid;
      onProgress?.(resealed);
    }
    await this.db.updateTable('platform_info').set({ master_key_id: to.id }).where('id', '=', 1).execute();
    return { resealed };
  }
}

/** The actor the CLI's changes are audited as. */
export const CLI_ACTOR = 'cli';

/**
 * One line of the audit trail, in the transaction of the change it records, so a change without
 * its line (or a line without its change) never commits. Ids and codes only: never a key or a URL.
 */
export function audit(tx: Kysely<PlatformDatabase>, now: number, actor: string, action: string, domain: string | null, detail?: string) {
  return tx
    .insertInto('platform_audit')
    .values({ id: randomUUID(), at: iso(now), actor, action, domain, detail: detail ?? null })
    .execute();
}

/** Bump a tenant's revision in the transaction that changed it: every serving process reloads it at its next request. */
export function bump(tx: Kysely<PlatformDatabase>, domain: string, now: number) {
  return tx
    .updateTable('platform_tenant')
    .set({ revision: sql<number>`revision + 1`, updated_at: iso(now) })
    .where('domain', '=', domain)
    .execute();
}

/**
 * The tenant row's columns, named: a column a later migration adds does not change the result of
 * the prepared lookup statement (PostgreSQL refuses to run a prepared statement whose result
 * type changed: "cached plan must not change result type"), so processes of the previous
 * version keep serving through a rolling upgrade.
 */
const TENANT_FIELDS = ['t.domain', 't.node_id', 't.status', 't.property', 't.revision', 't.created_at', 't.updated_at'] as const;

/** The columns of a tenant's rows its offer service reads (named: SQLite's JSON helper takes no `selectAll`). */
const KEY_FIELDS = [
  'k.kid',
  'k.public_jwk',
  'k.status',
  'k.created_at',
  'k.activates_at',
  'k.retired_at',
  'k.retain_until',
  'k.revoked_at',
  'k.sealed_private',
] as const;
const FEED_FIELDS = ['f.name', 'f.url', 'f.created_at', 'f.last_attempt_at', 'f.last_success_at', 'f.last_error', 'f.event_count'] as const;
const BLOCK_FIELDS = ['b.id', 'b.property_id', 'b.start_date', 'b.end_date', 'b.kind', 'b.feed_name', 'b.note', 'b.created_at'] as const;

type SnapshotRow = PlatformDatabase['platform_tenant'] & {
  keys: (SigningKeyRecord & { sealed_private: string | null })[] | string;
  feeds: (Omit<StoreSnapshot['feeds'][number], 'file' | 'event_count'> & { event_count: number | string })[] | string;
  blocks: StoreSnapshot['blocks'] | string;
  next_hold_expiry: string | null;
};

/** A JSON array column: parsed by `pg`, text from SQLite. */
const arrayOf = <T>(v: T[] | string): T[] => (typeof v === 'string' ? (JSON.parse(v) as T[]) : v);

/** A tenant's snapshot from its row and its rows as JSON arrays (the property as `addTenants` validated it). */
function snapshotOf(row: SnapshotRow): TenantSnapshot {
  const stored = JSON.parse(row.property) as PropertyDescription;
  // Core VRP v0.1 §2: discovery states who holds the signing key; on a platform it is the platform.
  const property: PropertyDescription = { ...stored, operator: { ...stored.operator, key_custody: 'platform' } };
  const sealed = new Map<string, string>();
  const keys: SigningKeyRecord[] = arrayOf(row.keys).map(({ sealed_private, ...k }) => {
    if (sealed_private) sealed.set(k.kid, sealed_private);
    return k;
  });
  return {
    revision: Number(row.revision),
    status: row.status,
    info: { canonical_domain: row.domain, node_id: row.node_id, created_at: row.created_at },
    property,
    feeds: arrayOf(row.feeds).map((f) => ({ ...f, file: null, event_count: Number(f.event_count) })),
    blocks: arrayOf(row.blocks),
    nextHoldExpiry: row.next_hold_expiry ?? null,
    keys,
    sealed,
  };
}

function summaryOf(row: PlatformDatabase['platform_tenant']): TenantSummary {
  const p = JSON.parse(row.property) as { property_id: string; name: string };
  return {
    domain: row.domain,
    status: row.status,
    property_id: p.property_id,
    name: p.name,
    revision: Number(row.revision),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function unknownTenant(domain: string): PlatformError {
  return new PlatformError('unknown_tenant', { domain: domain.slice(0, 253) });
}

/** A tenant's new signing key row: active from `now`, nothing retired, retained or revoked (tenant creation and rotation alike). */
function activeKeyRow(k: { kid: string; domain: string; public_jwk: string; sealed_private: string }, now: number) {
  return {
    ...k,
    status: 'active' as const,
    created_at: iso(now),
    activates_at: iso(now),
    retired_at: null,
    retain_until: null,
    revoked_at: null,
  };
}
