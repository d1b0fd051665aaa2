/**
 * Serve a node over https (`vrp node serve`, and the programmatic server every test uses), or
 * over plain http to a TLS-terminating reverse proxy (`--behind-proxy`, see behind-proxy.ts).
 * The public origin is always `https://{canonical_domain}`; the listening address and port are
 * deployment detail that never appears in a document.
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { type Http2Bindings, type HttpBindings, serve } from '@hono/node-server';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS, type Drain, drainable, isVrpError, parseTlsConnectionsAsStreams, systemClock } from '@vrpkit/core';
import { isConnectionLoss } from '@vrpkit/sql';
import type { Hono } from 'hono';
import type { AcmeCertificates, AcmeOptions, AcmeStatus } from './acme.js';
import type { NodeStoreOptions } from './admin/store.js';
import { type ForwardedClientBindings, forwardedRequest, isPrivateListenAddress, trustedProxyList } from './behind-proxy.js';
import { type BookingLogEntry, createBookingDesk } from './booking/desk.js';
import { type BookingUpkeep, type BookingWebhook, DEFAULT_GUEST_DATA_DAYS, startBookingUpkeep } from './booking/upkeep.js';
import { Activity, countedFetch } from './console/activity.js';
import type { ConsoleActionEntry } from './console/context.js';
import { type ConsoleListenOptions, consolePath } from './console/listen.js';
import { type ConsoleAppParts, type MountedConsole, mountConsole, type ServedConsole, startConsole } from './console/serve.js';
import { nodePaths, storeTargetFor } from './datadir.js';
import { NodeError } from './errors.js';
import { type ReadinessReport, readinessProbe } from './health.js';
import { createNodeApp, type RequestLogEntry } from './http/app.js';
import { clientKey } from './http/client-key.js';
import { loadFormSecret } from './http/forms.js';
import { errorResponse } from './http/json.js';
import { createOfferCache, DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS } from './offer-cache.js';
import { createOfferService, type NodePublisher, type OfferService } from './service/index.js';
import { NodeStore } from './store/store.js';
import { storeHealth } from './store-health.js';
import { type CalendarSync, startCalendarSync } from './sync-loop.js';
import { checkServingCertificate, ensureDevTls } from './tls.js';
import { ucpBookingSessions } from './ucp/index.js';
import { type SmtpMailerOptions, smtpMailer } from './ucp/mail.js';

/** `clock` is the node's clock, injected in tests; TLS validity follows the real clock. */
export interface ServeNodeOptions extends NodeStoreOptions {
  /** 0 = ephemeral. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Use (and create once) the dev CA and server certificate under `<dataDir>/tls/`. */
  dev?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  /**
   * Serve plain http to a reverse proxy that terminates TLS for `https://{domain}`, on a loopback
   * or private `host` only; `X-Forwarded-Proto/Host` are believed from `trustedProxies` (addresses
   * or CIDR blocks) and removed from every other request.
   */
  behindProxy?: { trustedProxies: string[] };
  /** Obtain and renew the domain's certificate from an ACME CA (see acme.ts); one process only. */
  acme?: AcmeOptions;
  /**
   * Most simultaneous connections one client address may hold (default
   * `DEFAULT_MAX_CONNECTIONS_PER_CLIENT`); a connection past it is closed as it is accepted,
   * before the TLS handshake.
   */
  maxConnectionsPerClient?: number;
  /**
   * Sync the calendar feeds in the background every this many ms (jittered, with retries after a
   * failure; see `startCalendarSync`). 0 or absent: no background sync. A forked serve worker never
   * syncs: in `--workers N` mode the primary does, once for the node.
   */
  syncIntervalMs?: number;
  log?: (entry: RequestLogEntry) => void;
  /** One line per booking decision (ids and digests, never guest details). */
  bookingLog?: (entry: BookingLogEntry) => void;
  /** Internal failures while serving; default: `error[code]: message` on stderr. */
  onError?: (error: unknown) => void;
  /** `--offer-cache-max-age`: seconds a signed offer is reused (0 = sign every offer; default 60). */
  offerCacheMaxAgeSeconds?: number;
  /** `--hold-hours`: how long a pending booking request holds the dates (default 24). */
  holdHours?: number;
  /** `--booking-rate-limit`: booking requests per minute from one address (default 10). */
  bookingRateLimit?: number;
  /** `--booking-holds-per-day`: holds one client address may create in a rolling 24 hours (default 3; 0 = no cap). */
  bookingHoldsPerDay?: number;
  /** `--booking-webhook`: an https URL that receives a JSON event per booking change. */
  bookingWebhook?: BookingWebhook;
  /** How often expired holds are swept (ms, default a minute); reads expire them as they come too. */
  bookingSweepIntervalMs?: number;
  /**
   * `--smtp-url`, `--mail-from` (default `bookings@{domain}`), `--smtp-ca`: the mail transport the UCP guest page sends its one-time codes by.
   * Without it UCP sessions are still created and read, but no guest can confirm one.
   */
  guestMail?: Partial<SmtpMailerOptions> & Pick<SmtpMailerOptions, 'url'>;
  /**
   * `--host-email`: the host is mailed each confirmed reservation (with `guestMail`, whose transport
   * also mails the guest the host's decisions), besides the webhook.
   */
  hostEmail?: string;
  /**
   * `--guest-data-days`: guest details (names, emails, phones, parties, decline reasons) are erased
   * this many days after check-out (default `DEFAULT_GUEST_DATA_DAYS`); the rows stay for the counts.
   */
  guestDataDays?: number;
  /**
   * `--shutdown-grace`: on `close`, seconds the requests in flight may take to finish before their
   * connections are closed (default `DEFAULT_SHUTDOWN_GRACE_SECONDS`); nothing new is accepted meanwhile.
   */
  shutdownGraceSeconds?: number;
  /**
   * `--console`: the host console on an admin listener of its own (console/listen.ts: loopback or
   * private by default, a public address only with `public` and TLS), or with `path` behind the
   * proxy, mounted at that path on this listener (console/listen.ts `consolePath`). Off unless given; one process only.
   */
  console?: ConsoleListenOptions & { onAction?: (entry: ConsoleActionEntry) => void };
}

/**
 * Default per-client connection cap: far above what one agent or browser opens (browsers use
 * six per origin, the benchmarks 32), far below what exhausts memory (each TLS connection holds
 * its own buffers; thousands from one address are an attack, not a client).
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 64;

/**
 * Time and size limits on every connection, tighter than Node's defaults (60 s for headers,
 * 300 s for a request, 120 s for a TLS handshake): a request to a node is a short GET or a
 * small JSON POST, so a slow sender is holding a connection, not sending a request.
 */
export const SERVER_LIMITS = {
  /** A TLS handshake must finish within this. */
  handshakeTimeout: 10_000,
  /** The request headers must arrive within this. */
  headersTimeout: 10_000,
  /** The whole request (headers and body) must arrive within this. */
  requestTimeout: 30_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeout: 5_000,
  /** Largest request head (request line and headers) in bytes: Node's default, stated. */
  maxHeaderSize: 16 * 1024,
} as const;

/** `max` as a connection cap (per client or in all), or a `invalid_connection_cap` error. */
export function checkConnectionCap(max: number): number {
  if (!Number.isInteger(max) || max < 1) throw new NodeError('invalid_connection_cap');
  return max;
}

/**
 * Close a connection at accept when its client (`clientKey`: an IPv6 client by its /64) already holds `max` open ones. Runs
 * before the TLS listener, so a refused connection costs no handshake and reaches no handler.
 */
export function capConnectionsPerClient(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.prependListener('connection', (socket: Socket) => {
    const client = clientKey(socket.remoteAddress ?? '');
    const held = open.get(client) ?? 0;
    if (held >= max) {
      socket.destroy();
      return;
    }
    open.set(client, held + 1);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else open.delete(client);
    });
  });
}

/**
 * The server's time limits (`SERVER_LIMITS`, the keep-alive `keepAliveMs` when given) and the
 * per-client connection cap on `server`, then its `listening` event awaited; a listen error
 * rejects with `failed(e)`. Resolves with the server's drain (`drainable`): stopping lets the
 * requests in flight finish instead of resetting them. A node and the platform's listener are
 * limited and stopped alike, and parse their TLS connections as streams (`parseTlsConnectionsAsStreams`:
 * a request arriving before the previous answer drained keeps its connection).
 */
export async function listenWithLimits(
  server: Server,
  o: { maxPerClient: number; keepAliveMs?: number; failed: (e: NodeJS.ErrnoException) => Error },
): Promise<Drain> {
  server.headersTimeout = SERVER_LIMITS.headersTimeout;
  server.requestTimeout = SERVER_LIMITS.requestTimeout;
  server.keepAliveTimeout = o.keepAliveMs ?? SERVER_LIMITS.keepAliveTimeout;
  capConnectionsPerClient(server, o.maxPerClient);
  parseTlsConnectionsAsStreams(server);
  const drain = drainable(server);
  await new Promise<void>((resolveListen, reject) => {
    server.once('listening', resolveListen);
    server.once('error', (e: NodeJS.ErrnoException) => reject(o.failed(e)));
  });
  return drain;
}

/** `--shutdown-grace` in ms: seconds given (default `DEFAULT_SHUTDOWN_GRACE_SECONDS`), checked to be 0 to an hour. */
export function shutdownGraceMs(seconds: number = DEFAULT_SHUTDOWN_GRACE_SECONDS): number {
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 3600) throw new NodeError('invalid_shutdown_grace');
  return Math.round(seconds * 1000);
}

function reportInternalError(e: unknown): void {
  // A lost store connection is logged under the code the client was answered with (issue 36 defect 1).
  const code = isConnectionLoss(e) ? 'store_unavailable' : isVrpError(e) ? e.code : 'internal_error';
  process.stderr.write(`error[${code}]: ${e instanceof Error ? e.message : String(e)}\n`);
}

export interface ServedNode {
  origin: string;
  canonicalDomain: string;
  address: string;
  port: number;
  caFile?: string;
  caPem?: string;
  service: OfferService;
  /** With `acme`: the certificate's expiry and the renewal counters. */
  acmeStatus?: () => AcmeStatus;
  /** With `console`: where the host console listens. */
  console?: { origin: string; address: string; port: number };
  close(): Promise<void>;
}

function readTlsFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new NodeError('tls_unreadable', { what, file, reason });
  }
}

/**
 * The TLS certificate and key a node serves with (the host's own, checked against the domain,
 * or the dev CA's under `<dataDir>/tls/`); `null` behind a proxy, which terminates TLS itself.
 */
export async function loadServeTls(
  o: Pick<ServeNodeOptions, 'dataDir' | 'dev' | 'tlsCert' | 'tlsKey' | 'behindProxy' | 'acme'>,
  domain: string,
): Promise<{ certPem: string; keyPem: string; caFile?: string; caPem?: string } | null> {
  // Two processes renewing one certificate would race for the challenge and the files.
  if (o.acme) throw new NodeError('acme_single_process');
  if (o.behindProxy) {
    if (o.tlsCert || o.tlsKey || o.dev) throw new NodeError('tls_behind_proxy');
    return null;
  }
  if (o.tlsCert || o.tlsKey) {
    if (!o.tlsCert || !o.tlsKey) throw new NodeError('tls_incomplete');
    const pair = { certPem: readTlsFile(o.tlsCert, 'certificate'), keyPem: readTlsFile(o.tlsKey, 'key') };
    checkServingCertificate(pair, domain, { cert: o.tlsCert, key: o.tlsKey });
    return pair;
  }
  if (o.dev) return ensureDevTls(nodePaths(o.dataDir).tls, domain);
  throw new NodeError('tls_required');
}

/** Under the mounted console's base path: the request with the base taken off (`/console` is its `/`), else undefined. */
function underBase(req: Request, base: string): Request | undefined {
  const url = new URL(req.url);
  if (url.pathname !== base && !url.pathname.startsWith(`${base}/`)) return undefined;
  url.pathname = url.pathname.slice(base.length) || '/';
  return new Request(url, req);
}

/**
 * Plain http for a reverse proxy (see behind-proxy.ts): never on a public address. With a mounted
 * console (`--console-path`), the requests under its path go to it, and only a trusted proxy's:
 * a client reaching the listener directly is refused (403 `console_proxy_only`), whatever it sends.
 */
function serveBehindProxy(
  fetch: (req: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>,
  trustedProxies: string[],
  at: { host: string; port: number; domain: string; console?: MountedConsole },
) {
  const { host, port, domain } = at;
  if (!isPrivateListenAddress(host)) throw new NodeError('proxy_listen_public', { host });
  const trusted = trustedProxyList(trustedProxies);
  const mounted = at.console;
  return serve({
    fetch: (req, env) => {
      const seen = forwardedRequest(req, env.incoming.socket.remoteAddress, trusted, domain);
      if ('response' in seen) return seen.response;
      const consoleRequest = mounted && underBase(seen.request, mounted.base);
      if (mounted && consoleRequest) {
        if (!seen.proxied) return errorResponse('console_proxy_only');
        return mounted.fetch(consoleRequest);
      }
      const bindings: typeof env & ForwardedClientBindings = seen.client ? { ...env, forwardedClient: seen.client } : env;
      return fetch(seen.request, bindings);
    },
    port,
    hostname: host,
    createServer: createHttpServer,
    serverOptions: { maxHeaderSize: SERVER_LIMITS.maxHeaderSize },
  });
}

type UpkeepOptions = Pick<
  ServeNodeOptions,
  'clock' | 'bookingWebhook' | 'bookingSweepIntervalMs' | 'guestMail' | 'hostEmail' | 'guestDataDays'
>;

/** The mail transport of `--smtp-url` (default sender `bookings@{domain}`). */
const nodeMailer = (o: NonNullable<ServeNodeOptions['guestMail']>, canonicalDomain: string) =>
  smtpMailer({ from: `bookings@${canonicalDomain}`, ...o });

/** The booking upkeep for a serving node's options (`--booking-webhook`, the notices by mail, the sweep interval). */
export function startNodeBookingUpkeep(
  store: NodeStore,
  canonicalDomain: string,
  o: UpkeepOptions,
  onError: (e: unknown) => void,
): BookingUpkeep {
  if (o.hostEmail && !o.guestMail) throw new NodeError('host_email_needs_smtp');
  return startBookingUpkeep({
    store,
    canonicalDomain,
    onError,
    guestDataDays: o.guestDataDays ?? DEFAULT_GUEST_DATA_DAYS,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.bookingWebhook ? { webhook: o.bookingWebhook } : {}),
    ...(o.guestMail
      ? { notices: { mailer: nodeMailer(o.guestMail, canonicalDomain), ...(o.hostEmail ? { hostEmail: o.hostEmail } : {}) } }
      : {}),
    ...(o.bookingSweepIntervalMs !== undefined ? { intervalMs: o.bookingSweepIntervalMs } : {}),
  });
}

/** The booking upkeep on a store of its own (the `--workers N` primary, which serves nothing itself). */
export async function openNodeBookingUpkeep(
  o: UpkeepOptions & Pick<ServeNodeOptions, 'dataDir' | 'databaseUrl'>,
  canonicalDomain: string,
  onError: (e: unknown) => void = reportInternalError,
): Promise<BookingUpkeep> {
  const store = await NodeStore.open(storeTargetFor(o.dataDir, o.databaseUrl));
  try {
    const upkeep = startNodeBookingUpkeep(store, canonicalDomain, o, onError);
    return { wake: upkeep.wake, stop: () => upkeep.stop().finally(() => store.close()) };
  } catch (e) {
    await store.close();
    throw e;
  }
}

/** `--acme`: certificate management for the node's domain (acme-client and its HTTP stack are loaded only by a node that uses it). */
async function startServeAcme(
  o: ServeNodeOptions,
  domain: string,
  host: string,
  onError: (e: unknown) => void,
): Promise<AcmeCertificates | undefined> {
  if (!o.acme) return undefined;
  if (o.tlsCert || o.tlsKey || o.dev || o.behindProxy) throw new NodeError('acme_conflict');
  return (await import('./acme.js')).startAcme({ ...o.acme, tlsDir: nodePaths(o.dataDir).tls, domain, host, onError });
}

/** The node's app: its offer service, its booking desk over the store, readiness and the request log. */
function serveApp(
  o: ServeNodeOptions,
  service: NodePublisher,
  store: NodeStore,
  upkeep: BookingUpkeep | undefined,
  onError: (e: unknown) => void,
): { app: Hono; readiness: () => Promise<ReadinessReport> } {
  const bookings = createBookingDesk({
    service,
    store,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.holdHours !== undefined ? { holdHours: o.holdHours } : {}),
    ...(o.bookingRateLimit !== undefined ? { rateLimitPerMinute: o.bookingRateLimit } : {}),
    ...(o.bookingHoldsPerDay !== undefined ? { holdsPerDay: o.bookingHoldsPerDay } : {}),
    ...(upkeep ? { onChange: upkeep.wake } : {}),
    ...(o.bookingLog ? { log: o.bookingLog } : {}),
  });
  const writes = storeHealth(store, o.clock ?? systemClock, onError);
  const readiness = readinessProbe(store, nodePaths(o.dataDir).keys, o.clock ?? systemClock, writes);
  const app = createNodeApp(service, {
    bookings,
    ucp: ucpBookingSessions({
      service,
      store,
      desk: bookings,
      clock: o.clock ?? systemClock,
      onError,
      ...(o.guestMail ? { mailer: nodeMailer(o.guestMail, service.canonicalDomain) } : {}),
    }),
    onError,
    storeHealth: writes,
    formSecret: loadFormSecret(nodePaths(o.dataDir).keys),
    readiness,
    // Behind a proxy the Host is the proxy's upstream name; the proxy's X-Forwarded-Host is checked instead (behind-proxy.ts).
    canonicalHostOnly: !o.behindProxy,
    ...(o.log ? { log: o.log } : {}),
  });
  return { app, readiness };
}

type ServeTls = Awaited<ReturnType<typeof loadServeTls>>;

/** Listen with the server limits and the per-client connection cap: https with `tls`, or plain http behind a proxy. */
async function listenNode(
  fetch: Hono['fetch'],
  tls: ServeTls,
  o: ServeNodeOptions,
  at: { host: string; port: number; domain: string; maxPerClient: number; console?: MountedConsole },
): Promise<{ server: Server; drain: Drain }> {
  const { host, port } = at;
  const server = (
    tls
      ? serve({
          fetch,
          port,
          hostname: host,
          createServer,
          serverOptions: {
            key: tls.keyPem,
            cert: tls.certPem,
            handshakeTimeout: SERVER_LIMITS.handshakeTimeout,
            maxHeaderSize: SERVER_LIMITS.maxHeaderSize,
          },
        })
      : serveBehindProxy(fetch, o.behindProxy?.trustedProxies ?? [], at)
  ) as Server;
  const drain = await listenWithLimits(server, {
    maxPerClient: at.maxPerClient,
    failed: (e) => new NodeError('listen_failed', { address: `${host}:${port}`, reason: e.code ?? e.message }, { details: { host, port } }),
  });
  return { server, drain };
}

/** Close in order: the listener, drained (its requests in flight answered within `graceMs`), then the background work, then the store. */
function closer(
  listener: { drain: Drain; graceMs: number; console?: ServedConsole },
  parts: { sync?: CalendarSync; upkeep?: BookingUpkeep; acme?: AcmeCertificates; store: NodeStore },
) {
  let closed: Promise<void> | undefined;
  return () => {
    closed ??= Promise.all([listener.drain.drain(listener.graceMs), listener.console?.drain.drain(listener.graceMs)])
      .then(() => parts.sync?.stop())
      .then(() => parts.upkeep?.stop())
      .then(() => parts.acme?.close())
      .then(() => parts.store.close());
    return closed;
  };
}

export async function serveNode(o: ServeNodeOptions): Promise<ServedNode> {
  const maxPerClient = checkConnectionCap(o.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT);
  const graceMs = shutdownGraceMs(o.shutdownGraceSeconds);
  const store = await NodeStore.open(storeTargetFor(o.dataDir, o.databaseUrl));
  let acme: AcmeCertificates | undefined;
  let upkeep: BookingUpkeep | undefined;
  try {
    // With the console the cache is made here, so its hit and miss totals can be sampled (console/activity.ts).
    const offerCache = o.console ? createOfferCache(o.offerCacheMaxAgeSeconds ?? DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS) : undefined;
    const service = await createOfferService({
      store,
      keys: nodePaths(o.dataDir).keys,
      ...(o.clock ? { clock: o.clock } : {}),
      ...(offerCache !== undefined ? { offerCache } : {}),
      ...(o.offerCacheMaxAgeSeconds !== undefined ? { offerCacheMaxAgeSeconds: o.offerCacheMaxAgeSeconds } : {}),
    });
    const onError = o.onError ?? reportInternalError;
    const host = o.host ?? '127.0.0.1';
    const domain = service.canonicalDomain;
    acme = await startServeAcme(o, domain, host, onError);
    const tls: ServeTls = acme ? acme.current : await loadServeTls(o, domain);
    // Expiry sweeps and webhook delivery run once per node: in `--workers N` mode the primary runs them.
    upkeep = cluster.isWorker ? undefined : startNodeBookingUpkeep(store, domain, o, onError);
    const { app, readiness } = serveApp(o, service, store, upkeep, onError);
    const activity = o.console ? new Activity(() => service.now(), offerCache) : undefined;
    const fetch = activity ? countedFetch(app.fetch, activity, () => service.now()) : app.fetch;
    const syncs = Boolean(o.syncIntervalMs && !cluster.isWorker);
    let sync: CalendarSync | undefined;
    const consoleParts = (asked: NonNullable<ServeNodeOptions['console']>, activity: Activity): ConsoleAppParts => ({
      node: o,
      store,
      publisher: service,
      readiness,
      activity,
      tls,
      onError,
      ...(acme ? { acmeStatus: acme.status } : {}),
      ...(upkeep ? { onBookingDecided: upkeep.wake } : {}),
      ...(asked.onAction ? { onAction: asked.onAction } : {}),
      // The sync starts once the node listens; the console reads its schedule when it renders.
      ...(syncs ? { nextSync: (feed: string) => sync?.nextSyncAt?.(feed) } : {}),
    });
    const base = o.console
      ? consolePath(
          o.console,
          o.behindProxy !== undefined,
          app.routes.map((r) => r.path),
        )
      : undefined;
    const mounted = o.console && activity && base ? mountConsole(base, consoleParts(o.console, activity)) : undefined;
    const { server, drain } = await listenNode(fetch, tls, o, {
      host,
      port: o.port ?? 0,
      domain,
      maxPerClient,
      ...(mounted ? { console: mounted } : {}),
    });
    sync =
      o.syncIntervalMs && syncs
        ? startCalendarSync(store, { intervalMs: o.syncIntervalMs, onError, ...(o.clock ? { clock: o.clock } : {}) })
        : undefined;
    const admin =
      o.console && activity && !mounted
        ? await startConsole(o.console, {
            ...consoleParts(o.console, activity),
            listen: listenWithLimits,
            maxConnectionsPerClient: maxPerClient,
          }).catch((e) => Promise.all([drain.drain(0), sync?.stop()]).then(() => Promise.reject(e)))
        : undefined;
    // A renewed certificate is served from the next handshake on; open connections keep theirs.
    acme?.onRenewed((pair) => server.setSecureContext({ key: pair.keyPem, cert: pair.certPem }));
    const addr = server.address() as AddressInfo;
    return {
      origin: service.origin,
      canonicalDomain: domain,
      address: addr.address,
      port: addr.port,
      ...(tls?.caFile ? { caFile: tls.caFile, caPem: tls.caPem } : {}),
      service,
      ...(acme ? { acmeStatus: acme.status } : {}),
      ...(admin ? { console: { origin: admin.origin, address: admin.address, port: admin.port } } : {}),
      ...(mounted ? { console: { origin: mounted.origin, address: addr.address, port: addr.port } } : {}),
      close: closer(
        { drain, graceMs, ...(admin ? { console: admin } : {}) },
        { ...(sync ? { sync } : {}), ...(upkeep ? { upkeep } : {}), ...(acme ? { acme } : {}), store },
      ),
    };
  } catch (e) {
    await upkeep?.stop().catch(() => {});
    await acme?.close().catch(() => {});
    await store.close().catch(() => {});
    throw e;
  }
}
