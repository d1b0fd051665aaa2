/**
 * Platform metrics (Prometheus text format, prom-client) and the admin listener that serves them
 * with `/healthz` and `/readyz`, on its own address (`--admin-listen 127.0.0.1:PORT`), never on
 * the public listener. Labels are bounded: a surface name, a status class, a reason; never a
 * domain, a query or anything a client sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HEALTHZ_PATH, READYZ_PATH } from '@vrpkit/node';
import { NODE_PATHS, UCP_CONTINUE_PATH, UCP_REST_BASE_PATH } from '@vrpkit/protocol';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { PlatformError } from './errors.js';
import type { PlatformStore } from './tenants.js';

/** Every resource a node serves, by path, to its name (protocol's `NODE_PATHS`: a bounded label set). */
const SURFACES: Record<string, string> = Object.fromEntries(Object.entries(NODE_PATHS).map(([name, path]) => [path, name]));

/** The surface a request path belongs to (a fixed set, so label cardinality stays bounded): a UCP session's or guest page's path is `ucp`, whatever its id. */
export const surfaceOf = (path: string): string =>
  SURFACES[path] ?? (path.startsWith(`${UCP_REST_BASE_PATH}/`) || path.startsWith(`${UCP_CONTINUE_PATH}/`) ? 'ucp' : 'other');

export class PlatformMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'vrp_platform_requests_total',
    help: 'Requests served to tenants, by surface and status class',
    labelNames: ['surface', 'status'] as const,
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: 'vrp_platform_request_errors_total',
    help: 'Tenant requests answered with a 5xx, by surface',
    labelNames: ['surface'] as const,
    registers: [this.registry],
  });
  readonly offers = new Counter({
    name: 'vrp_platform_offers_served_total',
    help: 'Signed offers served (offer endpoint 200s; a rate of this is offers per second)',
    registers: [this.registry],
  });
  readonly misdirected = new Counter({
    name: 'vrp_platform_misdirected_total',
    help: 'Requests answered 421 (unknown host, or a host of another tenant than the TLS name)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly cache = new Counter({
    name: 'vrp_platform_tenant_cache_total',
    help: 'Tenant lookups by the router: hit (already loaded) or miss (loaded from the database)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  /** Seconds to answer a tenant request (the console plots its p50 and p99 from the bucket counts, as `histogram_quantile` does). */
  readonly latency = new Histogram({
    name: 'vrp_platform_request_duration_seconds',
    help: 'Seconds to answer a tenant request (all surfaces)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  constructor(store: PlatformStore, loaded: () => number) {
    new Gauge({
      name: 'vrp_platform_tenants_loaded',
      help: 'Tenants loaded in this process',
      registers: [this.registry],
      collect() {
        this.set(loaded());
      },
    });
    new Gauge({
      name: 'vrp_platform_tenants',
      help: 'Tenants in the database, by status',
      labelNames: ['status'] as const,
      registers: [this.registry],
      aggregator: 'first', // a database count: the same in every worker
      async collect() {
        for (const status of ['active', 'disabled'] as const) this.set({ status }, await store.countTenants(status));
      },
    });
    new Gauge({
      name: 'vrp_platform_signing_key_age_seconds',
      help: 'Age of the signing keys of enabled tenants: oldest and newest',
      labelNames: ['which'] as const,
      registers: [this.registry],
      aggregator: 'first', // read from the database: the same in every worker
      async collect() {
        const ages = await store.signingKeyAges();
        if (ages) {
          this.set({ which: 'oldest' }, ages.oldestSeconds);
          this.set({ which: 'newest' }, ages.newestSeconds);
        }
      },
    });
  }

  observe(path: string, status: number, latencyMs?: number): void {
    const surface = surfaceOf(path);
    if (latencyMs !== undefined) this.latency.observe(latencyMs / 1000);
    this.requests.inc({ surface, status: `${Math.floor(status / 100)}xx` });
    if (status >= 500) this.errors.inc({ surface });
    if (surface === 'offer' && status === 200) this.offers.inc();
  }
}

/** Sync worker metrics (`vrp platform sync-worker --admin-listen`): its own registry, as a worker serves no tenant. */
export class SyncMetrics {
  readonly registry = new Registry();
  readonly fetches = new Counter({
    name: 'vrp_platform_feed_fetches_total',
    help: 'Feeds this worker claimed, by outcome: ok, failed, lease_lost (another worker took the feed over), released (given back unfetched)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly failures = new Counter({
    name: 'vrp_platform_feed_sync_failures_total',
    help: 'Feed syncs that failed (the tenant is non-quoteable until the feed next succeeds)',
    registers: [this.registry],
  });

  constructor(lagSeconds: () => Promise<number>) {
    new Gauge({
      name: 'vrp_platform_feed_sync_lag_seconds',
      help: 'Seconds since the most overdue feed fell due (0 when none is): how far the sync workers lag behind',
      registers: [this.registry],
      async collect() {
        this.set(await lagSeconds());
      },
    });
  }
}

/** `--admin-listen HOST:PORT`: a loopback or private address only (the metrics name no tenant, but they are the operator's). */
export function parseAdminListen(v: string): { host: string; port: number } {
  const m = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|10\.\d{1,3}\.\d{1,3}\.\d{1,3}|192\.168\.\d{1,3}\.\d{1,3}|localhost|\[::1\]):(\d{1,5})$/.exec(
    v,
  );
  if (!m || Number(m[2]) > 65535) throw new PlatformError('invalid_admin_listen');
  return { host: m[1] === '[::1]' ? '::1' : m[1]!, port: Number(m[2]) };
}

export interface AdminListener {
  address: string;
  port: number;
  close(): Promise<void>;
}

/** The admin listener: `/metrics` (Prometheus text: a registry, or the sum over `--workers`), `/healthz` (alive) and `/readyz` (database reachable, master key the platform's). */
export async function startAdminListener(
  listen: { host: string; port: number },
  metrics: { contentType: string; metrics(): Promise<string> },
  ready: () => Promise<boolean>,
): Promise<AdminListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET') return reply(405, 'application/json', '{"error":{"code":"method_not_allowed","message":"use GET"}}');
    if (path === '/metrics')
      return void metrics.metrics().then(
        (text) => reply(200, metrics.contentType, text),
        () => reply(503, 'application/json', '{"error":{"code":"metrics_unavailable","message":"a collector failed"}}'),
      );
    if (path === HEALTHZ_PATH) return reply(200, 'application/json', '{"status":"ok"}');
    if (path === READYZ_PATH)
      return void ready().then(
        (ok) => reply(ok ? 200 : 503, 'application/json', JSON.stringify({ ready: ok })),
        () => reply(503, 'application/json', '{"ready":false}'),
      );
    reply(404, 'application/json', '{"error":{"code":"not_found","message":"no such resource"}}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new PlatformError('listen_failed', { address: 'the admin address', reason: e.code ?? e.message })),
    );
    server.listen(listen.port, listen.host);
  });
  const addr = server.address() as AddressInfo;
  return {
    address: addr.address,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ── serving at scale: signatures, TLS contexts, the shared offer cache ──────────────────────

/**
 * What the shared serving path adds (platform spec item 6): Ed25519 signatures made, a counter
 * (signatures per second is `rate(vrp_platform_signatures_total[1m])`), the TLS contexts held
 * and created (a rate of creations well above the new tenants' says the context bound is too
 * small for the names handshaking), and the lookups of the one signed-offer cache every tenant
 * shares, by result.
 */
export class ScaleMetrics {
  readonly signatures: Counter;

  constructor(
    registry: Registry,
    offerCache: { hits: number; misses: number; bytes: number } | null,
    tls: { held(): number; created(): number },
  ) {
    this.signatures = new Counter({
      name: 'vrp_platform_signatures_total',
      help: 'Ed25519 signatures made for tenants (offers and MCP receipts); rate() of it is signatures per second',
      registers: [registry],
    });
    new Counter({
      name: 'vrp_platform_offer_cache_total',
      help: 'Signed-offer cache lookups (one cache shared by every tenant), by result: hit or miss',
      labelNames: ['result'] as const,
      registers: [registry],
      collect() {
        // The cache counts; this reports its totals (a counter read at scrape time, never reset).
        this.reset();
        this.inc({ result: 'hit' }, offerCache?.hits ?? 0);
        this.inc({ result: 'miss' }, offerCache?.misses ?? 0);
      },
    });
    new Gauge({
      name: 'vrp_platform_tls_contexts',
      help: 'TLS contexts held (one per certificate in use; bounded by an LRU, a wildcard certificate is one for all its names)',
      registers: [registry],
      collect() {
        this.set(tls.held());
      },
    });
    new Counter({
      name: 'vrp_platform_tls_contexts_created_total',
      help: 'TLS contexts created: a name whose context was evicted from the LRU makes one again at its next handshake',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(tls.created());
      },
    });
    new Gauge({
      name: 'vrp_platform_offer_cache_bytes',
      help: 'Estimated bytes the shared signed-offer cache holds (bounded by its byte cap; 0 when off)',
      registers: [registry],
      collect() {
        this.set(offerCache?.bytes ?? 0);
      },
    });
  }
}
