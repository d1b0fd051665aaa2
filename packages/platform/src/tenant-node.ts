/**
 * One tenant served as a VRP node: the node's own offer service and signer (`createOfferService`),
 * reading the tenant's rows instead of a node store and signing with its private key unsealed
 * from the database instead of a key file. The HTTP app is not per tenant: serve.ts mounts the
 * node's app once and hands each request the tenant its router chose, so what a loaded tenant
 * holds is its snapshot, its key ring and the surfaces' derived documents (tool description,
 * agent card); its signed offers live in the platform's one offer cache, keyed by domain.
 */
import { type Clock, systemClock } from '@vrpkit/core';
import {
  type BookingDesk,
  type BookingDeskOptions,
  createBookingDesk,
  createOfferService,
  type NodePublisher,
  type OfferCache,
  type SmtpMailerOptions,
  type SnapshotSource,
  smtpMailer,
  type UcpBookingSessions,
  ucpBookingSessions,
} from '@vrpkit/node';
import { SqlError } from '@vrpkit/sql';
import { PlatformError } from './errors.js';
import { type MasterKey, openPrivateKey } from './master-key.js';
import { TenantBookings } from './tenant-bookings.js';
import { type StateMark, TenantWatch } from './tenant-watch.js';
import { type PlatformStore, type TenantHead, type TenantSnapshot, unknownTenant } from './tenants.js';

export interface TenantNode {
  domain: string;
  publisher: NodePublisher;
  source: TenantSource;
  /** The tenant as a UCP lodging business: its sessions, its booking desk (the hold path) and, with a mail transport, the guest's confirmation. */
  ucp: UcpBookingSessions & { desk: BookingDesk };
}

/** `vrp platform serve --smtp-url/--mail-from/--smtp-ca`: the transport every tenant's guest mails go by (sender default `bookings@{domain}`). */
export type GuestMailOptions = Partial<SmtpMailerOptions> & Pick<SmtpMailerOptions, 'url'>;

/** A tenant's booking desk limits (the node's `--hold-hours`, `--booking-rate-limit`, `--booking-holds-per-day`). */
export type TenantDeskOptions = Pick<BookingDeskOptions<unknown>, 'holdHours' | 'rateLimitPerMinute' | 'holdsPerDay'>;

/**
 * The tenant's rows as the node's `SnapshotSource`. On PostgreSQL with its listener up the state
 * is served from memory while the watch confirms it (tenant-watch.ts: no read per request);
 * otherwise each request reads the head row once (on SQLite only once anything was written since
 * it was last read: `liveNow`), the rest reloaded only when the revision moved (a write by any
 * process), as `NodeStore.snapshot` does.
 *
 * The router reads the state to decide whether the tenant is served at all (`live`), then
 * dispatches the request within `during`: whatever the offer service asks for while that
 * dispatch runs synchronously (the offer endpoint, discovery, JWKS) is that same state, so the
 * request reads the head once. JavaScript runs one dispatch at a time, so no other request can
 * see it; a surface that first awaits its body (MCP, A2A) reads the state again when it gets there.
 */
export class TenantSource implements SnapshotSource {
  private cached: TenantSnapshot | undefined;
  /** When the read that produced or last confirmed `cached` started. */
  private confirmed: StateMark | undefined;
  private current: TenantSnapshot | undefined;
  /**
   * SQLite: the store's commit counter (`PlatformStore.commitCounterNow`) taken just before the head
   * read that last confirmed `cached`, and the watch's notifications then (a hold this process
   * wrote notifies at once). While neither moved, nothing was written, so that head still holds
   * and is not read again (null: no such read).
   */
  private headCounter: { counter: number; seq: number } | null = null;
  /** The tenant's `created_at` as first read. */
  private createdAt: string | undefined;
  /** The tenant's UCP sessions and holds (tenant-bookings.ts); a hold it writes makes this process's state of the tenant stale at once. */
  readonly bookings: TenantBookings;

  /** `first`: the state the router's one query read, and its mark. */
  constructor(
    private readonly store: PlatformStore,
    readonly domain: string,
    private readonly watch: TenantWatch,
    first?: { snapshot: TenantSnapshot; mark: StateMark },
  ) {
    this.bookings = new TenantBookings(store, domain, () => watch.notify(domain));
    if (first) {
      this.cached = first.snapshot;
      this.confirmed = first.mark;
      this.createdAt = first.snapshot.info.created_at;
    }
  }

  /**
   * The state the dispatching request read, else a fresh read. With `now`, as the node store's: a
   * pending hold lapsed by then is expired first (a write), so its nights show free.
   */
  async snapshot(now?: number): Promise<TenantSnapshot> {
    const s = this.current ?? (await this.read());
    if (now === undefined || s.nextHoldExpiry === null || Date.parse(s.nextHoldExpiry) > now) return s;
    await this.bookings.expireHolds(now);
    return this.read();
  }

  /** The dispatching request's state (see the class comment), or null outside a dispatch. */
  snapshotNow(): TenantSnapshot | null {
    return this.current ?? null;
  }

  /** The tenant as of now: from memory while the watch confirms it, else its head row read for this call, the rest reused while its revision holds. */
  async read(): Promise<TenantSnapshot> {
    const kept = this.fromMemory();
    if (kept) return kept;
    const mark = this.watch.mark();
    const head = this.admit(await this.store.tenantHead(this.domain));
    if (this.cached?.revision === head.revision) return this.accept(this.cached, mark);
    const next = await this.store.tenantSnapshot(this.domain);
    if (next.info.created_at !== this.createdAt) throw unknownTenant(this.domain);
    return this.accept(next, mark);
  }

  /** The tenant's state, or undefined when it no longer exists or is disabled (it is then gone from its next request on). */
  live(): Promise<TenantSnapshot | undefined> {
    return this.read().catch((e: unknown) => {
      if (isGone(e)) return undefined;
      throw e;
    });
  }

  /**
   * `live` in the caller's own turn: the state kept in memory while the watch confirms it
   * (PostgreSQL), else (SQLite) the state already loaded when no write committed since its head
   * was last read, or when the head read now names its revision. `null` when that cannot be told
   * without waiting (a round trip, a revision not loaded yet): then `live`.
   */
  liveNow(): TenantSnapshot | undefined | null {
    let kept: TenantSnapshot | undefined;
    try {
      kept = this.fromMemory();
      if (kept) return kept;
      const mark = this.watch.mark();
      // Taken before the head read: a write committing after it moves the counter, so a later request reads the head again.
      const counter = this.store.commitCounterNow();
      const known = this.headCounter;
      if (this.cached && counter !== null && known?.counter === counter && known.seq === mark.seq) return this.accept(this.cached, mark);
      const head = this.store.tenantHeadNow(this.domain);
      if (head === null) return null;
      const admitted = this.admit(head);
      if (this.cached?.revision !== admitted.revision) return null;
      this.headCounter = counter === null ? null : { counter, seq: mark.seq };
      return this.accept(this.cached, mark);
    } catch (e) {
      if (isGone(e)) return undefined;
      throw e;
    }
  }

  /** The kept state while the watch confirms it (a disabled one refused as a head read would refuse it). */
  private fromMemory(): TenantSnapshot | undefined {
    const c = this.cached;
    if (!c || !this.confirmed || !this.watch.servesFromMemory(this.domain, this.confirmed)) return undefined;
    if (c.status !== 'active') throw new PlatformError('tenant_disabled', { domain: this.domain });
    return c;
  }

  /** `snapshot` as read under `mark`, kept unless a read that started later was kept already. */
  private accept(snapshot: TenantSnapshot, mark: StateMark): TenantSnapshot {
    if (!this.confirmed || mark.at >= this.confirmed.at) {
      if (snapshot !== this.cached) this.headCounter = null;
      this.cached = snapshot;
      this.confirmed = mark;
    }
    return snapshot;
  }

  /**
   * Refuse a signature by `kid` unless the state kept is confirmed within the lease and still holds
   * `kid`'s private half (a retired or revoked key's is gone from it): no signature with a key
   * revoked by a write this process has not honoured yet (tenant-watch.ts).
   */
  assertSignable(kid: string): void {
    if (!this.confirmed || !this.watch.signable(this.domain, this.confirmed) || !this.cached?.sealed.has(kid))
      // Answered as the store being away (503, Retry-After): the next request reads the tenant again.
      throw new PlatformError('tenant_state_stale', { domain: this.domain }, { cause: new SqlError('store_unavailable') });
  }

  /**
   * The head of the tenant this source was opened for, or a refusal. One removed and added
   * again is another node (its own key, possibly under the same kid, and its revision starting
   * over), never served from this source's state or key ring: the router then opens the new
   * tenant afresh.
   */
  private admit(head: TenantHead | undefined): TenantHead {
    if (!head) throw unknownTenant(this.domain);
    this.createdAt ??= head.created_at;
    if (head.created_at !== this.createdAt) throw unknownTenant(this.domain);
    if (head.status !== 'active') throw new PlatformError('tenant_disabled', { domain: this.domain });
    return head;
  }

  /** Run `dispatch` with `state` as what the service reads until dispatch first yields. */
  during<T>(state: TenantSnapshot, dispatch: () => T): T {
    this.current = state;
    try {
      return dispatch();
    } finally {
      this.current = undefined;
    }
  }

  /** The sealed private half of `kid` as of the last snapshot. */
  sealed(kid: string): string {
    const s = this.cached?.sealed.get(kid);
    if (!s) throw new PlatformError('private_key_missing', { kid });
    return s;
  }
}

/** A refusal that means the tenant is no longer served: removed (or another tenant now) or disabled. */
const isGone = (e: unknown) => e instanceof PlatformError && (e.code === 'tenant_disabled' || e.code === 'unknown_tenant');

export interface TenantNodeOptions {
  /** What tells this process of the tenant's writes (tenant-watch.ts); absent, none: the head is read per request. */
  watch?: TenantWatch;
  /** The state already read (the router's one query for a first request) and its mark. */
  first?: { snapshot: TenantSnapshot; mark: StateMark };
  clock?: Clock;
  offerCache?: OfferCache | null;
  onSignature?: () => void;
  guestMail?: GuestMailOptions;
  bookings?: TenantDeskOptions;
  onError?: (e: unknown) => void;
}

/**
 * Open a tenant's node (`offerCache`: the platform's shared one; absent, the service makes its own). `masterKeys` are tried in order (the current key first; the previous one
 * while `vrp platform master-key rotate` runs), so serving never stops during a master-key rotation.
 */
export async function openTenantNode(
  store: PlatformStore,
  domain: string,
  masterKeys: readonly MasterKey[],
  o: TenantNodeOptions = {},
): Promise<TenantNode> {
  const source = new TenantSource(store, domain, o.watch ?? new TenantWatch(), o.first);
  const publisher = await createOfferService({
    store: source,
    keys: (kid) => {
      const sealed = source.sealed(kid);
      let last: unknown;
      for (const m of masterKeys) {
        try {
          return openPrivateKey(m, domain, kid, sealed);
        } catch (e) {
          last = e;
        }
      }
      throw last;
    },
    ...(o.offerCache !== undefined ? { offerCache: o.offerCache } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
    onSignature: (kid) => {
      source.assertSignable(kid);
      o.onSignature?.();
    },
  });
  return { domain, source, publisher, ucp: tenantUcp(publisher, source, o) };
}

/**
 * The tenant's UCP sessions over its rows (tenant-bookings.ts), through the node's own sessions,
 * booking desk and guest confirmation. The desk's per-address rate limit and hold cap are the
 * tenant's, kept while the tenant stays loaded in this process.
 */
function tenantUcp(publisher: NodePublisher, source: TenantSource, o: TenantNodeOptions): TenantNode['ucp'] {
  const clock = o.clock ?? systemClock;
  const desk = createBookingDesk({ ...o.bookings, service: publisher, store: source.bookings, clock });
  const sessions = ucpBookingSessions({
    service: publisher,
    store: source.bookings,
    desk,
    clock,
    ...(o.onError ? { onError: o.onError } : {}),
    ...(o.guestMail ? { mailer: smtpMailer({ from: `bookings@${publisher.canonicalDomain}`, ...o.guestMail }) } : {}),
  });
  return { ...sessions, desk };
}
