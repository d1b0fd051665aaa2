/** `vrp node keys …`: list, rotate and revoke the signing keys of a node's data directory (Core VRP v0.1 §3.1). */
import { systemClock } from '@vrpkit/core';
import { nodePaths } from '../datadir.js';
import { NodeError } from '../errors.js';
import { activateNewKey, isPublished, type KeyState, keyStateAt, revokeKeyIn } from '../keys.js';
import type { NodeStore } from '../store/store.js';
import { type NodeStoreOptions, withNodeStore } from './store.js';

/** The node's key-ring context: who it is, how long a retired key stays published, and now. */
async function keyRingContext(store: NodeStore, o: NodeStoreOptions) {
  const [info, property] = await Promise.all([store.nodeInfo(), store.property()]);
  return {
    domain: info.canonical_domain,
    keysDir: nodePaths(o.dataDir).keys,
    // A retired key must outlive every offer it signed: rotation time + offer lifetime (Core VRP v0.1 §3.1).
    retentionMs: property.offer_lifetime_minutes * 60_000,
    now: (o.clock ?? systemClock).now(),
  };
}

export interface KeyListing {
  kid: string;
  /** The key's state now: `pending` is published ahead and signs from `activates_at`. */
  status: KeyState;
  /** Whether the JWKS serves the key now. */
  published: boolean;
  created_at: string;
  activates_at: string;
  retired_at: string | null;
  retain_until: string | null;
  revoked_at: string | null;
}

/** `vrp node keys list` */
export function listKeys(o: NodeStoreOptions): Promise<KeyListing[]> {
  return withNodeStore(o, async (store) => {
    const now = (o.clock ?? systemClock).now();
    return (await store.keys()).map((k) => {
      const { public_jwk: _public, ...rest } = k;
      return { ...rest, status: keyStateAt(k, now), published: isPublished(k, now) };
    });
  });
}

/** Longest `--publish-ahead`: a day is far beyond any JWKS cache lifetime (Core VRP v0.1 §3.1 caches for minutes). */
export const MAX_PUBLISH_AHEAD_SECONDS = 86_400;

/**
 * `vrp node keys rotate [--publish-ahead SECONDS]`: the new key is published at once and signs
 * after `publishAheadSeconds` (default 0: at once), so agents that cached the JWKS in between
 * already know it when its first offer arrives.
 */
export async function rotateKey(o: NodeStoreOptions & { publishAheadSeconds?: number }) {
  const ahead = o.publishAheadSeconds ?? 0;
  if (!Number.isInteger(ahead) || ahead < 0 || ahead > MAX_PUBLISH_AHEAD_SECONDS)
    throw new NodeError('invalid_publish_ahead', { max: MAX_PUBLISH_AHEAD_SECONDS });
  return withNodeStore(o, async (store) => {
    const { domain, keysDir, retentionMs, now } = await keyRingContext(store, o);
    return activateNewKey(store, keysDir, domain, retentionMs, now, ahead * 1000);
  });
}

/** `vrp node keys revoke KID` */
export function revokeKey(o: NodeStoreOptions & { kid: string }) {
  return withNodeStore(o, async (store) => {
    const { domain, keysDir, retentionMs, now } = await keyRingContext(store, o);
    return revokeKeyIn(store, keysDir, domain, o.kid, retentionMs, now);
  });
}
