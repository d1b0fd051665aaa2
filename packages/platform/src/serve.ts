/**
 * `vrp platform serve`: one https listener for every tenant. The TLS certificate is chosen by SNI
 * (certificates.ts), the tenant by the `Host` header; a request whose Host is no enabled tenant's
 * domain (or a subdomain of one), or whose Host names another tenant than the TLS connection
 * did, gets 421 Misdirected Request (RFC 9110 §15.5.20) and no tenant data. Tenants load lazily
 * into a bounded LRU cache, so memory follows the tenants recently served, not those that exist.
 * One node app (`createNodeApp`) serves every tenant: the router passes the request's tenant
 * with it, so routes and surface handlers exist once per process and a loaded tenant holds only
 * its own state (tenant-node.ts); signed offers share one byte-bounded cache keyed by domain.
 * Every request reads its tenant's head row once, so a disabled tenant is gone from every process
 * at its next request and a rotation or revocation is seen at once.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { type HttpBindings, serve } from '@hono/node-server';
import { type Clock, isVrpError } from '@vrpkit/core';
import {
  capConnectionsPerClient,
  checkConnectionCap,
  createNodeApp,
  createOfferCache,
  DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
  type RequestLogEntry,
  requestHostName,
  SERVER_LIMITS,
} from '@vrpkit/node';
import { LRUCache } from 'lru-cache';
import { type CertificateSource, DEFAULT_TLS_CONTEXT_CACHE_SIZE, openCertificateStore } from './certificates.js';
import { PlatformError } from './errors.js';
import type { MasterKey } from './master-key.js';
import { PlatformMetrics, ScaleMetrics, startAdminListener } from './metrics.js';
import { createOperatorApp } from './operator.js';
import { openTenantNode, type TenantNode } from './tenant-node.js';
import type { PlatformStore, TenantSnapshot } from './tenants.js';

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
  close(): Promise<void>;
}

const MISDIRECTED = JSON.stringify({ error: { code: 'misdirected_request', message: 'this server does not serve that host' } });

/** `host` and each parent with at least two labels: the tenant domains that could serve it. */
function candidateDomains(host: string): string[] {
  const labels = host.split('.');
  const out: string[] = [];
  for (let i = 0; i + 2 <= labels.length; i++) out.push(labels.slice(i).join('.'));
  return out;
}

const inTenant = (name: string, domain: string) => name === domain || name.endsWith(`.${domain}`);

export async function servePlatform(o: ServePlatformOptions): Promise<ServedPlatform> {
  const { store } = o;
  // Any of the keys may be the recorded one: during a master-key rotation servers hold both.
  const { master_key_id, operator_domain: operatorDomain } = await store.info();
  if (!o.masterKeys.some((k) => k.id === master_key_id))
    throw new PlatformError('master_key_mismatch', 'none of the master keys is the one this platform uses');
  const tenantCacheSize = o.tenantCacheSize ?? DEFAULT_TENANT_CACHE_SIZE;
  const keepAliveMs = o.keepAliveMs ?? DEFAULT_PLATFORM_KEEP_ALIVE_MS;
  if (!Number.isInteger(keepAliveMs) || keepAliveMs < 1000 || keepAliveMs > 3_600_000)
    throw new PlatformError('invalid_keep_alive', 'the keep-alive is from 1 s to 1 hour');
  const maxPerClient = checkConnectionCap(o.maxConnectionsPerClient ?? DEFAULT_PLATFORM_MAX_CONNECTIONS_PER_CLIENT);
  const maxConnections = checkConnectionCap(o.maxConnections ?? DEFAULT_PLATFORM_MAX_CONNECTIONS);
  const certs = await openCertificateStore(
    o.tls,
    async (name) => name === operatorDomain || (await store.activeTenantFor(candidateDomains(name))) !== undefined,
    // With --dev the issued certificates are kept as long as their tenants may be: a rebuilt context then costs no issuing.
    { contexts: o.tlsContextCacheSize ?? DEFAULT_TLS_CONTEXT_CACHE_SIZE, issued: tenantCacheSize },
  );
  const onError =
    o.onError ??
    ((e: unknown) =>
      process.stderr.write(`error[${isVrpError(e) ? e.code : 'internal_error'}]: ${e instanceof Error ? e.message : String(e)}\n`));
  /** Loaded tenants by domain: the node once open (`node`), the opening meanwhile (`opening`). */
  const tenants = new LRUCache<string, { opening: Promise<TenantNode>; node?: TenantNode }>({ max: tenantCacheSize });
  const offerCache = createOfferCache(o.offerCacheMaxAgeSeconds ?? DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS, o.offerCacheMaxBytes);

  const metrics = new PlatformMetrics(store, () => tenants.size);
  const scale = new ScaleMetrics(metrics.registry, offerCache, certs);
  const onSignature = () => scale.signatures.inc();
  const cacheHit = metrics.cache.labels({ result: 'hit' });
  const cacheMiss = metrics.cache.labels({ result: 'miss' });
  const load = (domain: string): Promise<TenantNode> => {
    const loaded = tenants.get(domain);
    if (loaded) {
      cacheHit.inc();
      return loaded.opening;
    }
    cacheMiss.inc();
    const entry: { opening: Promise<TenantNode>; node?: TenantNode } = {
      opening: openTenantNode(store, domain, o.masterKeys, { offerCache, onSignature, ...(o.clock ? { clock: o.clock } : {}) }),
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

  /** The enabled tenant serving `host` with its state read now, or undefined. */
  const route = async (host: string, again = true): Promise<{ node: TenantNode; state: TenantSnapshot } | undefined> => {
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
  /**
   * `route` in the caller's own turn, for a tenant already open whose state the store can tell
   * without waiting (`TenantSource.liveNow`): the request is then answered in its own turn, as the
   * single-domain node answers. Undefined whenever that is not so (then `route`, which also deals
   * with a tenant gone or added again, and reports a failed read).
   */
  const routeNow = (host: string): { node: TenantNode; state: TenantSnapshot } | undefined => {
    const node = tenants.get(host)?.node;
    let state: TenantSnapshot | undefined | null;
    try {
      state = node?.source.liveNow();
    } catch {
      return undefined;
    }
    if (!node || !state) return undefined;
    cacheHit.inc();
    return { node, state };
  };
  const tenantFor = async (host: string) => (await route(host))?.node;

  // The one app every tenant is served by; the router hands it the request's tenant in the env.
  // The router below answers 421 for a Host no enabled tenant serves, so the app's own Host rule is not needed.
  const tenantOf = (env: unknown) => (env as TenantBindings).tenant;
  const app = createNodeApp((c) => tenantOf(c.env).publisher, {
    onError,
    log: (e: RequestLogEntry, env: unknown) => {
      metrics.observe(e.path, e.status);
      o.log?.({ ...e, tenant: tenantOf(env).domain });
    },
  });

  const operatorApp = operatorDomain ? createOperatorApp(operatorDomain, tenantFor) : undefined;

  const misdirected = (reason: 'unknown_host' | 'sni_mismatch') => {
    metrics.misdirected.inc({ reason });
    o.log?.({ event: 'misdirected', reason, status: 421 });
    return new Response(MISDIRECTED, { status: 421, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
  };

  const fetch = (req: Request, env: HttpBindings): Response | Promise<Response> => {
    const host = requestHostName(req.headers.get('host'));
    if (!host) return misdirected('unknown_host');
    const servername = (env.incoming.socket as TLSSocket).servername;
    if (operatorApp && host === operatorDomain) {
      if (typeof servername === 'string' && servername.toLowerCase() !== operatorDomain) return misdirected('sni_mismatch');
      return operatorApp.fetch(req, env);
    }
    const now = routeNow(host);
    return now ? dispatch(now, req, env, servername) : routeThenDispatch(host, req, env, servername);
  };
  const routeThenDispatch = async (host: string, req: Request, env: HttpBindings, servername: unknown): Promise<Response> => {
    let routed: Awaited<ReturnType<typeof route>>;
    try {
      routed = await route(host);
    } catch (e) {
      onError(e);
      return new Response(JSON.stringify({ error: { code: 'internal_error', message: 'the platform could not complete the request' } }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
    }
    if (!routed) return misdirected('unknown_host');
    return dispatch(routed, req, env, servername);
  };
  const dispatch = (
    { node, state }: { node: TenantNode; state: TenantSnapshot },
    req: Request,
    env: HttpBindings,
    servername: unknown,
  ): Response | Promise<Response> => {
    // A connection opened for one tenant's name must not carry another tenant's requests (connection reuse across names).
    if (typeof servername === 'string' && !inTenant(servername.toLowerCase(), node.domain)) return misdirected('sni_mismatch');
    const bindings: TenantBindings = { ...env, tenant: node };
    return node.source.during(state, () => app.fetch(req, bindings));
  };

  const host = o.host ?? '127.0.0.1';
  const server = serve({
    fetch: fetch as (req: Request, env: unknown) => Response | Promise<Response>,
    port: o.port ?? 0,
    hostname: host,
    createServer,
    serverOptions: {
      SNICallback: (name: string, cb: (err: Error | null, ctx?: import('node:tls').SecureContext) => void) => {
        certs.contextFor(name.toLowerCase()).then(
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
  server.headersTimeout = SERVER_LIMITS.headersTimeout;
  server.requestTimeout = SERVER_LIMITS.requestTimeout;
  // The headers timeout stays short: on Node 20 it bounds a request's head, not an idle
  // keep-alive connection (an idle connection outlives it; packages/platform/test/keep-alive.test.ts).
  server.keepAliveTimeout = keepAliveMs;
  server.maxConnections = maxConnections;
  capConnectionsPerClient(server, maxPerClient);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new PlatformError('listen_failed', `cannot listen on ${host}: ${e.code ?? e.message}`)),
    );
  });
  const addr = server.address() as AddressInfo;
  const admin = o.adminListen
    ? await startAdminListener(o.adminListen, metrics.registry, async () => (await store.info()).master_key_id === master_key_id).catch(
        async (e) => {
          server.close();
          throw e;
        },
      )
    : undefined;
  let closed: Promise<void> | undefined;
  return {
    address: addr.address,
    port: addr.port,
    ...(certs.caFile ? { caFile: certs.caFile, caPem: certs.caPem } : {}),
    loadedTenants: () => tenants.size,
    tlsContexts: () => certs.held(),
    tlsContextsCreated: () => certs.created(),
    openConnections: () => new Promise((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n)))),
    offerCacheBytes: () => offerCache?.bytes ?? 0,
    metrics,
    ...(admin ? { admin: { address: admin.address, port: admin.port } } : {}),
    close() {
      closed ??= new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }).then(() => admin?.close());
      return closed;
    },
  };
}
