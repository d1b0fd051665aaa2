/**
 * Feed leases: how any number of sync workers, on any number of machines, share the tenants'
 * calendar feeds without fetching one twice at once. A worker claims due feeds by writing its
 * lease (`lease_owner`, `lease_until`) on them: on PostgreSQL the due rows are selected
 * `FOR UPDATE SKIP LOCKED` (two claimers never wait on or take the same row), on SQLite the claim
 * runs under `BEGIN IMMEDIATE` (the write lock is taken before the due rows are read). Every
 * result is written only while the lease is still the worker's (fencing: the feed row is read
 * and written under the same lock), so a worker whose lease expired and was taken over writes
 * nothing. A killed worker's leases simply expire and the feeds are due for any worker again.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '@vrpkit/core';
import { type FeedRecorder, nextSyncDelayMs, type PropertyDescription } from '@vrpkit/node';
import { type Kysely, sql } from 'kysely';
import type { PlatformDatabase, TenantFeedTable } from './store/schema.js';
import { bump, type PlatformStore } from './tenants.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A feed this worker holds the lease on, with what its sync needs. */
export interface ClaimedFeed {
  domain: string;
  name: string;
  url: string;
  /** Failed syncs in a row before this one. */
  failures: number;
  /** Epoch ms the lease ends. */
  leaseUntil: number;
  property: Pick<PropertyDescription, 'property_id' | 'time_zone' | 'booking_horizon_days' | 'max_nights' | 'calendar_max_age_minutes'>;
}

/** Run `fn` as one write transaction that holds the write lock from its first read (see the module comment). */
async function writeTransaction<T>(store: PlatformStore, fn: (db: Kysely<PlatformDatabase>) => Promise<T>): Promise<T> {
  if (store.target.kind === 'postgres') return store.db.transaction().execute(fn);
  return store.db.connection().execute(async (c) => {
    await sql`begin immediate`.execute(c);
    try {
      const r = await fn(c);
      await sql`commit`.execute(c);
      return r;
    } catch (e) {
      await sql`rollback`.execute(c);
      throw e;
    }
  });
}

/** Feeds of enabled tenants due at `now` (being synced or not). */
function dueFeeds(db: Kysely<PlatformDatabase>, now: string) {
  return db
    .selectFrom('platform_tenant_feed as f')
    .where('f.url', 'is not', null)
    .where('f.next_due_at', '<=', now)
    .where((eb) =>
      eb.exists(
        eb.selectFrom('platform_tenant as t').select('t.domain').whereRef('t.domain', '=', 'f.domain').where('t.status', '=', 'active'),
      ),
    );
}

/** Claim up to `limit` due feeds for `owner`, most overdue first, each leased for `leaseMs`. */
export async function claimDueFeeds(store: PlatformStore, owner: string, limit: number, leaseMs: number): Promise<ClaimedFeed[]> {
  const now = store.clock.now();
  const leaseUntil = now + leaseMs;
  const rows = await writeTransaction(store, async (db) => {
    let q = dueFeeds(db, iso(now))
      // The lease is free: none, or expired (its worker died or stalled).
      .where((eb) => eb.or([eb('f.lease_until', 'is', null), eb('f.lease_until', '<=', iso(now))]))
      .select(['f.domain', 'f.name', 'f.url', 'f.failures'])
      .orderBy('f.next_due_at')
      .orderBy('f.domain')
      .orderBy('f.name')
      .limit(limit);
    if (store.target.kind === 'postgres') q = q.forUpdate().skipLocked();
    const due = await q.execute();
    if (due.length === 0) return [];
    await db
      .updateTable('platform_tenant_feed')
      .set({ lease_owner: owner, lease_until: iso(leaseUntil) })
      .where((eb) => eb.or(due.map((f) => eb.and([eb('domain', '=', f.domain), eb('name', '=', f.name)]))))
      .execute();
    return due;
  });
  if (rows.length === 0) return [];
  // The properties are read after the claim: they are validated when written and need no lock.
  const props = new Map(
    (
      await store.db
        .selectFrom('platform_tenant')
        .select(['domain', 'property'])
        .where('domain', 'in', [...new Set(rows.map((r) => r.domain))])
        .execute()
    ).map((r) => [r.domain, JSON.parse(r.property) as PropertyDescription]),
  );
  return rows.flatMap((r) => {
    const p = props.get(r.domain);
    // A tenant removed since the claim: its feed rows went with it.
    return p ? [{ domain: r.domain, name: r.name, url: r.url!, failures: Number(r.failures), leaseUntil, property: p }] : [];
  });
}

/** Give a claimed feed back unsynced (its lease would end before a fetch could): it stays due for any worker. */
export async function releaseFeed(store: PlatformStore, owner: string, f: Pick<ClaimedFeed, 'domain' | 'name'>): Promise<void> {
  await store.db
    .updateTable('platform_tenant_feed')
    .set({ lease_owner: null, lease_until: null })
    .where('domain', '=', f.domain)
    .where('name', '=', f.name)
    .where('lease_owner', '=', owner)
    .execute();
}

/** The blocks a feed sync imported. */
type ImportedRange = { start_date: string; end_date: string; note: string | null };

/** The digest of a feed's imported blocks, in a stable order (a feed listing the same events in another order is unchanged). */
function blocksDigest(propertyId: string, ranges: readonly ImportedRange[]): string {
  const rows = ranges.map((b) => JSON.stringify([b.start_date, b.end_date, b.note])).sort();
  return sha256Hex(JSON.stringify([propertyId, rows]));
}

/** What a result changes on the feed row, and whether serving processes must see it (a revision bump). */
type FeedUpdate = {
  set: Partial<
    Pick<TenantFeedTable, 'last_success_at' | 'last_error' | 'event_count' | 'failures' | 'blocks_digest' | 'published_success_at'>
  >;
  bump: boolean;
};
type FeedBefore = Pick<TenantFeedTable, 'last_error' | 'blocks_digest' | 'published_success_at'>;

/** Whose lease a result is written under: the worker (`owner`) and the feed it claimed. */
interface Lease {
  store: PlatformStore;
  owner: string;
  feed: ClaimedFeed;
}

/** What a fenced write did: nothing (the lease was lost), or the row updated and whether the revision was bumped. */
type FencedWrite = { lost: true } | { lost: false; bumped: boolean; nextDueAt: string };

/**
 * Where `syncFeed` writes one claimed feed's result, under the lease. Every result records the
 * attempt and schedules the next sync with the node's backoff (`nextSyncDelayMs`); a success
 * records its time, a failure its error. The tenant's revision (which every serving process
 * reloads on, and its offer cache is keyed on) is bumped only when what those processes read
 * changed, so an unchanged feed does not empty the tenant's offer cache every cycle:
 * - the imported blocks changed (their digest differs): they are replaced, in the same transaction;
 * - the calendar turned unsafe (the first failure in a row, Core VRP v0.1 §7 `calendar_stale`)
 *   or safe again (the first success after failures);
 * - half the tenant's calendar age has passed since the success serving processes hold: they
 *   judge staleness by the revision they loaded, so a later success is republished before that
 *   one would turn their calendar stale. Staleness itself needs no write: an offer is cached only
 *   until its freshness changes by time (`calendarFreshnessChangesAt`).
 * `lost` tells that the lease was no longer this worker's: nothing was written.
 */
export function leasedRecorder(
  store: PlatformStore,
  owner: string,
  f: ClaimedFeed,
  intervalMs: number,
  random?: () => number,
): FeedRecorder & { lost: boolean; bumped: boolean; nextDueAt: string | null } {
  const lease: Lease = { store, owner, feed: f };
  const republishAfterMs = (f.property.calendar_max_age_minutes * 60_000) / 2;
  const note = (w: FencedWrite) => {
    if (w.lost) rec.lost = true;
    else Object.assign(rec, { bumped: w.bumped, nextDueAt: w.nextDueAt });
  };
  const rec = {
    lost: false,
    bumped: false,
    nextDueAt: null as string | null,
    async recordFeedSuccess(propertyId: string, name: string, ranges: ImportedRange[], now: number) {
      const digest = blocksDigest(propertyId, ranges);
      const delayMs = nextSyncDelayMs(0, intervalMs, random);
      const written = await fenced(lease, name, now, delayMs, async (tx, before) => {
        const changed = before.blocks_digest !== digest;
        const bump =
          changed ||
          before.last_error !== null ||
          before.published_success_at === null ||
          now - Date.parse(before.published_success_at) >= republishAfterMs;
        if (changed) await replaceBlocks(tx, f.domain, { propertyId, name, ranges, now });
        const set = { last_success_at: iso(now), last_error: null, event_count: ranges.length, failures: 0, blocks_digest: digest };
        return { set: bump ? { ...set, published_success_at: iso(now) } : set, bump };
      });
      note(written);
    },
    async recordFeedFailure(name: string, error: string, now: number) {
      const delayMs = nextSyncDelayMs(f.failures + 1, intervalMs, random);
      const written = await fenced(lease, name, now, delayMs, async (_tx, before) => ({
        set: { last_error: error, failures: f.failures + 1 },
        // Only the first failure in a row changes what is served (the calendar turns unsafe); a repeated one does not.
        bump: before.last_error === null,
      }));
      note(written);
    },
  };
  return rec;
}

/** Replace the blocks a feed imported for a tenant with `ranges` (in chunks: a statement has a parameter cap). */
async function replaceBlocks(
  tx: Kysely<PlatformDatabase>,
  domain: string,
  r: { propertyId: string; name: string; ranges: readonly ImportedRange[]; now: number },
): Promise<void> {
  await tx.deleteFrom('platform_tenant_block').where('domain', '=', domain).where('feed_name', '=', r.name).execute();
  for (let i = 0; i < r.ranges.length; i += 500)
    await tx
      .insertInto('platform_tenant_block')
      .values(
        r.ranges.slice(i, i + 500).map((b) => ({
          id: randomBytes(9).toString('base64url'),
          domain,
          property_id: r.propertyId,
          start_date: b.start_date,
          end_date: b.end_date,
          kind: 'import' as const,
          feed_name: r.name,
          note: b.note,
          created_at: iso(r.now),
        })),
      )
      .execute();
}

/**
 * One result, fenced by the lease, in one transaction: the feed row as it was (read only while
 * this worker holds the lease), then `update` (its writes and what it sets), the row updated
 * (attempt time, next due time, lease released) and, when `update` says so, the revision bump.
 * A lost lease writes nothing.
 */
async function fenced(
  { store, owner, feed }: Lease,
  name: string,
  now: number,
  delayMs: number,
  update: (tx: Kysely<PlatformDatabase>, before: FeedBefore) => Promise<FeedUpdate>,
): Promise<FencedWrite> {
  const nextDueAt = iso(now + delayMs);
  return writeTransaction(store, async (tx) => {
    // Read under the write lock (the row locked on PostgreSQL, the database on SQLite): the lease cannot move before the update.
    let q = tx
      .selectFrom('platform_tenant_feed')
      .select(['last_error', 'blocks_digest', 'published_success_at'])
      .where('domain', '=', feed.domain)
      .where('name', '=', name)
      .where('lease_owner', '=', owner);
    if (store.target.kind === 'postgres') q = q.forUpdate();
    const before = await q.executeTakeFirst();
    if (!before) return { lost: true };
    const { set, bump: mustBump } = await update(tx, before);
    await tx
      .updateTable('platform_tenant_feed')
      .set({ ...set, last_attempt_at: iso(now), next_due_at: nextDueAt, lease_owner: null, lease_until: null })
      .where('domain', '=', feed.domain)
      .where('name', '=', name)
      .execute();
    if (mustBump) await bump(tx, feed.domain, now);
    return { lost: false, bumped: mustBump, nextDueAt };
  });
}

/** Seconds since the most overdue feed of an enabled tenant fell due (0 when none is): how far the workers lag behind. */
export async function syncLagSeconds(store: PlatformStore): Promise<number> {
  const now = store.clock.now();
  const row = await dueFeeds(store.db, iso(now))
    .select((eb) => eb.fn.min('f.next_due_at').as('oldest'))
    .executeTakeFirst();
  return row?.oldest ? Math.max(0, (now - Date.parse(row.oldest)) / 1000) : 0;
}
