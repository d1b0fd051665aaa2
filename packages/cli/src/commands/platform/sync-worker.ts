/**
 * `vrp platform sync-worker`: import the tenants' iCal feeds, leased from the database so any
 * number of workers on any number of machines never fetch one twice at once.
 */

import { readFileSync } from 'node:fs';
import { visibleEscapes } from '@vrpkit/core';
import { DEFAULT_SYNC_INTERVAL_MS } from '@vrpkit/node';
import {
  DEFAULT_SYNC_CONCURRENCY,
  DEFAULT_SYNC_LEASE_MS,
  DEFAULT_SYNC_PER_HOST,
  MIN_SYNC_LEASE_MS,
  type PlatformStore,
  type SyncLogEntry,
  SyncMetrics,
  startAdminListener,
  startSyncWorker,
  syncLagSeconds,
} from '@vrpkit/platform';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { printEvent, reportError, run } from '../../io.js';
import { positiveInt } from '../../options.js';
import { adminListen, duration, type PlatformOptions, platformOptions, withStore } from './options.js';

interface SyncWorkerOptions extends PlatformOptions {
  interval: number;
  concurrency: number;
  perHost: number;
  lease: number;
  once?: boolean;
  feedCa?: string;
  allowPrivateFeeds?: boolean;
  adminListen?: { host: string; port: number };
}

/** A `--lease` duration: at least MIN_SYNC_LEASE_MS, checked before anything is opened. */
function lease(v: string): number {
  const ms = duration(v);
  if (ms < MIN_SYNC_LEASE_MS) throw new InvalidArgumentError(`at least ${MIN_SYNC_LEASE_MS / 1000}s`);
  return ms;
}

/** Sync log sink: every feed as a JSON line on stdout with --json (a feed URL as its origin and a digest), else failures only on stderr. */
function syncLogger(json: boolean): (e: SyncLogEntry) => void {
  if (json) return (e) => printEvent({ ...e });
  return (e) => {
    if (e.outcome === 'failed')
      process.stderr.write(`error[${e.error?.code}]: ${e.tenant} feed ${e.feed}: ${visibleEscapes(e.error?.message ?? '')}\n`);
  };
}

function syncWorkerCommandOptions(c: Command): Command {
  return c
    .addOption(
      new Option('--interval <duration>', 'time between successful syncs of a feed; a failed feed is retried sooner, backing off')
        .argParser(duration)
        .default(DEFAULT_SYNC_INTERVAL_MS, '15m'),
    )
    .option('--concurrency <n>', 'feeds in flight at once in this worker', positiveInt, DEFAULT_SYNC_CONCURRENCY)
    .option(
      '--per-host <n>',
      'fetches in flight at once per feed host, in this worker (not across workers: W workers make at most W × N)',
      positiveInt,
      DEFAULT_SYNC_PER_HOST,
    )
    .addOption(
      new Option('--lease <duration>', 'how long a claim holds a feed, at least 2s (a fetch gets at most half of it, 10 s at most)')
        .argParser(lease)
        .default(DEFAULT_SYNC_LEASE_MS, '60s'),
    )
    .option('--once', 'sync the feeds due now, then exit (status 1 if any failed)')
    .option('--feed-ca <file>', 'extra trusted CA certificate (PEM) for https feeds, beside the system roots')
    .option(
      '--allow-private-feeds',
      "also fetch feeds from loopback, private and link-local addresses (refused by default: a tenant's feed URL must not reach your network)",
    )
    .option(
      '--admin-listen <host:port>',
      'serve /metrics (Prometheus) and /healthz over plain http on this loopback or private address',
      adminListen,
    );
}

/** Run the worker on an open store until it is done (`--once`) or stopped (SIGINT/SIGTERM). */
async function syncFeeds(o: SyncWorkerOptions, store: PlatformStore, ca: string[] | undefined): Promise<void> {
  const metrics = new SyncMetrics(() => syncLagSeconds(store));
  const worker = startSyncWorker({
    store,
    intervalMs: o.interval,
    concurrency: o.concurrency,
    perHost: o.perHost,
    leaseMs: o.lease,
    once: !!o.once,
    ...(ca ? { ca } : {}),
    allowPrivateFeeds: !!o.allowPrivateFeeds,
    metrics,
    log: syncLogger(!!o.json),
    onError: (e) => reportError(e, !!o.json),
  });
  const stop = () => void worker.stop();
  process.once('SIGINT', stop).once('SIGTERM', stop);
  try {
    const admin = o.adminListen
      ? await startAdminListener(o.adminListen, metrics.registry, () => store.info().then(() => true))
      : undefined;
    if (o.json)
      printEvent({
        event: 'started',
        owner: worker.owner,
        admin_port: admin?.port ?? null,
        pid: process.pid,
        allow_private_feeds: !!o.allowPrivateFeeds,
      });
    // Said once, at start: the feed address policy is off for this worker.
    if (o.allowPrivateFeeds)
      process.stderr.write('warning: --allow-private-feeds: feeds may be fetched from loopback, private and link-local addresses\n');
    const totals = await worker.done.finally(() => admin?.close());
    if (o.json) printEvent({ event: 'stopped', ...totals });
    else process.stdout.write(`synced ${totals.ok} feeds, ${totals.failed} failed\n`);
    if (o.once && totals.failed > 0) process.exitCode = 1;
  } finally {
    await worker.stop();
    process.off('SIGINT', stop).off('SIGTERM', stop);
  }
}

/** `vrp platform sync-worker`. */
export function registerSyncWorker(platform: Command): void {
  const command = platform
    .command('sync-worker')
    .description(
      "import the tenants' iCal feeds; run any number of workers on any number of machines (feeds are leased from the database, " +
        "none is fetched twice at once, a killed worker's feeds are taken over when its leases expire)",
    );
  platformOptions(syncWorkerCommandOptions(command)).action((o: SyncWorkerOptions) =>
    run(o.json, async () => {
      const ca = o.feedCa ? [readFileSync(o.feedCa, 'utf8')] : undefined;
      await withStore(o, (store) => syncFeeds(o, store, ca));
    }),
  );
}
