/**
 * A tenant's booking rows behind the node's ports (issue 34 item 1): the UCP booking sessions
 * (`UcpSessionStore`) and the holds its guests' confirmations make through the node's booking desk
 * (`BookingStore`, `UcpHolds`), kept in the platform's store with the tenant's domain. Every
 * statement names the tenant's domain, so a session or hold of one tenant is never read or changed
 * through another's Host. A hold is its `platform_tenant_booking` row and a `booking` block of the
 * tenant's calendar (the hold's id), written in one transaction that also bumps the tenant's
 * revision: every serving process reloads the tenant, and no offer of any process shows the nights
 * free (this process at once: `onWrite`; the others at the trigger's notification, tenant-watch.ts).
 * A session blocks no night: its writes bump nothing, as on a node.
 */
import {
  type BookingRequestRecord,
  type BookingStore,
  cancelSessionOfDeclinedHold,
  declineReason,
  type HoldOutcome,
  type HoldSession,
  holdRange,
  idempotencyRows,
  type NewHold,
  type NewUcpSession,
  NodeError,
  newSessionRow,
  type StoreSnapshot,
  type UcpHolds,
  type UcpIdempotencyRecord,
  type UcpIdempotencyStore,
  type UcpSessionChange,
  type UcpSessionRecord,
  type UcpSessionStore,
  type UcpSettle,
} from '@vrpkit/node';
import { type Kysely, sql } from 'kysely';
import type { PlatformDatabase } from './store/schema.js';
import { audit, bump, CLI_ACTOR, type PlatformStore, unknownTenant } from './tenants.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** `UcpSessionStore.updateUcpSession`'s arguments. */
type SessionUpdate = [
  id: string,
  from: readonly UcpSessionRecord['status'][],
  change: UcpSessionChange,
  now: number,
  guard?: Pick<UcpSessionRecord, 'code_sha256' | 'code_attempts'>,
];

/** A tenant's row as the node's ports know it: without its domain. */
const own = <T extends { domain: string }>({ domain: _, ...row }: T): Omit<T, 'domain'> => row;

export class TenantBookings implements BookingStore<StoreSnapshot>, UcpSessionStore, UcpIdempotencyStore, UcpHolds {
  /** `onWrite`: a committed hold change of this tenant (this process's states of it are stale now). */
  constructor(
    private readonly store: PlatformStore,
    readonly domain: string,
    private readonly onWrite: () => void,
  ) {
    this.idempotency = idempotencyRows(store.db, 'platform_tenant_ucp_idempotency', { column: 'domain', value: domain });
  }

  private get db(): Kysely<PlatformDatabase> {
    return this.store.db;
  }

  /**
   * Take the tenant's write lock in `tx`: its row's lock on PostgreSQL (`FOR UPDATE`, which fires no
   * notification), the database's write lock on SQLite (an update that changes nothing), so the
   * state read next is the latest committed one until commit, as the node store's `lockWrites`.
   */
  private async lock(tx: Kysely<PlatformDatabase>): Promise<void> {
    if (this.store.target.kind === 'postgres')
      await tx.selectFrom('platform_tenant').select('domain').where('domain', '=', this.domain).forUpdate().execute();
    else await tx.updateTable('platform_tenant').set({ revision: sql<number>`revision` }).where('domain', '=', this.domain).execute();
  }

  // ── the desk's holds (node booking/ports.ts) ─────────────────────────────────────────

  async bookingByIdempotencyKey(key: string): Promise<BookingRequestRecord | undefined> {
    const row = await this.db
      .selectFrom('platform_tenant_booking')
      .selectAll()
      .where('domain', '=', this.domain)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    return row && own(row);
  }

  async bookingRequest(id: string): Promise<BookingRequestRecord | undefined> {
    const row = await this.db
      .selectFrom('platform_tenant_booking')
      .selectAll()
      .where('domain', '=', this.domain)
      .where('booking_id', '=', id)
      .executeTakeFirst();
    return row && own(row);
  }

  /**
   * The node store's `createHold` over the tenant's rows: the decision on the tenant's state read
   * under its lock; with `session`, the tenant's session moved in the same transaction (or, moved on
   * already, nothing written).
   */
  async createHold<R>(
    key: string,
    now: number,
    decide: (state: StoreSnapshot) => { hold: NewHold } | { refuse: R },
    session?: HoldSession,
  ): Promise<HoldOutcome<R>> {
    const outcome = await this.db.transaction().execute(async (tx): Promise<HoldOutcome<R>> => {
      await this.lock(tx);
      const existing = await tx
        .selectFrom('platform_tenant_booking')
        .selectAll()
        .where('domain', '=', this.domain)
        .where('idempotency_key', '=', key)
        .executeTakeFirst();
      if (existing) return { kind: 'existing', booking: own(existing) };
      const decision = decide(await this.store.tenantSnapshot(this.domain, tx));
      if ('refuse' in decision) return { kind: 'refused', refusal: decision.refuse };
      const booking: BookingRequestRecord = {
        ...decision.hold,
        status: 'pending',
        created_at: iso(now),
        updated_at: iso(now),
        decision_reason: null,
      };
      // The session's move with its hold, both or neither (node booking/ports.ts `HoldSession`); first, so a refusal writes nothing.
      const change = { ...session?.change, booking_id: booking.booking_id };
      if (session && !(await this.updateSession(tx, session.id, session.from, change, now))) return { kind: 'session_moved' };
      await tx
        .insertInto('platform_tenant_booking')
        .values({ ...booking, domain: this.domain })
        .execute();
      await tx
        .insertInto('platform_tenant_block')
        .values({ ...holdRange(booking, now), domain: this.domain })
        .execute();
      await bump(tx, this.domain, now);
      return { kind: 'created', booking };
    });
    if (outcome.kind === 'created') this.onWrite();
    return outcome;
  }

  /** The tenant's holds, oldest first (`status`: of one status only). */
  async bookingRequests(status?: BookingRequestRecord['status']): Promise<BookingRequestRecord[]> {
    let q = this.db.selectFrom('platform_tenant_booking').selectAll().where('domain', '=', this.domain);
    if (status) q = q.where('status', '=', status);
    return (await q.orderBy('created_at').orderBy('booking_id').execute()).map(own);
  }

  /**
   * The decision on a pending hold, as the node store's `decideHold`: `confirmed` keeps its nights
   * blocked (past its hold time too), `declined` frees them (a canceled session's hold; the operator's
   * `vrp platform tenants decline-booking`). The updated booking; the unchanged one when it was no
   * longer pending (nothing written); undefined when the tenant has no such booking. With `operator`
   * (an operator's decision) its reason for a decline is kept and the audit trail records it in the
   * same transaction.
   */
  async decideHold(
    id: string,
    status: 'confirmed' | 'declined',
    now: number,
    operator?: { actor: string; reason: string | null },
  ): Promise<{ decided: boolean; booking: BookingRequestRecord } | undefined> {
    const out = await this.db.transaction().execute(async (tx) => {
      await this.lock(tx);
      const row = await tx
        .selectFrom('platform_tenant_booking')
        .selectAll()
        .where('domain', '=', this.domain)
        .where('booking_id', '=', id)
        .executeTakeFirst();
      if (!row) return undefined;
      const booking = own(row);
      if (row.status !== 'pending' || Date.parse(row.hold_expires_at) <= now) return { decided: false, booking };
      const decision_reason = operator?.reason ?? null;
      await tx
        .updateTable('platform_tenant_booking')
        .set({ status, updated_at: iso(now), decision_reason })
        .where('domain', '=', this.domain)
        .where('booking_id', '=', id)
        .execute();
      if (status === 'declined')
        await tx.deleteFrom('platform_tenant_block').where('domain', '=', this.domain).where('id', '=', id).execute();
      else
        await tx
          .updateTable('platform_tenant_block')
          .set({ note: `booking request ${id} (confirmed)` })
          .where('domain', '=', this.domain)
          .where('id', '=', id)
          .execute();
      if (operator) await audit(tx, now, operator.actor, `booking_${status}`, this.domain, id);
      await bump(tx, this.domain, now);
      return { decided: true, booking: { ...booking, status, updated_at: iso(now), decision_reason } };
    });
    if (out?.decided) this.onWrite();
    return out;
  }

  /** Expire the tenant's pending holds whose time has passed and free their nights; the ids expired (none: nothing written). */
  async expireHolds(now: number): Promise<string[]> {
    const ids = await this.db.transaction().execute(async (tx) => {
      await this.lock(tx);
      const due = await tx
        .selectFrom('platform_tenant_booking')
        .select('booking_id')
        .where('domain', '=', this.domain)
        .where('status', '=', 'pending')
        .where('hold_expires_at', '<=', iso(now))
        .execute();
      const expired = due.map((r) => r.booking_id);
      if (expired.length === 0) return expired;
      await tx
        .updateTable('platform_tenant_booking')
        .set({ status: 'expired', updated_at: iso(now) })
        .where('domain', '=', this.domain)
        .where('booking_id', 'in', expired)
        .execute();
      await tx.deleteFrom('platform_tenant_block').where('domain', '=', this.domain).where('id', 'in', expired).execute();
      await bump(tx, this.domain, now);
      return expired;
    });
    if (ids.length > 0) this.onWrite();
    return ids;
  }

  // ── UCP Idempotency-Keys (node ucp/ports.ts): the node's statements over the tenant's rows ──

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

  // ── UCP booking sessions (node ucp/ports.ts) ─────────────────────────────────────────

  async insertUcpSession(s: NewUcpSession, now: number, settle?: UcpSettle): Promise<UcpSessionRecord> {
    const row = newSessionRow(s, now);
    const insert = (db: Kysely<PlatformDatabase>) =>
      db
        .insertInto('platform_tenant_ucp_session')
        .values({ ...row, domain: this.domain })
        .execute();
    if (!settle) {
      await insert(this.db);
      return row;
    }
    // The session and its Idempotency-Key's answer, both or neither (node ucp/idempotency.ts).
    await this.db.transaction().execute(async (tx) => {
      await insert(tx);
      await idempotencyRows(tx, 'platform_tenant_ucp_idempotency', { column: 'domain', value: this.domain }).settleUcpIdempotencyKey(
        settle.id,
        settle,
      );
    });
    return row;
  }

  async ucpSession(id: string): Promise<UcpSessionRecord | undefined> {
    const row = await this.db
      .selectFrom('platform_tenant_ucp_session')
      .selectAll()
      .where('domain', '=', this.domain)
      .where('session_id', '=', id)
      .executeTakeFirst();
    return row && own(row);
  }

  /** Compare-and-set on the status (and with `guard` the code and its tries), as the node store's. */
  updateUcpSession(...a: SessionUpdate): Promise<UcpSessionRecord | undefined> {
    return this.updateSession(this.db, ...a);
  }

  /** `updateUcpSession` in `db`: alone, or in a hold's transaction. */
  private async updateSession(
    db: Kysely<PlatformDatabase>,
    ...[id, from, change, now, guard]: SessionUpdate
  ): Promise<UcpSessionRecord | undefined> {
    let q = db
      .updateTable('platform_tenant_ucp_session')
      .set({ ...change, updated_at: iso(now) })
      .where('domain', '=', this.domain)
      .where('session_id', '=', id)
      .where('status', 'in', from);
    if (guard?.code_sha256) q = q.where('code_sha256', '=', guard.code_sha256).where('code_attempts', '=', guard.code_attempts);
    const row = await q.returningAll().executeTakeFirst();
    return row && own(row);
  }
}

/**
 * `vrp platform tenants confirm-booking|decline-booking DOMAIN ID`: the operator's decision on a
 * tenant's pending hold, as `vrp node bookings confirm|decline` on a node (lapsed holds expired
 * first; `booking_not_found`, `booking_not_pending`, `unknown_tenant`). A decline takes the reason
 * (`declineReason`: `decline_reason_required`, `decline_reason_too_long`, checked before anything is
 * read), kept with the hold; the tenant's UCP session that made the hold ends `canceled` with it (its
 * answer carries `declined_by_host`). Serving processes honour it at the tenant's next read (the
 * revision it bumps).
 */
export async function decideTenantBooking(
  store: PlatformStore,
  o: { domain: string; id: string; decision: 'confirmed' | 'declined'; reason?: string; actor?: string },
): Promise<BookingRequestRecord> {
  const reason = o.decision === 'declined' ? declineReason(o.reason) : null;
  const bookings = await tenantBookings(store, o.domain);
  const now = store.clock.now();
  await bookings.expireHolds(now);
  const d = await bookings.decideHold(o.id, o.decision, now, { actor: o.actor ?? CLI_ACTOR, reason });
  if (!d) throw new NodeError('booking_not_found', { id: o.id });
  if (!d.decided) throw new NodeError('booking_not_pending', { id: o.id, status: d.booking.status });
  if (reason !== null) await cancelSessionOfDeclinedHold(bookings, d.booking, reason, now);
  return d.booking;
}

const STATUSES: readonly BookingRequestRecord['status'][] = ['pending', 'confirmed', 'declined', 'expired'];

/** `vrp platform tenants bookings DOMAIN [--status S]`: the tenant's holds, lapsed ones expired first (`invalid_booking_status`). */
export async function listTenantBookings(store: PlatformStore, domain: string, status?: string): Promise<BookingRequestRecord[]> {
  if (status !== undefined && !STATUSES.includes(status as BookingRequestRecord['status']))
    throw new NodeError('invalid_booking_status', { statuses: STATUSES.join(', ') });
  const bookings = await tenantBookings(store, domain);
  await bookings.expireHolds(store.clock.now());
  return bookings.bookingRequests(status as BookingRequestRecord['status'] | undefined);
}

/** The bookings of an existing tenant, for an operator command (this process serves nothing: no state to mark stale). */
async function tenantBookings(store: PlatformStore, domain: string): Promise<TenantBookings> {
  if (!(await store.tenantHead(domain))) throw unknownTenant(domain);
  return new TenantBookings(store, domain, () => {});
}
