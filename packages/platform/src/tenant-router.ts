/**
 * Which loaded tenant serves a request's host. Tenants load lazily into a bounded LRU cache, so
 * memory follows the tenants recently served, not those that exist; every route reads the
 * tenant's head row (`TenantSource.live`), so a disabled, removed or rotated tenant is seen by
 * every process at its next request.
 */
import type { Clock } from '@vrpkit/core';
import type { OfferCache } from '@vrpkit/node';
import { LRUCache } from 'lru-cache';
import type { MasterKey } from './master-key.js';
import { openTenantNode, type TenantNode } from './tenant-node.js';
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
  /** Tenants loaded in this process. */
  loaded(): number;
}

export interface TenantRouterOptions {
  /** Most tenants held loaded. */
  size: number;
  offerCache: OfferCache | null;
  onSignature: () => void;
  /** Each lookup: whether the tenant was loaded already. */
  onLookup: (hit: boolean) => void;
  clock?: Clock;
}

/** `host` and each parent with at least two labels: the tenant domains that could serve it. */
export function candidateDomains(host: string): string[] {
  const labels = host.split('.');
  const out: string[] = [];
  for (let i = 0; i + 2 <= labels.length; i++) out.push(labels.slice(i).join('.'));
  return out;
}

export function createTenantRouter(store: PlatformStore, masterKeys: readonly MasterKey[], o: TenantRouterOptions): TenantRouter {
  /** Loaded tenants by domain: the node once open (`node`), the opening meanwhile (`opening`). */
  const tenants = new LRUCache<string, { opening: Promise<TenantNode>; node?: TenantNode }>({ max: o.size });
  const nodeOptions = { offerCache: o.offerCache, onSignature: o.onSignature, ...(o.clock ? { clock: o.clock } : {}) };

  const load = (domain: string): Promise<TenantNode> => {
    const loaded = tenants.get(domain);
    o.onLookup(loaded !== undefined);
    if (loaded) return loaded.opening;
    const entry: { opening: Promise<TenantNode>; node?: TenantNode } = {
      opening: openTenantNode(store, domain, masterKeys, nodeOptions),
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

  const route = async (host: string, again = true): Promise<TenantRoute | undefined> => {
    const domain = tenants.has(host) ? host : await store.activeTenantFor(candidateDomains(host));
    if (!domain) return undefined;
    const loading = load(domain);
    const node = await loading;
    const state = await node.source.live();
    if (state) return { node, state };
    if (tenants.get(domain)?.opening === loading) tenants.delete(domain);
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

  return { route: (host) => route(host), routeNow, loaded: () => tenants.size };
}
