/**
 * `vrp platform sync-worker`: imports the tenants' iCal feeds, as the single node's background
 * sync does (`syncFeed`: the same hardened https fetch, parser and fail-closed recording), for
 * every tenant of the platform. Run any number of workers on any number of machines: feeds are
 * leased from the database (feed-leases.ts), so none is fetched twice at once, and a killed
 * worker's feeds are taken over once its leases expire. Each feed keeps its own schedule: the
 * interval after a success, the node's backoff after a failure (`nextSyncDelayMs`).
 *
 * Politeness: at most `perHost` fetches run at once per remote host name in THIS worker (workers
 * do not coordinate it: W workers make at most W × perHost concurrent requests to one host).
 *
 * Feed URLs are tenant input: a feed is fetched from public addresses only (feed-address.ts),
 * unless the operator opts out with `allowPrivateFeeds` (`--allow-private-feeds`).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DEFAULT_SYNC_INTERVAL_MS, feedUrlForMessages, syncFeed } from '@vrpkit/node';
import { PlatformError } from './errors.js';
import { PublicFeedAgent } from './feed-address.js';
import { type ClaimedFeed, claimDueFeeds, leasedRecorder, releaseFeed } from './feed-leases.js';
import type { SyncMetrics } from './metrics.js';
import type { PlatformStore } from './tenants.js';

export const DEFAULT_SYNC_CONCURRENCY = 16;
export const DEFAULT_SYNC_PER_HOST = 4;
export const DEFAULT_SYNC_LEASE_MS = 60_000;
/** The node's per-feed deadline; a worker uses at most half its lease, so a fetch always ends while the lease holds. */
const MAX_FETCH_TIMEOUT_MS = 10_000;
/** The shortest lease: a fetch gets half of it. */
export const MIN_SYNC_LEASE_MS = 2_000;
/** How often an idle worker looks for due feeds. */
const POLL_MS = 1_000;

/** What happened to one claimed feed. */
export type FeedSyncOutcome = 'ok' | 'failed' | 'lease_lost' | 'released';

/** One structured log line per claimed feed: the feed URL as its origin and a digest (secret tokens live in its path or query), never the raw URL. */
export interface SyncLogEntry {
  event: 'feed_sync';
  tenant: string;
  feed: string;
  url: string;
  outcome: FeedSyncOutcome;
  ranges?: number;
  error?: { code: string; message: string };
  /** Whether the result bumped the tenant's revision (serving processes reload it; its cached offers are dropped). */
  revision_bumped?: boolean;
  next_due_at?: string | null;
  latency_ms: number;
}

export interface SyncWorkerOptions {
  store: PlatformStore;
  /** Time between successful syncs of a feed. Default 15 min (as `vrp node serve --sync-interval`). */
  intervalMs?: number;
  /** Feeds in flight at once in this worker. */
  concurrency?: number;
  /** Fetches in flight at once per remote host name, in this worker. */
  perHost?: number;
  /** How long a claim holds a feed; a dead worker's feeds are free again after it. */
  leaseMs?: number;
  /** Sync what is due now and return (cron, tests), instead of running until `stop()`. */
  once?: boolean;
  /** Extra trusted CA certificates (PEM) for https feeds, beside the system roots. */
  ca?: string[];
  /**
   * Fetch feeds from loopback, private and link-local addresses too (`--allow-private-feeds`):
   * for an operator whose tenants' feeds are all trusted, and for tests with feed servers on
   * 127.0.0.1. Off by default: a tenant's feed URL must not reach the operator's own network.
   */
  allowPrivateFeeds?: boolean;
  /** This worker's lease owner id (default: host name, pid and a random suffix). */
  owner?: string;
  metrics?: SyncMetrics;
  log?: (e: SyncLogEntry) => void;
  /** A failure outside any feed (the database unreachable); the worker keeps going. */
  onError?: (e: unknown) => void;
  random?: () => number;
}

export interface SyncTotals {
  ok: number;
  failed: number;
  lease_lost: number;
  released: number;
}

export interface SyncWorker {
  owner: string;
  /** Resolves when the worker has stopped (with `once`, when nothing it could claim is due). */
  done: Promise<SyncTotals>;
  /** Claim nothing more, let the feeds in flight finish, and resolve with the totals. */
  stop(): Promise<SyncTotals>;
}

/** A per-key counting semaphore: at most `limit` holders per key; waiters are served in order. */
function keyedLimit(limit: number) {
  const busy = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();
  return {
    async acquire(key: string): Promise<void> {
      if ((busy.get(key) ?? 0) < limit) {
        busy.set(key, (busy.get(key) ?? 0) + 1);
        return;
      }
      await new Promise<void>((resolve) => waiting.set(key, [...(waiting.get(key) ?? []), resolve]));
    },
    release(key: string): void {
      const next = waiting.get(key)?.shift();
      if (next) {
        next(); // the slot passes straight to the next waiter
        return;
      }
      waiting.delete(key);
      const n = (busy.get(key) ?? 1) - 1;
      if (n === 0) busy.delete(key);
      else busy.set(key, n);
    },
  };
}

/** A whole number ≥ `min`, else `invalid_sync_option` saying so (`unit` for durations, given in ms). */
function atLeast(name: string, v: number, min: number, unit: 'ms' | '' = ''): number {
  if (!Number.isInteger(v) || v < min)
    throw new PlatformError('invalid_sync_option', { option: name, rule: unit ? `at least ${min / 1000}s` : `a whole number from ${min}` });
  return v;
}

/** What every feed sync of one worker shares: its settings, its lease owner id, its per-host limit and its https agent. */
interface WorkerContext {
  o: SyncWorkerOptions;
  store: PlatformStore;
  owner: string;
  intervalMs: number;
  /** A fetch's deadline: at most half the lease, so a fetch always ends while the lease holds. */
  timeoutMs: number;
  hosts: ReturnType<typeof keyedLimit>;
  /** One agent for the worker's fetches (no keep-alive: a feed is fetched once an interval); none with `allowPrivateFeeds`. */
  agent: PublicFeedAgent | undefined;
}

/** Sync one claimed feed under its lease (or give it back when the lease would end mid-fetch); the log entry says what happened. */
async function syncClaimed(w: WorkerContext, f: ClaimedFeed): Promise<Omit<SyncLogEntry, 'latency_ms'>> {
  let host = '';
  try {
    host = new URL(f.url).hostname;
  } catch {
    // syncFeed refuses the URL and records why; one shared slot for unparseable URLs
  }
  await w.hosts.acquire(host);
  try {
    const base = { event: 'feed_sync' as const, tenant: f.domain, feed: f.name, url: feedUrlForMessages(f.url) };
    if (w.store.clock.now() + w.timeoutMs > f.leaseUntil) {
      // Waited so long for a host slot that the lease would end mid-fetch: give it back rather than risk two fetchers.
      await releaseFeed(w.store, w.owner, f);
      return { ...base, outcome: 'released' };
    }
    const rec = leasedRecorder(w.store, w.owner, f, w.intervalMs, w.o.random);
    const r = await syncFeed(rec, f.property, { name: f.name, url: f.url, file: null }, w.store.clock.now(), {
      timeoutMs: w.timeoutMs,
      ...(w.o.ca ? { ca: w.o.ca } : {}),
      ...(w.agent ? { agent: w.agent } : {}),
    });
    return {
      ...base,
      outcome: rec.lost ? 'lease_lost' : r.ok ? 'ok' : 'failed',
      ...(r.ok ? { ranges: r.ranges } : { error: r.error }),
      revision_bumped: rec.bumped,
      next_due_at: rec.nextDueAt,
    };
  } finally {
    w.hosts.release(host);
  }
}

/** A sleep the loop can cut short (`wake`): a finished feed frees a slot, `stop` ends the wait. */
function napper() {
  let wake: (() => void) | undefined;
  return {
    nap: (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      }),
    wake: () => wake?.(),
  };
}

/** One synced feed counted, measured and logged. */
function record(o: SyncWorkerOptions, totals: SyncTotals, entry: Omit<SyncLogEntry, 'latency_ms'>, started: number): void {
  totals[entry.outcome]++;
  o.metrics?.fetches.inc({ outcome: entry.outcome });
  if (entry.outcome === 'failed') o.metrics?.failures.inc();
  o.log?.({ ...entry, latency_ms: Date.now() - started });
}

export function startSyncWorker(o: SyncWorkerOptions): SyncWorker {
  const intervalMs = atLeast('--interval', o.intervalMs ?? DEFAULT_SYNC_INTERVAL_MS, 1000, 'ms');
  const concurrency = atLeast('--concurrency', o.concurrency ?? DEFAULT_SYNC_CONCURRENCY, 1);
  const perHost = atLeast('--per-host', o.perHost ?? DEFAULT_SYNC_PER_HOST, 1);
  const leaseMs = atLeast('--lease', o.leaseMs ?? DEFAULT_SYNC_LEASE_MS, MIN_SYNC_LEASE_MS, 'ms');
  const w: WorkerContext = {
    o,
    store: o.store,
    owner: o.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    intervalMs,
    timeoutMs: Math.min(MAX_FETCH_TIMEOUT_MS, Math.floor(leaseMs / 2)),
    hosts: keyedLimit(perHost),
    agent: o.allowPrivateFeeds ? undefined : new PublicFeedAgent(),
  };
  const claimBatch = Math.ceil(concurrency / 4);
  const totals: SyncTotals = { ok: 0, failed: 0, lease_lost: 0, released: 0 };
  const sleep = napper();
  let inFlight = 0;
  let stopped = false;
  const start = (f: ClaimedFeed) => {
    const started = Date.now();
    inFlight++;
    void syncClaimed(w, f)
      .then((entry) => record(o, totals, entry, started))
      .catch((e: unknown) => o.onError?.(e))
      .finally(() => {
        inFlight--;
        sleep.wake();
      });
  };

  const loop = async (): Promise<SyncTotals> => {
    while (!stopped) {
      const free = concurrency - inFlight;
      let claimed: ClaimedFeed[] = [];
      // Claim in batches of at least a quarter of the slots: one claim transaction serves several feeds.
      if (free >= claimBatch || (free > 0 && inFlight === 0)) {
        claimed = await claimDueFeeds(w.store, w.owner, free, leaseMs).catch((e: unknown) => {
          o.onError?.(e);
          return [];
        });
        claimed.forEach(start);
      }
      if (o.once && claimed.length === 0 && inFlight === 0) break;
      // Wait for slots to free (each finished feed wakes the loop) or, when nothing was due, the next poll.
      await sleep.nap(POLL_MS);
    }
    while (inFlight > 0) await sleep.nap(POLL_MS);
    w.agent?.destroy();
    return totals;
  };
  const done = loop();
  return {
    owner: w.owner,
    done,
    stop() {
      stopped = true;
      sleep.wake();
      return done;
    },
  };
}
