/** `vrp node keys …`: list, rotate and revoke the signing keys of a node's data directory (Core §3.1). */
import { systemClock } from '@vrpkit/core';
import { nodePaths } from '../datadir.js';
import { activateNewKey, isPublished, revokeKeyIn } from '../keys.js';
import type { NodeStore, SigningKeyRecord } from '../store/store.js';
import { type NodeStoreOptions, withNodeStore } from './store.js';

/** The node's key-ring context: who it is, how long a retired key stays published, and now. */
async function keyRingContext(store: NodeStore, o: NodeStoreOptions) {
  const [info, property] = await Promise.all([store.nodeInfo(), store.property()]);
  return {
    domain: info.canonical_domain,
    keysDir: nodePaths(o.dataDir).keys,
    // A retired key must outlive every offer it signed: rotation time + offer lifetime (Core §3.1).
    retentionMs: property.offer_lifetime_minutes * 60_000,
    now: (o.now ?? systemClock.now)(),
  };
}

export interface KeyListing {
  kid: string;
  status: SigningKeyRecord['status'];
  /** Whether the JWKS serves the key now. */
  published: boolean;
  created_at: string;
  retired_at: string | null;
  retain_until: string | null;
  revoked_at: string | null;
}

/** `vrp node keys list` */
export function listKeys(o: NodeStoreOptions): Promise<KeyListing[]> {
  return withNodeStore(o, async (store) => {
    const now = (o.now ?? systemClock.now)();
    return (await store.keys()).map((k) => {
      const { public_jwk: _public, ...rest } = k;
      return { ...rest, published: isPublished(k, now) };
    });
  });
}

/** `vrp node keys rotate` */
export function rotateKey(o: NodeStoreOptions) {
  return withNodeStore(o, async (store) => {
    const { domain, keysDir, retentionMs, now } = await keyRingContext(store, o);
    return activateNewKey(store, keysDir, domain, retentionMs, now);
  });
}

/** `vrp node keys revoke KID` */
export function revokeKey(o: NodeStoreOptions & { kid: string }) {
  return withNodeStore(o, async (store) => {
    const { domain, keysDir, retentionMs, now } = await keyRingContext(store, o);
    return revokeKeyIn(store, keysDir, domain, o.kid, retentionMs, now);
  });
}
