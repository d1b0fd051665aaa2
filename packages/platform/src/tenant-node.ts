/**
 * One tenant served as a full VRP node: the node's own offer service, signer and surfaces
 * (`createOfferService`, `createNodeApp`), reading the tenant's rows instead of a node store and
 * signing with its private key unsealed from the database instead of a key file.
 */
import type { Clock } from '@vrpkit/core';
import { createNodeApp, createOfferService, type NodeAppOptions, type NodePublisher, type SnapshotSource } from '@vrpkit/node';
import type { Hono } from 'hono';
import { PlatformError } from './errors.js';
import { type MasterKey, openPrivateKey } from './master-key.js';
import { type PlatformStore, type TenantSnapshot, unknownTenant } from './tenants.js';

export interface TenantNode {
  domain: string;
  publisher: NodePublisher;
  app: Hono;
  source: TenantSource;
  /** Whether the tenant still exists and is enabled (one indexed read; a disabled tenant is gone from its next request on). */
  live(): Promise<boolean>;
}

/**
 * The tenant's rows as the node's `SnapshotSource`: one head read per request, the rest reloaded
 * only when the revision moved (a write by any process), as `NodeStore.snapshot` does.
 */
export class TenantSource implements SnapshotSource {
  private cached: TenantSnapshot | undefined;

  constructor(
    private readonly store: PlatformStore,
    readonly domain: string,
  ) {}

  /** The tenant as of now: its head row read for this call (never shared with a call that came earlier), the rest reused while its revision holds. */
  async snapshot(): Promise<TenantSnapshot> {
    const head = await this.store.tenantHead(this.domain);
    if (!head) throw unknownTenant(this.domain);
    if (head.status !== 'active') throw new PlatformError('tenant_disabled', `${this.domain} is disabled`);
    if (this.cached?.revision === head.revision) return this.cached;
    this.cached = await this.store.tenantSnapshot(this.domain);
    return this.cached;
  }

  /** The sealed private half of `kid` as of the last snapshot. */
  sealed(kid: string): string {
    const s = this.cached?.sealed.get(kid);
    if (!s) throw new PlatformError('private_key_missing', `no private key for ${kid}`);
    return s;
  }
}

/**
 * Open a tenant's node. `masterKeys` are tried in order (the current key first; the previous one
 * while `vrp platform master-key rotate` runs), so serving never stops during a master-key rotation.
 */
export async function openTenantNode(
  store: PlatformStore,
  domain: string,
  masterKeys: readonly MasterKey[],
  o: { clock?: Clock; offerCacheMaxAgeSeconds?: number; app?: NodeAppOptions } = {},
): Promise<TenantNode> {
  const source = new TenantSource(store, domain);
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
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.offerCacheMaxAgeSeconds !== undefined ? { offerCacheMaxAgeSeconds: o.offerCacheMaxAgeSeconds } : {}),
  });
  return {
    domain,
    source,
    publisher,
    app: createNodeApp(publisher, o.app ?? {}),
    live: () =>
      source.snapshot().then(
        () => true,
        (e: unknown) => {
          if (e instanceof PlatformError && (e.code === 'tenant_disabled' || e.code === 'unknown_tenant')) return false;
          throw e;
        },
      ),
  };
}
