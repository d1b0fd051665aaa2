/**
 * Health of a serving node, for a supervisor or load balancer: `/healthz` says the process
 * answers; `/readyz` says it can sign a quoteable offer now — the store answers, a signing key
 * is active and its private key loads, and every calendar feed is fresh (Core VRP v0.1 §7
 * `calendar_freshness`: a failed or stale feed makes every offer non-quoteable) — and, given its
 * write health, that the store can take writes (store-health.ts). The report
 * names checks, feed names and sync times only: no paths, URLs, key ids or error texts, which
 * can hold a private calendar token or a file layout.
 */
import type { Clock } from '@vrpkit/core';
import { isConnectionLoss } from '@vrpkit/sql';
import { calendarFreshness } from './availability.js';
import { NodeError } from './errors.js';
import { KeyRing, keyFileSource } from './keys.js';
import type { NodeStore } from './store/store.js';
import type { StoreHealth } from './store-health.js';

export const HEALTHZ_PATH = '/healthz';
export const READYZ_PATH = '/readyz';

export interface ReadinessCheck {
  ok: boolean;
  /** Why it failed: a stable code. */
  code?: string;
}

export interface FeedReadiness {
  name: string;
  status: 'fresh' | 'stale' | 'failed';
  last_success_at: string | null;
}

export interface ReadinessReport {
  ready: boolean;
  checks: {
    store: ReadinessCheck;
    signing_key: ReadinessCheck;
    calendar: ReadinessCheck & { feeds: FeedReadiness[] };
  };
}

/**
 * The readiness probe of a node served from `store`, signing with the keys in `keysDir`, on
 * `clock`; with `writes`, the store check also fails (`store_unavailable`) while the store cannot write.
 */
export function readinessProbe(store: NodeStore, keysDir: string, clock: Clock, writes?: StoreHealth): () => Promise<ReadinessReport> {
  const keyRing = new KeyRing(keyFileSource(keysDir), clock);
  // A lost store connection (PostgreSQL restarting, issue 36 defect 1) is named as such: a balancer's operator sees why.
  const failed = (e: unknown): ReadinessCheck => ({
    ok: false,
    code: isConnectionLoss(e) ? 'store_unavailable' : e instanceof NodeError ? e.code : 'internal_error',
  });
  return async () => {
    let snap: Awaited<ReturnType<NodeStore['snapshot']>>;
    try {
      snap = await store.snapshot();
    } catch (e) {
      const down = failed(e);
      // Without the store neither the key ring nor the calendar can be judged: unknown is not ready.
      return { ready: false, checks: { store: down, signing_key: down, calendar: { ...down, feeds: [] } } };
    }
    let signingKey: ReadinessCheck = { ok: true };
    try {
      keyRing.signerFor(snap.keys);
    } catch (e) {
      signingKey = failed(e);
    }
    const t = clock.now();
    const freshness = calendarFreshness(snap.feeds, t, snap.property.calendar_max_age_minutes);
    const feeds = snap.feeds.map((f) => ({
      name: f.name,
      status: freshness.error_sources?.includes(f.name)
        ? ('failed' as const)
        : freshness.stale_sources?.includes(f.name)
          ? ('stale' as const)
          : ('fresh' as const),
      last_success_at: f.last_success_at,
    }));
    const calendar = { ok: freshness.safe, ...(freshness.reason ? { code: freshness.reason } : {}), feeds };
    const written = writes ? await writes.check().catch(failed) : { ok: true };
    return { ready: written.ok && signingKey.ok && calendar.ok, checks: { store: written, signing_key: signingKey, calendar } };
  };
}
