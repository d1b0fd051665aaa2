/**
 * Background calendar sync for `vrp node serve --sync-interval`: the serving node imports its
 * iCal feeds itself, so a host needs no cron job. Each feed is synced on its own schedule:
 * every interval after a success; after a failure sooner, backing off exponentially up to the
 * interval (a failed feed makes the calendar unsafe until its next success, so a brief outage
 * should not cost a whole interval, and a feed that stays down is not fetched in a tight loop).
 * Every wait is jittered, so nodes started together do not fetch one channel's feeds in step.
 * Freshness rules are unchanged: a feed that fails or goes stale still fails closed.
 */
import { type Clock, systemClock } from '@vrpkit/core';
import type { NodeStoreOptions } from './admin/store.js';
import { storeTargetFor } from './datadir.js';
import { NodeError } from './errors.js';
import { type FeedFetchOptions, type FeedSyncResult, syncFeed } from './ical.js';
import { NodeStore } from './store/store.js';

/** `--sync-interval` default: a quarter of an hour, well inside the default 180-minute calendar age. */
export const DEFAULT_SYNC_INTERVAL_MS = 15 * 60_000;
/** The first retry after a failure waits this fraction of the interval; each further failure doubles it. */
const FIRST_RETRY_FRACTION = 1 / 16;
/** A wait is shortened by up to this fraction, at random. */
const JITTER = 0.2;
/** No wait is shorter than this, however short the interval. */
const MIN_WAIT_MS = 100;

/**
 * How long a feed waits before its next sync, after `failures` failures in a row (0 = the last
 * sync succeeded): the interval, or a retry delay doubling from 1/16 of it up to the interval;
 * jittered down by up to 20 % (`random` in [0, 1)).
 */
export function nextSyncDelayMs(failures: number, intervalMs: number, random: () => number = Math.random): number {
  const base = failures === 0 ? intervalMs : Math.min(intervalMs, intervalMs * FIRST_RETRY_FRACTION * 2 ** (failures - 1));
  return Math.max(MIN_WAIT_MS, Math.round(base * (1 - JITTER * random())));
}

export interface CalendarSyncOptions extends FeedFetchOptions {
  /** Time between successful syncs of a feed (ms, > 0). */
  intervalMs: number;
  /** The node's clock (epoch ms) for the recorded sync times; scheduling uses real time. */
  clock?: Clock;
  /** Every sync's result (default: a failure is one `error[code]: …` line on stderr). */
  onResult?: (result: FeedSyncResult) => void;
  /** A failure outside any feed (the store unreachable); the loop keeps running. */
  onError?: (error: unknown) => void;
  random?: () => number;
}

export interface CalendarSync {
  /** Stop scheduling and wait for a sync in progress to finish. */
  stop(): Promise<void>;
  /** When the feed `name` is next due (the node's clock, epoch ms); undefined before its first sync in this loop. */
  nextSyncAt?(name: string): number | undefined;
}

function reportFailedSync(r: FeedSyncResult): void {
  if (!r.ok) process.stderr.write(`error[${r.error?.code}]: calendar feed ${r.name}: ${r.error?.message}\n`);
}

/** Sync the store's feeds in the background until `stop()`; the first pass starts at once. */
export function startCalendarSync(store: NodeStore, o: CalendarSyncOptions): CalendarSync {
  if (!Number.isFinite(o.intervalMs) || o.intervalMs <= 0) throw new NodeError('invalid_sync_interval');
  const clock = o.clock ?? systemClock;
  const onResult = o.onResult ?? reportFailedSync;
  /** Per feed name: failures in a row and when (real time) it is due. */
  const due = new Map<string, { failures: number; at: number }>();
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> | undefined;
  let stopped = false;

  const runPass = async () => {
    try {
      const [p, feeds] = await Promise.all([store.property(), store.feeds()]);
      for (const name of due.keys()) if (!feeds.some((f) => f.name === name)) due.delete(name);
      for (const feed of feeds) {
        if (stopped) return;
        const state = due.get(feed.name) ?? { failures: 0, at: 0 };
        if (state.at > Date.now()) continue;
        const r = await syncFeed(store, p, feed, clock.now(), o);
        state.failures = r.ok ? 0 : state.failures + 1;
        state.at = Date.now() + nextSyncDelayMs(state.failures, o.intervalMs, o.random);
        due.set(feed.name, state);
        onResult(r);
      }
    } catch (e) {
      o.onError?.(e);
    }
  };
  const schedule = () => {
    if (stopped) return;
    // Wake for the earliest due feed, and at least once an interval to pick up feeds added meanwhile.
    const earliest = Math.min(Date.now() + o.intervalMs, ...[...due.values()].map((s) => s.at));
    timer = setTimeout(
      () => {
        pass = runPass().then(schedule);
      },
      Math.max(MIN_WAIT_MS, earliest - Date.now()),
    );
    timer.unref();
  };
  pass = runPass().then(schedule);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
    // Scheduling runs on real time; the answer is on the node's clock, as the feeds' recorded times are.
    nextSyncAt: (name) => {
      const state = due.get(name);
      return state && !stopped ? clock.now() + Math.max(0, state.at - Date.now()) : undefined;
    },
  };
}

/**
 * Background sync over its own store connection, for a process that serves nothing itself:
 * the primary of `vrp node serve --workers N`, so one process per node syncs, not N.
 */
export async function startNodeCalendarSync(o: NodeStoreOptions & CalendarSyncOptions): Promise<CalendarSync> {
  const store = await NodeStore.open(storeTargetFor(o.dataDir, o.databaseUrl));
  let sync: CalendarSync;
  try {
    sync = startCalendarSync(store, o);
  } catch (e) {
    await store.close();
    throw e;
  }
  return {
    async stop() {
      await sync.stop();
      await store.close();
    },
  };
}
