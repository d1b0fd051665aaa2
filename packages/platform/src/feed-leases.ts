/**
 * Feed leases: how any number of sync workers, on any number of machines, share the tenants'
 * calendar feeds without fetching one twice at once. A worker claims due feeds by writing its
 * lease (`lease_owner`, `lease_until`) on them: on PostgreSQL the due rows are selected
 * `FOR UPDATE SKIP LOCKED` (two claimers never wait on or take the same row), on SQLite the claim
 * runs under `BEGIN IMMEDIATE` (the write lock is taken before the due rows are read). Every
 * result is written only while the lease is still the worker's (fencing), so a worker whose
 * lease expired and was taken over writes nothing. A killed worker's leases simply expire and
 * the feeds are due for any worker again.
 */
import { randomBytes } from 'node:crypto';
import { type FeedRecorder, nextSyncDelayMs, type PropertyDescription } from '@vrpkit/node';
import { type Kysely, sql, type Transaction } from 'kysely';
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
  property: Pick<PropertyDescription, 'property_id' | 'time_zone' | 'booking_horizon_days' | 'max_nights'>;
}

/** Run `fn` as one write transaction that holds the write lock from its first read (see the module comment). */
async function claimTransaction<T>(store: PlatformStore, fn: (db: Kysely<PlatformDatabase>) => Promise<T>): Promise<T> {
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
  const rows = await claimTransaction(store, async (db) => {
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

/**
 * Where `syncFeed` writes one claimed feed's result, under the lease: a success replaces the feed's
 * blocks, records the success and bumps the tenant's revision in one transaction (every serving
 * process sees it at its next request, and its offer cache, keyed on the revision, moves on); a
 * failure keeps the blocks, records the error (the tenant's calendar is unsafe, Core VRP v0.1 §7
 * `calendar_stale`) and bumps the revision too. Either schedules the next sync with the node's
 * backoff (`nextSyncDelayMs`). `lost` tells that the lease was no longer this worker's: nothing was written.
 */
export function leasedRecorder(
  store: PlatformStore,
  owner: string,
  f: ClaimedFeed,
  intervalMs: number,
  random?: () => number,
): FeedRecorder & { lost: boolean; nextDueAt: string | null } {
  const rec = {
    lost: false,
    nextDueAt: null as string | null,
    async recordFeedSuccess(
      propertyId: string,
      name: string,
      ranges: { start_date: string; end_date: string; note: string | null }[],
      now: number,
    ) {
      const set = { last_success_at: iso(now), last_error: null, event_count: ranges.length, failures: 0 };
      await fenced(name, now, set, nextSyncDelayMs(0, intervalMs, random), async (tx) => {
        await tx.deleteFrom('platform_tenant_block').where('domain', '=', f.domain).where('feed_name', '=', name).execute();
        for (let i = 0; i < ranges.length; i += 500)
          await tx
            .insertInto('platform_tenant_block')
            .values(
              ranges.slice(i, i + 500).map((b) => ({
                id: randomBytes(9).toString('base64url'),
                domain: f.domain,
                property_id: propertyId,
                start_date: b.start_date,
                end_date: b.end_date,
                kind: 'import' as const,
                feed_name: name,
                note: b.note,
                created_at: iso(now),
              })),
            )
            .execute();
      });
    },
    async recordFeedFailure(name: string, error: string, now: number) {
      const set = { last_error: error, failures: f.failures + 1 };
      await fenced(name, now, set, nextSyncDelayMs(f.failures + 1, intervalMs, random), async () => {});
    },
  };
  /**
   * One result, fenced by the lease: the feed row is updated (attempt time, next due time, lease
   * released) only while this worker still holds it; then `more` and the revision bump, all in one
   * transaction. A lost lease writes nothing.
   */
  async function fenced(
    name: string,
    now: number,
    set: Partial<Pick<TenantFeedTable, 'last_success_at' | 'last_error' | 'event_count' | 'failures'>>,
    delayMs: number,
    more: (tx: Transaction<PlatformDatabase>) => Promise<void>,
  ): Promise<void> {
    const nextDueAt = iso(now + delayMs);
    await store.db.transaction().execute(async (tx) => {
      const r = await tx
        .updateTable('platform_tenant_feed')
        .set({ ...set, last_attempt_at: iso(now), next_due_at: nextDueAt, lease_owner: null, lease_until: null })
        .where('domain', '=', f.domain)
        .where('name', '=', name)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) {
        rec.lost = true;
        return;
      }
      await more(tx);
      await bump(tx, f.domain, now);
    });
    if (!rec.lost) rec.nextDueAt = nextDueAt;
  }
  return rec;
}

/** Seconds since the most overdue feed of an enabled tenant fell due (0 when none is): how far the workers lag behind. */
export async function syncLagSeconds(store: PlatformStore): Promise<number> {
  const now = store.clock.now();
  const row = await dueFeeds(store.db, iso(now))
    .select((eb) => eb.fn.min('f.next_due_at').as('oldest'))
    .executeTakeFirst();
  return row?.oldest ? Math.max(0, (now - Date.parse(row.oldest)) / 1000) : 0;
}
