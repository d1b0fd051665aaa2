/**
 * `vrp platform serve`: one https listener for every tenant. The TLS certificate is chosen by SNI
 * (certificates.ts), the tenant by the `Host` header; a request whose Host is no enabled tenant's
 * domain (or a subdomain of one), or whose Host names another tenant than the TLS connection
 * did, gets 421 Misdirected Request (RFC 9110 §15.5.20) and no tenant data. Tenants load lazily
 * into a bounded LRU cache (tenant-router.ts), so memory follows the tenants recently served.
 * One node app (`createNodeApp`) serves every tenant: the router passes the request's tenant
 * with it, so routes and surface handlers exist once per process and a loaded tenant holds only
 * its own state (tenant-node.ts); signed offers share one byte-bounded cache keyed by domain.
 * Every request confirms its tenant's state in its own turn (tenant-node.ts `TenantSource.liveNow`),
 * so a disabled tenant is gone from every process by the time `disable` returns and a rotation or
 * revocation is seen by then.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SecureContext, TLSSocket } from 'node:tls';
import { type HttpBindings, serve } from '@hono/node-server';
import { type Clock, type Drain, isVrpError } from '@vrpkit/core';
import {
  checkConnectionCap,
  consoleScheme,
  createNodeApp,
  createOfferCache,
  DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
  listenWithLimits,
  type OfferCache,
  type RequestLogEntry,
  requestHostName,
  SERVER_LIMITS,
  shutdownGraceMs,
  storeUnavailableResponse,
} from '@vrpkit/node';
import { isConnectionLoss } from '@vrpkit/sql';
import { type CertificateSource, type CertificateStore, DEFAULT_TLS_CONTEXT_CACHE_SIZE, openCertificateStore } from './certificates.js';
import { type OperatorConsoleListen, type ServedOperatorConsole, startOperatorConsole } from './console/serve.js';
import { errorBody, PLATFORM_CODES, PlatformError } from './errors.js';
import { formSecretOf, type MasterKey } from './master-key.js';
import { type AdminListener, PlatformMetrics, ScaleMetrics, startAdminListener } from './metrics.js';
import { createOperatorApp } from './operator.js';
import type { GuestMailOptions, TenantDeskOptions, TenantNode } from './tenant-node.js';
import { createTenantRouter, type TenantRoute, type TenantRouter } from './tenant-router.js';
import { TenantWatch } from './tenant-watch.js';
import type { PlatformStore } from './tenants.js';

/** What the shared app receives with a request: the server's bindings and the tenant the router chose. */
type TenantBindings = HttpBindings & { tenant: TenantNode };

/**
 * Default bound on tenants held loaded per process (about 12 KB of heap each: some 12 MB at the
 * default; docs/platform.md). TLS contexts have their own, smaller bound
 * (`DEFAULT_TLS_CONTEXT_CACHE_SIZE`): a context is needed only at a handshake.
 */
export const DEFAULT_TENANT_CACHE_SIZE = 1000;

/**
 * Default idle keep-alive (ms): 65 s, above the 60 s idle timeout common load balancers and
 * agents keep, so the server is not the side that closes a connection the client is about to
 * reuse. Over many names at low rate each name's connection idles between requests; the node's
 * 5 s made most such requests pay a new TLS handshake. An idle TLS connection costs memory
 * (about 25 KB of RSS each, docs/platform.md), which the connection caps bound.
 */
export const DEFAULT_PLATFORM_KEEP_ALIVE_MS = 65_000;

/**
 * Default per-client connection cap: an agent keeps one connection per tenant name it talks
 * to, so a client reaching many tenants holds many; far below what exhausts memory.
 */
export const DEFAULT_PLATFORM_MAX_CONNECTIONS_PER_CLIENT = 256;

/** Default cap on open connections in all (some 250 MB of idle TLS connections at most). */
export const DEFAULT_PLATFORM_MAX_CONNECTIONS = 10_000;

export type PlatformLogEntry =
  | (RequestLogEntry & { tenant: string })
  | { event: 'misdirected'; reason: 'unknown_host' | 'sni_mismatch'; status: 421 };

export interface ServePlatformOptions {
  store: PlatformStore;
  /** Current master key first; a previous one while a master-key rotation runs. */
  masterKeys: readonly MasterKey[];
  tls: CertificateSource;
  host?: string;
  port?: number;
  clock?: Clock;
  tenantCacheSize?: number;
  /** Most TLS contexts held (default `DEFAULT_TLS_CONTEXT_CACHE_SIZE`); names under one wildcard certificate share one. */
  tlsContextCacheSize?: number;
  offerCacheMaxAgeSeconds?: number;
  /** Memory bound of the signed-offer cache every tenant shares (default 64 MiB). */
  offerCacheMaxBytes?: number;
  /** `--keep-alive`: ms an idle connection is kept open (default `DEFAULT_PLATFORM_KEEP_ALIVE_MS`). */
  keepAliveMs?: number;
  /** Most simultaneous connections from one client address (default `DEFAULT_PLATFORM_MAX_CONNECTIONS_PER_CLIENT`); closed at accept past it. */
  maxConnectionsPerClient?: number;
  /** Most simultaneous connections in all (default `DEFAULT_PLATFORM_MAX_CONNECTIONS`); refused at accept past it. */
  maxConnections?: number;
  log?: (e: PlatformLogEntry) => void;
  onError?: (e: unknown) => void;
  /** Serve `/metrics`, `/healthz` and `/readyz` on this loopback or private address (plain http). */
  adminListen?: { host: string; port: number };
  /** `--console`: the operator console on a listener of its own (console/serve.ts; one process: its sessions are in memory). */
  console?: OperatorConsoleListen;
  /** `--shutdown-grace`: on `close`, seconds the requests in flight may take to finish (default `DEFAULT_SHUTDOWN_GRACE_SECONDS`). */
  shutdownGraceSeconds?: number;
  /**
   * `--smtp-url`, `--mail-from` (default `bookings@{tenant domain}`), `--smtp-ca`: the transport every
   * tenant's UCP guest page mails its one-time codes by. Without it sessions are created and read,
   * but no guest can confirm one (as on a node).
   */
  guestMail?: GuestMailOptions;
  /** Each tenant's booking desk limits (`--hold-hours`, `--booking-rate-limit`, `--booking-holds-per-day`; the node's defaults). */
  bookings?: TenantDeskOptions;
}

export interface ServedPlatform {
  address: string;
  port: number;
  caFile?: string;
  caPem?: string;
  /** Tenants currently loaded in this process. */
  loadedTenants(): number;
  /** TLS contexts held (one per certificate in use: a wildcard one serves many names). */
  tlsContexts(): number;
  /** TLS contexts created since start (a name whose context was evicted makes one again at its next handshake). */
  tlsContextsCreated(): number;
  /** Connections open now (kept-alive idle ones included): what clients hold, apart from tenant memory. */
  openConnections(): Promise<number>;
  /** Estimated bytes held by the shared signed-offer cache (0 when it is off). */
  offerCacheBytes(): number;
  metrics: PlatformMetrics;
  /** The admin listener's address, with `adminListen`. */
  admin?: { address: string; port: number };
  /** With `console`: where the operator console listens. */
  console?: { origin: string; address: string; port: number };
  close(): Promise<void>;
}

/** The master key record every serving process checks first: any of the keys may be it (during a rotation servers hold both). */
export async function checkServingKeys(store: PlatformStore, masterKeys: readonly MasterKey[]) {
  const info = await store.info();
  if (!masterKeys.some((k) => k.id === info.master_key_id)) throw new PlatformError('master_key_mismatch', { given: 'any of those given' });
  return info;
}

/** The connection limits of the listener, each checked before anything listens. */
function connectionLimits(o: ServePlatformOptions) {
  const keepAliveMs = o.keepAliveMs ?? DEFAULT_PLATFORM_KEEP_ALIVE_MS;
  if (!Number.isInteger(keepAliveMs) || keepAliveMs < 1000 || keepAliveMs > 3_600_000) throw new PlatformError('invalid_keep_alive');
  return {
    keepAliveMs,
    maxPerClient: checkConnectionCap(o.maxConnectionsPerClient ?? DEFAULT_PLATFORM_MAX_CONNECTIONS_PER_CLIENT),
    maxConnections: checkConnectionCap(o.maxConnections ?? DEFAULT_PLATFORM_MAX_CONNECTIONS),
  };
}

/** The default error sink: `error[code]: message` on stderr. */
function logError(e: unknown): void {
  const code = isConnectionLoss(e) ? 'store_unavailable' : isVrpError(e) ? e.code : 'internal_error';
  process.stderr.write(`error[${code}]: ${e instanceof Error ? e.message : String(e)}\n`);
}

const inTenant = (name: string, domain: string) => name === domain || name.endsWith(`.${domain}`);

const jsonAnswer = (code: 'misdirected_request' | 'internal_error', headers: Record<string, string> = {}) =>
  new Response(errorBody(code), { status: PLATFORM_CODES[code].status, headers: { 'content-type': 'application/json', ...headers } });

interface Router {
  tenants: TenantRouter;
  /** The node app every tenant is served by. */
  app: { fetch(req: Request, env: TenantBindings): Response | Promise<Response> };
  operator: { domain: string; app: { fetch(req: Request, env: HttpBindings): Response | Promise<Response> } } | undefined;
  misdirected(reason: 'unknown_host' | 'sni_mismatch'): Response;
  onError(e: unknown): void;
}

/**
 * The listener's one fetch: the operator's domain to its surface, every other Host to the enabled
 * tenant serving it (421 for none, or for a tenant other than the TLS connection's name).
 */
function platformFetch(r: Router): (req: Request, env: HttpBindings) => Response | Promise<Response> {
  const dispatch = ({ node, state }: TenantRoute, req: Request, env: HttpBindings, servername: unknown) => {
    // A connection opened for one tenant's name must not carry another tenant's requests (connection reuse across names).
    if (typeof servername === 'string' && !inTenant(servername.toLowerCase(), node.domain)) return r.misdirected('sni_mismatch');
    const bindings: TenantBindings = { ...env, tenant: node };
    return node.source.during(state, () => r.app.fetch(req, bindings));
  };
  const routeThenDispatch = async (host: string, req: Request, env: HttpBindings, servername: unknown): Promise<Response> => {
    let routed: TenantRoute | undefined;
    try {
      routed = await r.tenants.route(host);
    } catch (e) {
      r.onError(e);
      // The tenant's head could not be read: its store is away (issue 36 defect 1), or a bug.
      return isConnectionLoss(e) ? storeUnavailableResponse() : jsonAnswer('internal_error');
    }
    return routed ? dispatch(routed, req, env, servername) : r.misdirected('unknown_host');
  };
  return (req, env) => {
    const host = requestHostName(req.headers.get('host'));
    if (!host) return r.misdirected('unknown_host');
    const servername = (env.incoming.socket as TLSSocket).servername;
    if (r.operator && host === r.operator.domain) {
      if (typeof servername === 'string' && servername.toLowerCase() !== r.operator.domain) return r.misdirected('sni_mismatch');
      return r.operator.app.fetch(req, env);
    }
    const now = r.tenants.routeNow(host);
    return now ? dispatch(now, req, env, servername) : routeThenDispatch(host, req, env, servername);
  };
}

/** The https listener: certificates by SNI, the node's server limits, the connection caps; resolves once it listens. */
async function listen(
  fetch: (req: Request, env: HttpBindings) => Response | Promise<Response>,
  certs: CertificateStore,
  tenants: TenantRouter,
  at: { host: string; port: number; limits: ReturnType<typeof connectionLimits> },
  onError: (e: unknown) => void,
): Promise<{ server: Server; drain: Drain }> {
  const { limits } = at;
  const server = serve({
    fetch: fetch as (req: Request, env: unknown) => Response | Promise<Response>,
    port: at.port,
    hostname: at.host,
    createServer,
    serverOptions: {
      SNICallback: (name: string, cb: (err: Error | null, ctx?: SecureContext) => void) => {
        const servername = name.toLowerCase();
        // The tenant's one query starts now, while the handshake completes: its first request finds it open or opening.
        tenants.warm(servername);
        certs.contextFor(servername).then(
          (ctx) => cb(null, ctx),
          (e: unknown) => {
            onError(e);
            cb(e as Error);
          },
        );
      },
      handshakeTimeout: SERVER_LIMITS.handshakeTimeout,
      maxHeaderSize: SERVER_LIMITS.maxHeaderSize,
    },
  }) as Server;
  server.maxConnections = limits.maxConnections;
  // The headers timeout stays short: on Node 20 it bounds a request's head, not an idle
  // keep-alive connection (an idle connection outlives it; packages/platform/test/keep-alive.test.ts).
  const drain = await listenWithLimits(server, {
    maxPerClient: limits.maxPerClient,
    keepAliveMs: limits.keepAliveMs,
    failed: (e) => new PlatformError('listen_failed', { address: at.host, reason: e.code ?? e.message }),
  });
  return { server, drain };
}

export async function servePlatform(o: ServePlatformOptions): Promise<ServedPlatform> {
  const { store } = o;
  const { master_key_id, operator_domain: operatorDomain } = await checkServingKeys(store, o.masterKeys);
  // The console's address is checked before anything listens: a refused one starts nothing.
  if (o.console) consoleScheme(o.console.host ?? '127.0.0.1', { ...(o.console.public ? { public: true } : {}), tls: !!o.console.tls });
  const tenantCacheSize = o.tenantCacheSize ?? DEFAULT_TENANT_CACHE_SIZE;
  const limits = connectionLimits(o);
  const graceMs = shutdownGraceMs(o.shutdownGraceSeconds);
  const certs = await openCertificateStore(
    o.tls,
    // The lookup that decides whether a name is served opens its tenant too: its first request finds it open.
    async (name) => name === operatorDomain || (await tenants.route(name)) !== undefined,
    // With --dev the issued certificates are kept as long as their tenants may be: a rebuilt context then costs no issuing.
    { contexts: o.tlsContextCacheSize ?? DEFAULT_TLS_CONTEXT_CACHE_SIZE, issued: tenantCacheSize },
  );
  const onError = o.onError ?? logError;
  const offerCache = createOfferCache(o.offerCacheMaxAgeSeconds ?? DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS, o.offerCacheMaxBytes);
  const metrics = new PlatformMetrics(store, () => tenants.loaded());
  const scale = new ScaleMetrics(metrics.registry, offerCache, certs);
  const { tenants, watch } = await tenantRouting({ ...o, onError }, tenantCacheSize, offerCache, metrics, scale);
  // The one app every tenant is served by; the router hands it the request's tenant in the env.
  // The router answers 421 for a Host no enabled tenant serves, so the app's own Host rule is not needed.
  const tenantOf = (env: unknown) => (env as TenantBindings).tenant;
  const { log } = o;
  const app = createNodeApp((c) => tenantOf(c.env).publisher, {
    // Every tenant a UCP lodging business: its own sessions, desk and guest page (tenant-node.ts).
    ucp: (c) => tenantOf(c.env).ucp,
    formSecret: formSecretOf(o.masterKeys[0]!),
    onError,
    observe: (path, status, latencyMs) => metrics.observe(path, status, latencyMs),
    // A log line only when asked for: building one digests the request's query.
    ...(log ? { log: (e: RequestLogEntry, env: unknown) => log({ ...e, tenant: tenantOf(env).domain }) } : {}),
  });
  const operatorApp = operatorDomain
    ? { domain: operatorDomain, app: createOperatorApp(operatorDomain, async (host) => (await tenants.route(host))?.node) }
    : undefined;
  const misdirected = (reason: 'unknown_host' | 'sni_mismatch') => {
    metrics.misdirected.inc({ reason });
    o.log?.({ event: 'misdirected', reason, status: 421 });
    return jsonAnswer('misdirected_request', { 'cache-control': 'no-store' });
  };
  const fetch = platformFetch({ tenants, app, operator: operatorApp, misdirected, onError });
  const { server, drain } = await listen(fetch, certs, tenants, { host: o.host ?? '127.0.0.1', port: o.port ?? 0, limits }, onError).catch(
    async (e) => {
      await watch.close();
      throw e;
    },
  );
  const admin = o.adminListen
    ? await startAdminListener(o.adminListen, metrics.registry, async () => (await store.info()).master_key_id === master_key_id).catch(
        async (e) => {
          server.close();
          await watch.close();
          throw e;
        },
      )
    : undefined;
  const operatorConsole = o.console
    ? await startOperatorConsole(o.console, {
        store,
        master: o.masterKeys[0]!,
        registry: metrics.registry,
        now: () => (o.clock ?? store.clock).now(),
        maxConnectionsPerClient: limits.maxPerClient,
        onError,
      }).catch(async (e) => {
        server.close();
        await admin?.close();
        await watch.close();
        throw e;
      })
    : undefined;
  return servedPlatform(server, {
    certs,
    tenants,
    offerCache,
    metrics,
    ...(admin ? { admin } : {}),
    ...(operatorConsole ? { console: operatorConsole } : {}),
    stop: () => drain.drain(graceMs).finally(() => watch.close()),
  });
}

/** The tenant router over the store's watch (tenant-watch.ts: LISTEN on PostgreSQL), counting lookups and signatures. */
async function tenantRouting(
  o: ServePlatformOptions,
  size: number,
  offerCache: OfferCache | null,
  metrics: PlatformMetrics,
  scale: ScaleMetrics,
) {
  const watch = await TenantWatch.open(o.store.target, (e) =>
    process.stderr.write(
      `error[store_unavailable]: the tenant listener lost PostgreSQL (${e.message}); reading tenants per request until it is back\n`,
    ),
  );
  const lookups = { hit: metrics.cache.labels({ result: 'hit' }), miss: metrics.cache.labels({ result: 'miss' }) };
  const tenants = createTenantRouter(o.store, o.masterKeys, {
    size,
    watch,
    offerCache,
    onSignature: () => scale.signatures.inc(),
    onLookup: (hit) => (hit ? lookups.hit : lookups.miss).inc(),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.guestMail ? { guestMail: o.guestMail } : {}),
    ...(o.bookings ? { bookings: o.bookings } : {}),
    ...(o.onError ? { onError: o.onError } : {}),
  });
  return { tenants, watch };
}

/** What `servePlatform` hands back: the address, the gauges tests and operators read, and `close`. */
function servedPlatform(
  server: Server,
  p: {
    certs: CertificateStore;
    tenants: TenantRouter;
    offerCache: OfferCache | null;
    metrics: PlatformMetrics;
    admin?: AdminListener;
    console?: ServedOperatorConsole;
    /** Drain the listener: nothing new accepted, the requests in flight answered within the grace. */
    stop: () => Promise<void>;
  },
): ServedPlatform {
  const addr = server.address() as AddressInfo;
  const { certs, admin } = p;
  let closed: Promise<void> | undefined;
  return {
    address: addr.address,
    port: addr.port,
    ...(certs.caFile ? { caFile: certs.caFile, caPem: certs.caPem } : {}),
    loadedTenants: () => p.tenants.loaded(),
    tlsContexts: () => certs.held(),
    tlsContextsCreated: () => certs.created(),
    openConnections: () => new Promise((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n)))),
    offerCacheBytes: () => p.offerCache?.bytes ?? 0,
    metrics: p.metrics,
    ...(admin ? { admin: { address: admin.address, port: admin.port } } : {}),
    ...(p.console ? { console: { origin: p.console.origin, address: p.console.address, port: p.console.port } } : {}),
    close() {
      p.console?.fleet.stop();
      closed ??= Promise.all([p.stop(), p.console?.drain.drain(0)]).then(() => admin?.close());
      return closed;
    },
  };
}
