import { randomBytes } from 'node:crypto';
import { type ExpressionBuilder, type Kysely, sql, type Transaction } from 'kysely';
import { NodeError } from '../errors.js';
import type { PropertyDescription } from '../property.js';
import { openNodeDatabase, openRevisionReader, type RevisionReader, type StoreTarget } from './db.js';
import type { BlockedRangeTable, BlockKind, CalendarFeedTable, KeyStatus, NodeDatabase, SigningKeyTable } from './schema.js';

export type BlockedRange = BlockedRangeTable;
export type CalendarFeed = Omit<CalendarFeedTable, 'event_count'> & { event_count: number };
export type SigningKeyRecord = SigningKeyTable;

export interface NodeInfo {
  canonical_domain: string;
  node_id: string;
  created_at: string;
}

/** A new blocked range, `[start_date, end_date)` in nights. */
export interface NewBlock {
  start_date: string;
  end_date: string;
  kind: BlockKind;
  feed_name?: string | null;
  note?: string | null;
}

export interface StoreSnapshot {
  revision: number;
  info: NodeInfo;
  property: PropertyDescription;
  feeds: CalendarFeed[];
  blocks: BlockedRange[];
  keys: SigningKeyRecord[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The node's store: one query layer (Kysely) over SQLite or PostgreSQL. Every read the
 * offer path makes is a query here, so each offer is computed from the store's current
 * state (nothing that could go stale is cached).
 */
export class NodeStore {
  private cached: StoreSnapshot | undefined;

  private constructor(
    readonly db: Kysely<NodeDatabase>,
    private readonly revisionReader: RevisionReader,
  ) {}

  static async open(target: StoreTarget): Promise<NodeStore> {
    const db = await openNodeDatabase(target);
    try {
      return new NodeStore(db, openRevisionReader(target, db));
    } catch (e) {
      await db.destroy();
      throw e;
    }
  }

  /** Run `fn` in a transaction that also bumps the store revision (every write goes through here). */
  private write<T>(fn: (tx: Transaction<NodeDatabase>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (tx) => {
      const out = await fn(tx);
      await tx.updateTable('store_revision').set({ revision: sql<number>`revision + 1` }).where('id', '=', 1).execute();
      return out;
    });
  }

  async revision(): Promise<number> {
    return this.revisionReader.read();
  }

  /**
   * The snapshot `snapshot()` would return, when that is known without waiting: the revision
   * can be read synchronously (SQLite) and has not moved since the last snapshot. Otherwise
   * null, and the caller takes `snapshot()`.
   */
  snapshotNow(): StoreSnapshot | null {
    const readNow = this.revisionReader.readNow;
    if (!readNow || !this.cached) return null;
    return readNow() === this.cached.revision ? this.cached : null;
  }

  /**
   * Everything the offer path reads, as of the store's current revision. One revision read per
   * call; the rest is reloaded whenever the revision moved (a write by this or any other
   * process), so a snapshot is never older than the last committed write. The revision is read
   * before the data: a write racing the reload only causes one more reload next time.
   */
  async snapshot(): Promise<StoreSnapshot> {
    const revision = await this.revision();
    if (this.cached?.revision === revision) return this.cached;
    const [info, property, feeds, blocks, keys] = await Promise.all([
      this.nodeInfo(),
      this.property(),
      this.feeds(),
      this.listBlocks(),
      this.keys(),
    ]);
    this.cached = { revision, info, property, feeds, blocks, keys };
    return this.cached;
  }

  close(): Promise<void> {
    this.revisionReader.close();
    return this.db.destroy();
  }

  // ── node ──────────────────────────────────────────────────────────────────────────────

  async nodeInfo(): Promise<NodeInfo> {
    const row = await this.db
      .selectFrom('node_info')
      .select(['canonical_domain', 'node_id', 'created_at'])
      .where('id', '=', 1)
      .executeTakeFirst();
    if (!row) throw new NodeError('node_not_initialized', 'the store holds no node; run `vrp node init` first');
    return row;
  }

  async setNodeInfo(info: { canonical_domain: string; node_id: string }, now: number): Promise<void> {
    await this.write((tx) =>
      tx
        .insertInto('node_info')
        .values({ id: 1, ...info, created_at: iso(now) })
        .onConflict((oc) => oc.column('id').doUpdateSet(info))
        .execute(),
    );
  }

  // ── property, rates, fees ─────────────────────────────────────────────────────────────

  /** Replace the property with a validated description (atomically: facts, rate plan and fees). */
  async putProperty(p: PropertyDescription, now: number): Promise<void> {
    const { rates, fees, ...facts } = p;
    const document = JSON.stringify({ ...facts, weekend_nights: rates.weekend_nights });
    await this.write(async (tx) => {
      await tx.deleteFrom('rate_plan').execute();
      await tx.deleteFrom('stay_fee').execute();
      await tx.deleteFrom('property').execute();
      await tx
        .insertInto('property')
        .values({ property_id: p.property_id, document, updated_at: iso(now) })
        .execute();
      await tx
        .insertInto('rate_plan')
        .values([
          {
            property_id: p.property_id,
            seq: 0,
            name: 'Standard',
            season_type: 'standard',
            start_date: null,
            end_date: null,
            nightly_rate: rates.nightly,
            weekend_rate: rates.weekend ?? rates.nightly,
          },
          ...rates.seasons.map((s, i) => ({
            property_id: p.property_id,
            seq: i + 1,
            name: s.name,
            season_type: s.type,
            start_date: s.start,
            end_date: s.end,
            nightly_rate: s.nightly,
            weekend_rate: s.weekend ?? s.nightly,
          })),
        ])
        .execute();
      if (fees.length > 0) {
        await tx
          .insertInto('stay_fee')
          .values(fees.map((f, i) => ({ property_id: p.property_id, seq: i, code: f.code, label: f.label, amount: f.amount })))
          .execute();
      }
    });
  }

  /** The property as a description again (facts + rate plan + fees), read from the store. */
  async property(): Promise<PropertyDescription> {
    const [row, plans, fees] = await Promise.all([
      this.db.selectFrom('property').select(['document']).executeTakeFirst(),
      this.db.selectFrom('rate_plan').selectAll().orderBy('seq').execute(),
      this.db.selectFrom('stay_fee').selectAll().orderBy('seq').execute(),
    ]);
    if (!row) throw new NodeError('node_not_initialized', 'the store holds no property; run `vrp node init` first');
    const { weekend_nights, ...facts } = JSON.parse(row.document) as Omit<PropertyDescription, 'rates' | 'fees'> & {
      weekend_nights: PropertyDescription['rates']['weekend_nights'];
    };
    const base = plans.find((r) => r.seq === 0);
    if (!base) throw new NodeError('store_corrupt', 'the rate plan has no base rate');
    return {
      ...facts,
      rates: {
        nightly: base.nightly_rate,
        weekend: base.weekend_rate,
        weekend_nights,
        seasons: plans
          .filter((r) => r.seq > 0)
          .map((r) => ({
            name: r.name,
            type: r.season_type,
            start: r.start_date!,
            end: r.end_date!,
            nightly: r.nightly_rate,
            weekend: r.weekend_rate,
          })),
      },
      fees: fees.map((f) => ({ code: f.code, label: f.label, amount: f.amount })),
    };
  }

  // ── availability ──────────────────────────────────────────────────────────────────────

  async addBlock(propertyId: string, b: NewBlock, now: number): Promise<BlockedRange> {
    const row: BlockedRange = {
      id: randomBytes(9).toString('base64url'),
      property_id: propertyId,
      start_date: b.start_date,
      end_date: b.end_date,
      kind: b.kind,
      feed_name: b.feed_name ?? null,
      note: b.note ?? null,
      created_at: iso(now),
    };
    await this.write((tx) => tx.insertInto('blocked_range').values(row).execute());
    return row;
  }

  async removeBlock(id: string): Promise<boolean> {
    const r = await this.write((tx) =>
      tx.deleteFrom('blocked_range').where('id', '=', id).where('kind', '!=', 'import').executeTakeFirst(),
    );
    return Number(r.numDeletedRows) > 0;
  }

  listBlocks(): Promise<BlockedRange[]> {
    return this.db.selectFrom('blocked_range').selectAll().orderBy('start_date').execute();
  }

  // ── calendar feeds (iCal imports) ─────────────────────────────────────────────────────

  async addFeed(feed: { name: string; url: string | null; file: string | null }, now: number): Promise<void> {
    await this.write(async (tx) => {
      const exists = await tx.selectFrom('calendar_feed').select('name').where('name', '=', feed.name).executeTakeFirst();
      if (exists) throw new NodeError('feed_exists', `a calendar feed named ${feed.name} already exists`);
      await tx
        .insertInto('calendar_feed')
        .values({ ...feed, created_at: iso(now), event_count: 0 })
        .execute();
    });
  }

  async removeFeed(name: string): Promise<boolean> {
    return this.write(async (tx) => {
      await tx.deleteFrom('blocked_range').where('feed_name', '=', name).execute();
      const r = await tx.deleteFrom('calendar_feed').where('name', '=', name).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    });
  }

  async feeds(): Promise<CalendarFeed[]> {
    const rows = await this.db.selectFrom('calendar_feed').selectAll().orderBy('name').execute();
    return rows.map((r) => ({ ...r, event_count: Number(r.event_count) }));
  }

  /** A successful sync replaces the feed's imported ranges atomically and records the success. */
  async recordFeedSuccess(
    propertyId: string,
    name: string,
    ranges: { start_date: string; end_date: string; note: string | null }[],
    now: number,
  ) {
    await this.write(async (tx) => {
      await tx.deleteFrom('blocked_range').where('feed_name', '=', name).execute();
      if (ranges.length > 0) {
        await tx
          .insertInto('blocked_range')
          .values(
            ranges.map((r) => ({
              id: randomBytes(9).toString('base64url'),
              property_id: propertyId,
              start_date: r.start_date,
              end_date: r.end_date,
              kind: 'import' as const,
              feed_name: name,
              note: r.note,
              created_at: iso(now),
            })),
          )
          .execute();
      }
      await tx
        .updateTable('calendar_feed')
        .set({ last_attempt_at: iso(now), last_success_at: iso(now), last_error: null, event_count: ranges.length })
        .where('name', '=', name)
        .execute();
    });
  }

  /** A failed sync keeps the previous ranges and records the failure (the feed reports as an error source). */
  async recordFeedFailure(name: string, error: string, now: number): Promise<void> {
    await this.write((tx) =>
      tx
        .updateTable('calendar_feed')
        .set({ last_attempt_at: iso(now), last_error: error })
        .where('name', '=', name)
        .execute(),
    );
  }

  // ── signing keys (public halves and lifecycle; private keys are files) ────────────────

  keys(): Promise<SigningKeyRecord[]> {
    return this.db.selectFrom('signing_key').selectAll().orderBy('created_at').orderBy('kid').execute();
  }

  kidsWithPrefix(prefix: string): Promise<{ kid: string }[]> {
    return this.db.selectFrom('signing_key').select('kid').where('kid', 'like', `${prefix}%`).execute();
  }

  /**
   * Make `next` the active key from `activatesAt` on (by default at once; later when it is
   * published ahead). Every key still signing at `activatesAt` (the active key, or a key
   * retiring later than that) is retired then, published until `retainUntil` (rotation is
   * additive, Core VRP v0.1 §3.1). One transaction, so at any instant exactly one key signs.
   */
  async activateKey(next: { kid: string; public_jwk: string }, retainUntil: number, now: number, activatesAt = now): Promise<string[]> {
    return this.write(async (tx) => {
      const signingAt = (w: ExpressionBuilder<NodeDatabase, 'signing_key'>) =>
        w.or([w('status', '=', 'active'), w.and([w('status', '=', 'retired'), w('retired_at', '>', iso(activatesAt))])]);
      const previous = await tx.selectFrom('signing_key').select('kid').where(signingAt).execute();
      await tx
        .updateTable('signing_key')
        .set({ status: 'retired', retired_at: iso(activatesAt), retain_until: iso(retainUntil) })
        .where(signingAt)
        .execute();
      await tx
        .insertInto('signing_key')
        .values({
          ...next,
          status: 'active',
          created_at: iso(now),
          activates_at: iso(activatesAt),
          retired_at: null,
          retain_until: null,
          revoked_at: null,
        })
        .execute();
      return previous.map((r) => r.kid);
    });
  }

  async setKeyStatus(kid: string, status: KeyStatus, now: number): Promise<void> {
    await this.write((tx) =>
      tx
        .updateTable('signing_key')
        .set(status === 'revoked' ? { status, revoked_at: iso(now) } : { status })
        .where('kid', '=', kid)
        .execute(),
    );
  }
}
