/**
 * Which loaded tenant serves a request's host. Tenants load lazily into a bounded LRU cache, so
 * memory follows the tenants recently served, not those that exist. A tenant's first request
 * costs one query (tenant-lookups.ts: which tenant serves the host and everything its offer
 * service reads, shared with the other hosts asked about while the previous lookup was on its
 * way), started at the TLS handshake (`warm`, from the SNI callback) so it runs while
 * the handshake completes. After that a route is served from memory while the watch confirms the
 * tenant's state, and reads its head row otherwise (`TenantSource.live`), so a disabled, removed
 * or rotated tenant is seen by every process within the invalidation window (tenant-watch.ts).
 */
import type { Clock } from '@vrpkit/core';
import type { OfferCache } from '@vrpkit/node';
import { LRUCache } from 'lru-cache';
import type { MasterKey } from './master-key.js';
import { createTenantLookups } from './tenant-lookups.js';
import { type GuestMailOptions, openTenantNode, type TenantDeskOptions, type TenantNode } from './tenant-node.js';
import type { TenantWatch } from './tenant-watch.js';
import type { PlatformStore, TenantSnapshot } from './tenants.js';

/** A routed request's tenant and the state it is served with. */
export interface TenantRoute {
  node: TenantNode;
  state: TenantSnapshot;
}

export interface TenantRouter {
  /** The enabled tenant serving `host` with its state read now, or undefined. */
  route(host: string): Promise<TenantRoute | undefined>;
  /**
   * `route` in the caller's own turn, for a tenant already open whose state the store can tell
   * without waiting (`TenantSource.liveNow`): the request is then answered in its own turn, as the
   * single-domain node answers. Undefined whenever that is not so (then `route`, which also deals
   * with a tenant gone or added again, and reports a failed read).
   */
  routeNow(host: string): TenantRoute | undefined;
  /** Start opening the tenant serving `host` (an SNI name at a handshake), so its first request finds it open or opening; its failure is the request's. */
  warm(host: string): void;
  /** Tenants loaded in this process. */
  loaded(): number;
}

export interface TenantRouterOptions {
  /** Most tenants held loaded. */
  size: number;
  watch: TenantWatch;
  offerCache: OfferCache | null;
  onSignature: () => void;
  /** Each lookup: whether the tenant was loaded already. */
  onLookup: (hit: boolean) => void;
  clock?: Clock;
  /** The mail transport every tenant's guest page sends its one-time codes by; absent, no guest can confirm a session. */
  guestMail?: GuestMailOptions;
  bookings?: TenantDeskOptions;
  /** A failure the client only sees as a refusal (a mail that could not be sent). */
  onError?: (e: unknown) => void;
}

export function createTenantRouter(store: PlatformStore, masterKeys: readonly MasterKey[], o: TenantRouterOptions): TenantRouter {
  /** Loaded tenants by domain: the node once open (`node`), the opening meanwhile (`opening`). */
  const tenants = new LRUCache<string, { opening: Promise<TenantNode>; node?: TenantNode }>({ max: o.size });
  /** Hosts being looked up (a handshake's and its first request's lookups share one query). */
  const lookups = new Map<string, Promise<TenantNode | undefined>>();
  const nodeOptions = {
    watch: o.watch,
    offerCache: o.offerCache,
    onSignature: o.onSignature,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.guestMail ? { guestMail: o.guestMail } : {}),
    ...(o.bookings ? { bookings: o.bookings } : {}),
    ...(o.onError ? { onError: o.onError } : {}),
  };

  const find = createTenantLookups(store, o.watch);

  /** The tenant serving `host` from its one lookup, opened with what that lookup read. */
  const open = async (host: string): Promise<TenantNode | undefined> => {
    const found = await find(host);
    if (!found) return undefined;
    const { snapshot, mark } = found;
    const domain = snapshot.info.canonical_domain;
    const loaded = tenants.get(domain);
    if (loaded) return loaded.opening;
    const entry: { opening: Promise<TenantNode>; node?: TenantNode } = {
      opening: openTenantNode(store, domain, masterKeys, { ...nodeOptions, first: { snapshot, mark } }),
    };
    tenants.set(domain, entry);
    entry.opening.then(
      (node) => {
        entry.node = node;
      },
      () => tenants.get(domain) === entry && tenants.delete(domain),
    );
    return entry.opening;
  };

  /** The one lookup of `host` under way, or a new one. */
  const lookUp = (host: string): Promise<TenantNode | undefined> => {
    let pending = lookups.get(host);
    if (!pending) {
      pending = open(host).finally(() => lookups.delete(host));
      lookups.set(host, pending);
    }
    return pending;
  };

  const nodeFor = (host: string): Promise<TenantNode | undefined> => {
    const loaded = tenants.get(host);
    o.onLookup(loaded !== undefined);
    return loaded ? loaded.opening : lookUp(host);
  };

  const route = async (host: string, again = true): Promise<TenantRoute | undefined> => {
    const node = await nodeFor(host);
    if (!node) return undefined;
    const state = await node.source.live();
    if (state) return { node, state };
    if (tenants.get(node.domain)?.node === node) tenants.delete(node.domain);
    // Once more from the store: the tenant may have been removed and added again (another node).
    return again ? route(host, false) : undefined;
  };

  const routeNow = (host: string): TenantRoute | undefined => {
    const node = tenants.get(host)?.node;
    let state: TenantSnapshot | undefined | null;
    try {
      state = node?.source.liveNow();
    } catch {
      return undefined;
    }
    if (!node || !state) return undefined;
    o.onLookup(true);
    return { node, state };
  };

  const warm = (host: string) => {
    if (!tenants.has(host)) lookUp(host).catch(() => {});
  };

  return { route: (host) => route(host), routeNow, warm, loaded: () => tenants.size };
}
