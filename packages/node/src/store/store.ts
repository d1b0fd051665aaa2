import { randomBytes } from 'node:crypto';
import { type ExpressionBuilder, type Kysely, sql, type Transaction } from 'kysely';
import {
  type BookingEvent,
  type BookingOutbox,
  type BookingRequestRecord,
  type BookingStore,
  type HoldOutcome,
  type HoldSession,
  holdRange,
  type NewHold,
} from '../booking/ports.js';
import { NodeError } from '../errors.js';
import type { PropertyDescription } from '../property.js';
import {
  type NewUcpSession,
  newSessionRow,
  type UcpCodeGuard,
  type UcpIdempotencyRecord,
  type UcpIdempotencyStore,
  type UcpSessionChange,
  type UcpSessionReader,
  type UcpSessionRecord,
  type UcpSessionStore,
  type UcpSettle,
} from '../ucp/ports.js';
import { openNodeDatabase, openRevisionReader, type RevisionReader, type StoreTarget } from './db.js';
import { idempotencyRows } from './idempotency-rows.js';
import type { BlockedRangeTable, BlockKind, BookingStatus, CalendarFeedTable, KeyStatus, NodeDatabase, SigningKeyTable } from './schema.js';

export type BlockedRange = BlockedRangeTable;
export type CalendarFeed = Omit<CalendarFeedTable, 'event_count'> & { event_count: number };
export type SigningKeyRecord = SigningKeyTable;
export type { BookingEvent, BookingRequestRecord, HoldOutcome, NewHold };

/** Rolls a write transaction back without it being a failure: the transaction wrote nothing worth keeping. */
class Unchanged<T> {
  constructor(readonly value: T) {}
}

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
  /** The earliest `hold_expires_at` among pending holds: from then on the snapshot would show held dates that are free. */
  nextHoldExpiry: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** `UcpSessionStore.updateUcpSession`'s arguments. */
type SessionUpdate = [id: string, from: readonly UcpSessionRecord['status'][], change: UcpSessionChange, now: number, guard?: UcpCodeGuard];

/** A session's compare-and-set (`UcpSessionStore.updateUcpSession`) in `db`: alone, or in a hold's transaction. */
function updateSession(db: Kysely<NodeDatabase>, ...[id, from, change, now, guard]: SessionUpdate): Promise<UcpSessionRecord | undefined> {
  let q = db
    .updateTable('ucp_session')
    .set({ ...change, updated_at: iso(now) })
    .where('session_id', '=', id)
    .where('status', 'in', from);
  if (guard?.code_sha256) q = q.where('code_sha256', '=', guard.code_sha256).where('code_attempts', '=', guard.code_attempts);
  return q.returningAll().executeTakeFirst();
}

/**
 * The node's store: one query layer (Kysely) over SQLite or PostgreSQL. Every read the
 * offer path makes is a query here, so each offer is computed from the store's current
 * state (nothing that could go stale is cached).
 */
export class NodeStore implements BookingStore<StoreSnapshot>, BookingOutbox, UcpSessionStore, UcpIdempotencyStore, UcpSessionReader {
  private cached: StoreSnapshot | undefined;
  private reloading: { revision: number; promise: Promise<StoreSnapshot> } | undefined;

  private constructor(
    readonly db: Kysely<NodeDatabase>,
    private readonly revisionReader: RevisionReader,
  ) {
    this.idempotency = idempotencyRows(db, 'ucp_idempotency');
  }

  static async open(target: StoreTarget): Promise<NodeStore> {
    const db = await openNodeDatabase(target);
    try {
      return new NodeStore(db, openRevisionReader(target, db));
    } catch (e) {
      await db.destroy();
      throw e;
    }
  }

  /**
   * Run `fn` in a transaction that also bumps the store revision (every write goes through here).
   * `fn` may return `new Unchanged(v)`: the transaction is rolled back (nothing written, the
   * revision stays) and `v` is returned.
   */
  private async write<T>(fn: (tx: Transaction<NodeDatabase>) => Promise<T | Unchanged<T>>): Promise<T> {
    try {
      const out = await this.db.transaction().execute(async (tx) => {
        const written = await fn(tx);
        if (written instanceof Unchanged) throw written;
        await tx.updateTable('store_revision').set({ revision: sql<number>`revision + 1` }).where('id', '=', 1).execute();
        return written;
      });
      // This process's own readers see the write at once (see `REVISION_RECHECK_MS` for other processes').
      this.revisionReader.committed();
      return out;
    } catch (e) {
      if (e instanceof Unchanged) return e.value as T;
      throw e;
    }
  }

  /**
   * Serialise this transaction with every other write, in every process: a no-op update of the
   * revision row takes its row lock on PostgreSQL and the database write lock on SQLite, held to
   * commit. Every write bumps that row, so once this returns nothing else can commit, and what
   * the transaction reads next is the latest committed state (READ COMMITTED reads per statement).
   */
  private async lockWrites(tx: Transaction<NodeDatabase>): Promise<number> {
    await tx.updateTable('store_revision').set({ revision: sql<number>`revision` }).where('id', '=', 1).execute();
    const row = await tx.selectFrom('store_revision').select('revision').where('id', '=', 1).executeTakeFirstOrThrow();
    return Number(row.revision);
  }

  async revision(): Promise<number> {
    return this.revisionReader.read();
  }

  /**
   * The snapshot `snapshot()` would return, when that is known without waiting: the revision
   * can be read synchronously (SQLite) and has not moved since the last snapshot. Otherwise
   * null, and the caller takes `snapshot()`. A write by another process may take up to
   * `REVISION_RECHECK_MS` to show here (`RevisionReader.readNow`); one by this process shows at once.
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
  async snapshot(now?: number): Promise<StoreSnapshot> {
    const revision = await this.revision();
    let snap = this.cached;
    if (snap?.revision !== revision) {
      // Requests that find the same new revision share one reload (after a write, every request in flight would).
      if (this.reloading?.revision !== revision) {
        const promise: Promise<StoreSnapshot> = this.load(this.db, revision).finally(() => {
          if (this.reloading?.promise === promise) this.reloading = undefined;
        });
        this.reloading = { revision, promise };
      }
      snap = await this.reloading.promise;
      if (!this.cached || this.cached.revision < snap.revision) this.cached = snap;
    }
    if (now === undefined || snap.nextHoldExpiry === null || Date.parse(snap.nextHoldExpiry) > now) return snap;
    // A hold that has expired frees its dates as soon as anyone reads them: expire it (a write,
    // which bumps the revision) and read once more.
    await this.expireHolds(now);
    return this.snapshot();
  }

  /** Everything the offer path reads, through `db` (the pool, or a transaction), labelled with `revision`. */
  private async load(db: Kysely<NodeDatabase>, revision: number): Promise<StoreSnapshot> {
    const [info, property, feeds, blocks, keys, nextHoldExpiry] = await Promise.all([
      this.nodeInfo(db),
      this.property(db),
      this.feeds(db),
      this.listBlocks(db),
      this.keys(db),
      this.nextHoldExpiry(db),
    ]);
    return { revision, info, property, feeds, blocks, keys, nextHoldExpiry };
  }

  close(): Promise<void> {
    this.revisionReader.close();
    return this.db.destroy();
  }

  // ── node ──────────────────────────────────────────────────────────────────────────────

  async nodeInfo(db: Kysely<NodeDatabase> = this.db): Promise<NodeInfo> {
    const row = await db
      .selectFrom('node_info')
      .select(['canonical_domain', 'node_id', 'created_at'])
      .where('id', '=', 1)
      .executeTakeFirst();
    if (!row) throw new NodeError('node_not_initialized', { what: 'the store holds no node' });
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
  async property(db: Kysely<NodeDatabase> = this.db): Promise<PropertyDescription> {
    const [row, plans, fees] = await Promise.all([
      db.selectFrom('property').select(['document']).executeTakeFirst(),
      db.selectFrom('rate_plan').selectAll().orderBy('seq').execute(),
      db.selectFrom('stay_fee').selectAll().orderBy('seq').execute(),
    ]);
    if (!row) throw new NodeError('node_not_initialized', { what: 'the store holds no property' });
    const { weekend_nights, ...facts } = JSON.parse(row.document) as Omit<PropertyDescription, 'rates' | 'fees'> & {
      weekend_nights: PropertyDescription['rates']['weekend_nights'];
    };
    const base = plans.find((r) => r.seq === 0);
    if (!base) throw new NodeError('store_corrupt', { problem: 'the rate plan has no base rate' });
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
    // A booking request's hold is freed by declining it (`vrp node bookings decline`), never by removing its range.
    const r = await this.write((tx) =>
      tx
        .deleteFrom('blocked_range')
        .where('id', '=', id)
        .where('kind', '!=', 'import')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('booking_request').select('booking_id').whereRef('booking_request.booking_id', '=', 'blocked_range.id'))),
        )
        .executeTakeFirst(),
    );
    return Number(r.numDeletedRows) > 0;
  }

  listBlocks(db: Kysely<NodeDatabase> = this.db): Promise<BlockedRange[]> {
    return db.selectFrom('blocked_range').selectAll().orderBy('start_date').execute();
  }

  // ── booking requests (the vrpkit booking-request extension) ───────────────────────────

  private async nextHoldExpiry(db: Kysely<NodeDatabase> = this.db): Promise<string | null> {
    const row = await db
      .selectFrom('booking_request')
      .select((eb) => eb.fn.min('hold_expires_at').as('at'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return (row?.at as string | null | undefined) ?? null;
  }

  /**
   * Create a hold in one transaction that holds the write lock: if the idempotency key is
   * already used, that booking is returned; otherwise `decide` re-quotes the stay from the store
   * state read inside the transaction (the latest committed state, which nothing can change
   * before commit) and either refuses (nothing written) or names the hold. The booking row, its
   * `booking` blocked range and its first event are inserted and the revision bumped, so every
   * offer cache keyed by the revision stops serving the stay. With `session`, the session takes the
   * hold's id in the same transaction, or (no longer in `session.from`) nothing is written.
   */
  async createHold<R>(
    idempotencyKey: string,
    now: number,
    decide: (state: StoreSnapshot) => { hold: NewHold } | { refuse: R },
    session?: HoldSession,
  ): Promise<HoldOutcome<R>> {
    return this.write<HoldOutcome<R>>(async (tx) => {
      const revision = await this.lockWrites(tx);
      const existing = await tx.selectFrom('booking_request').selectAll().where('idempotency_key', '=', idempotencyKey).executeTakeFirst();
      if (existing) return new Unchanged({ kind: 'existing', booking: existing });
      // The snapshot this process last loaded is the committed state when the revision still matches.
      const state = this.cached?.revision === revision ? this.cached : await this.load(tx, revision);
      const decision = decide(state);
      if ('refuse' in decision) return new Unchanged({ kind: 'refused', refusal: decision.refuse });
      const booking: BookingRequestRecord = {
        ...decision.hold,
        status: 'pending',
        created_at: iso(now),
        updated_at: iso(now),
        decision_reason: null,
      };
      // The session's move with its hold, both or neither (booking/ports.ts `HoldSession`).
      const change = { ...session?.change, booking_id: booking.booking_id };
      if (session && !(await updateSession(tx, session.id, session.from, change, now))) return new Unchanged({ kind: 'session_moved' });
      await tx.insertInto('booking_request').values(booking).execute();
      await tx.insertInto('blocked_range').values(holdRange(booking, now)).execute();
      await this.addBookingEvent(tx, booking.booking_id, 'pending', now);
      return { kind: 'created', booking };
    });
  }

  /** An outbox event; `mailed` false only for a decision of the host's, which the upkeep mails (the rest need no notice). */
  private async addBookingEvent(
    tx: Transaction<NodeDatabase>,
    bookingId: string,
    status: BookingStatus,
    now: number,
    mailed = true,
  ): Promise<void> {
    await tx
      .insertInto('booking_event')
      .values({
        event_id: randomBytes(12).toString('base64url'),
        booking_id: bookingId,
        status,
        created_at: iso(now),
        delivered_at: null,
        attempts: 0,
        mailed_at: mailed ? iso(now) : null,
        mail_attempts: 0,
      })
      .execute();
  }

  bookingByIdempotencyKey(key: string): Promise<BookingRequestRecord | undefined> {
    return this.db.selectFrom('booking_request').selectAll().where('idempotency_key', '=', key).executeTakeFirst();
  }

  bookingRequest(id: string): Promise<BookingRequestRecord | undefined> {
    return this.db.selectFrom('booking_request').selectAll().where('booking_id', '=', id).executeTakeFirst();
  }

  bookingRequests(status?: BookingStatus): Promise<BookingRequestRecord[]> {
    let q = this.db.selectFrom('booking_request').selectAll();
    if (status) q = q.where('status', '=', status);
    return q.orderBy('created_at').orderBy('booking_id').execute();
  }

  /**
   * A decision on a pending hold: `confirmed` keeps the dates blocked (the range becomes a plain
   * booking), `declined` frees them. With `host` it is the host's (`vrp node bookings`, the
   * console): its reason is kept and its event waits to be mailed to the guest; without, a
   * session's own release (canceled by its platform). Returns the updated booking, or the
   * unchanged one when it was no longer pending (nothing written), or undefined when unknown.
   */
  async decideHold(
    id: string,
    status: 'confirmed' | 'declined',
    now: number,
    host?: { reason: string | null },
  ): Promise<{ decided: boolean; booking: BookingRequestRecord } | undefined> {
    return this.write<{ decided: boolean; booking: BookingRequestRecord } | undefined>(async (tx) => {
      await this.lockWrites(tx);
      const row = await tx.selectFrom('booking_request').selectAll().where('booking_id', '=', id).executeTakeFirst();
      if (!row) return new Unchanged(undefined);
      if (row.status !== 'pending' || Date.parse(row.hold_expires_at) <= now) return new Unchanged({ decided: false, booking: row });
      const decision_reason = host?.reason ?? null;
      await tx
        .updateTable('booking_request')
        .set({ status, updated_at: iso(now), decision_reason })
        .where('booking_id', '=', id)
        .execute();
      if (status === 'declined') await tx.deleteFrom('blocked_range').where('id', '=', id).execute();
      else
        await tx
          .updateTable('blocked_range')
          .set({ note: `booking request ${id} (confirmed)` })
          .where('id', '=', id)
          .execute();
      await this.addBookingEvent(tx, id, status, now, host === undefined);
      return { decided: true, booking: { ...row, status, updated_at: iso(now), decision_reason } };
    });
  }

  // UCP booking sessions (ucp/ports.ts). A session blocks no night, so its writes do not move the
  // store revision (no signed-offer cache depends on them); each is one statement.

  async insertUcpSession(s: NewUcpSession, now: number, settle?: UcpSettle): Promise<UcpSessionRecord> {
    const row = newSessionRow(s, now);
    if (!settle) {
      await this.db.insertInto('ucp_session').values(row).execute();
      return row;
    }
    // The session and its Idempotency-Key's answer, both or neither (ucp/idempotency.ts).
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('ucp_session').values(row).execute();
      await idempotencyRows(tx, 'ucp_idempotency').settleUcpIdempotencyKey(settle.id, settle);
    });
    return row;
  }

  ucpSession(id: string): Promise<UcpSessionRecord | undefined> {
    return this.db.selectFrom('ucp_session').selectAll().where('session_id', '=', id).executeTakeFirst();
  }

  /** Compare-and-set on the status: of two racing transitions on one session exactly one matches. */
  updateUcpSession(...a: SessionUpdate): Promise<UcpSessionRecord | undefined> {
    return updateSession(this.db, ...a);
  }

  // UCP Idempotency-Keys (ucp/ports.ts, idempotency.ts): the rows idempotency-rows.ts keeps, shared with a platform's tenants.

  private readonly idempotency: UcpIdempotencyStore;

  claimUcpIdempotencyKey(
    id: string,
    requestSha256: string,
    now: number,
    expiresAt: number,
    staleBefore: number,
  ): Promise<UcpIdempotencyRecord | undefined> {
    return this.idempotency.claimUcpIdempotencyKey(id, requestSha256, now, expiresAt, staleBefore);
  }

  settleUcpIdempotencyKey(id: string, answer: { status: number; json: string }): Promise<void> {
    return this.idempotency.settleUcpIdempotencyKey(id, answer);
  }

  releaseUcpIdempotencyKey(id: string): Promise<void> {
    return this.idempotency.releaseUcpIdempotencyKey(id);
  }

  ucpSessions(status?: UcpSessionRecord['status']): Promise<Omit<UcpSessionRecord, 'code_sha256'>[]> {
    let q = this.db
      .selectFrom('ucp_session')
      .select([
        'session_id',
        'status',
        'offer_jws',
        'offer_jws_sha256',
        'property_id',
        'check_in',
        'check_out',
        'guests',
        'currency',
        'total',
        'buyer_email',
        'buyer_name',
        'party_json',
        'code_expires_at',
        'code_attempts',
        'booking_id',
        'created_at',
        'updated_at',
        'expires_at',
        'cancel_reason',
      ]);
    if (status) q = q.where('status', '=', status);
    return q.orderBy('created_at').orderBy('session_id').execute();
  }

  /** Expire every pending hold whose `hold_expires_at` has passed and free its dates; the ids expired (none: nothing written). */
  async expireHolds(now: number): Promise<string[]> {
    return this.write(async (tx) => {
      await this.lockWrites(tx);
      const due = await tx
        .selectFrom('booking_request')
        .select('booking_id')
        .where('status', '=', 'pending')
        .where('hold_expires_at', '<=', iso(now))
        .execute();
      const ids = due.map((r) => r.booking_id);
      if (ids.length === 0) return new Unchanged(ids);
      await tx
        .updateTable('booking_request')
        .set({ status: 'expired', updated_at: iso(now) })
        .where('booking_id', 'in', ids)
        .execute();
      await tx.deleteFrom('blocked_range').where('id', 'in', ids).execute();
      for (const id of ids) await this.addBookingEvent(tx, id, 'expired', now);
      return ids;
    });
  }

  /** Booking events not yet delivered to the webhook, oldest first. */
  undeliveredBookingEvents(limit: number): Promise<BookingEvent[]> {
    return this.outboxEvents(limit);
  }

  unmailedBookingEvents(since: number, maxAttempts: number, limit: number): Promise<BookingEvent[]> {
    return this.outboxEvents(limit, { since, maxAttempts });
  }

  /** Outbox events not delivered to the webhook, or (with `mail`) not mailed, oldest first. */
  private async outboxEvents(limit: number, mail?: { since: number; maxAttempts: number }): Promise<BookingEvent[]> {
    let q = this.db.selectFrom('booking_event').selectAll();
    q = mail
      ? q.where('mailed_at', 'is', null).where('mail_attempts', '<', mail.maxAttempts).where('created_at', '>=', iso(mail.since))
      : q.where('delivered_at', 'is', null);
    const rows = await q.orderBy('created_at').orderBy('event_id').limit(limit).execute();
    return rows.map((r) => ({ ...r, attempts: Number(r.attempts), mail_attempts: Number(r.mail_attempts) }));
  }

  async eraseGuestData(before: string): Promise<{ bookings: number; sessions: number }> {
    // Not a write of offer-relevant state: no revision bump. `guest_email <> ''` skips rows already erased.
    const bookings = await this.db
      .updateTable('booking_request')
      .set({ guest_name: '', guest_email: '', guest_phone: null, decision_reason: null })
      .where('check_out', '<', before)
      .where('guest_email', '<>', '')
      .executeTakeFirst();
    const sessions = await this.db
      .updateTable('ucp_session')
      .set({ buyer_email: null, buyer_name: null, party_json: null, cancel_reason: null })
      .where('check_out', '<', before)
      .where((eb) => eb.or([eb('buyer_email', 'is not', null), eb('party_json', 'is not', null)]))
      .executeTakeFirst();
    return { bookings: Number(bookings.numUpdatedRows), sessions: Number(sessions.numUpdatedRows) };
  }

  /** Mail bookkeeping, like `recordBookingEventAttempt`: the notice sent, or a failed try. */
  async recordBookingEventMail(eventId: string, sent: boolean, now: number): Promise<void> {
    await this.db
      .updateTable('booking_event')
      .set((eb) => ({ mail_attempts: eb('mail_attempts', '+', 1), ...(sent ? { mailed_at: iso(now) } : {}) }))
      .where('event_id', '=', eventId)
      .execute();
  }

  /** Outbox bookkeeping (not an offer-relevant write, so the revision stays): a delivery or a failed attempt. */
  async recordBookingEventAttempt(eventId: string, delivered: boolean, now: number): Promise<void> {
    await this.db
      .updateTable('booking_event')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), ...(delivered ? { delivered_at: iso(now) } : {}) }))
      .where('event_id', '=', eventId)
      .execute();
  }

  // ── calendar feeds (iCal imports) ─────────────────────────────────────────────────────

  async addFeed(feed: { name: string; url: string | null; file: string | null }, now: number): Promise<void> {
    await this.write(async (tx) => {
      const exists = await tx.selectFrom('calendar_feed').select('name').where('name', '=', feed.name).executeTakeFirst();
      if (exists) throw new NodeError('feed_exists', { name: feed.name });
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

  async feeds(db: Kysely<NodeDatabase> = this.db): Promise<CalendarFeed[]> {
    const rows = await db.selectFrom('calendar_feed').selectAll().orderBy('name').execute();
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

  keys(db: Kysely<NodeDatabase> = this.db): Promise<SigningKeyRecord[]> {
    return db.selectFrom('signing_key').selectAll().orderBy('created_at').orderBy('kid').execute();
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
