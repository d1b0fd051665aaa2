/**
 * One Hono app per node: the well-known documents (Core VRP v0.1 §2, §3), health, the booking
 * routes (booking/http.ts) and every surface of the registry (surfaces/registry.ts: the offer
 * endpoint, MCP, A2A, WebMCP), so every surface shares the one offer service.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '@vrpkit/core';
import {
  BOOK_PATH,
  DISCOVERY_PATH,
  JWKS_MAX_CACHE_SECONDS,
  JWKS_PATH,
  MAX_BOOKING_REQUEST_BYTES,
  MAX_UCP_REQUEST_BYTES,
  OFFER_ENDPOINT_PATH,
  UCP_PROFILE_PATH,
} from '@vrpkit/protocol';
import { isConnectionLoss } from '@vrpkit/sql';
import { type Context, Hono } from 'hono';
import { getPath } from 'hono/utils/url';
import type { BookingDesk } from '../booking/desk.js';
import { mountBookForm, mountBookPage } from '../booking/http.js';
import { BOOK_FORM } from '../booking/page.js';
import { HEALTHZ_PATH, READYZ_PATH, type ReadinessReport } from '../health.js';
import type { NodePublisher } from '../service/index.js';
import { STORE_OUTAGE_RETRY_AFTER_SECONDS, type StoreHealth } from '../store-health.js';
import type { UcpMcpBinding } from '../surfaces/mcp/ucp.js';
import { mountSurfaces } from '../surfaces/registry.js';
import { mountUcpContinue, mountUcpRest, type UcpRoutes, type UcpRoutesFor } from '../ucp/http.js';
import type { UcpBookingSessions } from '../ucp/index.js';
import { CONTINUE_FORM } from '../ucp/page.js';
import { type FormGuard, formGuard } from './forms.js';
import { canonicalHostOnly } from './host-guard.js';
import { errorResponse, storeUnavailableResponse } from './json.js';
import { rawQuery } from './query.js';

/** One structured log line per request. The query string is a digest: raw tool arguments never reach a log. */
export interface RequestLogEntry {
  event: 'request';
  method: string;
  path: string;
  query_sha256: string | null;
  status: number;
  latency_ms: number;
}

/**
 * The publisher a request is answered by. A node has one; platform mode serves every tenant from
 * one app and passes the tenant its router chose with the request (so the routes, the surfaces'
 * handlers and the app exist once per process, not once per tenant).
 */
export type PublisherFor = (c: Context) => NodePublisher;

/** A platform's UCP sessions: those of the tenant a request is for, with the booking desk their holds go through. */
export type UcpSessionsFor = (c: Context) => UcpBookingSessions & { desk: BookingDesk };

export interface NodeAppOptions {
  /** `env` is the request's bindings (platform mode reads the tenant from them). */
  log?: (entry: RequestLogEntry, env: unknown) => void;
  /**
   * Each answered request's path, status and latency (ms), without a log line: what metrics need
   * (platform mode counts every request, and logs only with `log`). Its own hook so that a request
   * with no log pays no query digest (a hash per request).
   */
  observe?: (path: string, status: number, latencyMs: number, env: unknown) => void;
  /** Called with every internal failure (the client only sees `internal_error`). */
  onError?: (error: unknown) => void;
  /** The readiness probe `/readyz` answers with (`readinessProbe`); without one the app has no `/readyz`. */
  readiness?: () => Promise<ReadinessReport>;
  /**
   * The store's write health: a request that fails because the store cannot write is answered 503
   * `store_unavailable` with `Retry-After` (its cause reported once per outage, not per request).
   */
  storeHealth?: StoreHealth;
  /**
   * The secret the per-form tokens of the node's forms are made with (http/forms.ts); every process
   * serving one node must share it (a node's comes from its keys directory). Default: random per app.
   */
  formSecret?: Uint8Array;
  /** The booking desk: the holds a guest's confirmation makes, and the booking rate limit per address; without one the node takes no bookings. */
  bookings?: BookingDesk;
  /**
   * UCP booking sessions (`/.well-known/ucp`, `/ucp/v1/booking-sessions`, the guest's page): a
   * node's, with `bookings` and a single publisher; or, with a `PublisherFor`, each request's own
   * (a platform tenant's sessions, its booking desk and its guest confirmation).
   */
  ucp?: UcpBookingSessions | UcpSessionsFor;
  /**
   * Answer 421 to a Host outside the canonical domain (default true; off behind a proxy, which
   * checks X-Forwarded-Host itself). Only for a single publisher: with a `PublisherFor`, the
   * router that picks the tenant by Host owns this rule.
   */
  canonicalHostOnly?: boolean;
}

/** The resources that only take GET (and HEAD): any other method is 405 with `Allow`, not 404. */
const READ_ONLY_PATHS = new Set([DISCOVERY_PATH, JWKS_PATH, OFFER_ENDPOINT_PATH, BOOK_PATH, HEALTHZ_PATH, READYZ_PATH, UCP_PROFILE_PATH]);

type Fetch = Hono['fetch'];

/**
 * One log line (`log`) and one observation (`observe`) per answered request, its latency included
 * (the answer may be a promise). The line is written by one function made once, not a closure made
 * per request: an answer in the request's own turn (the offer endpoint on SQLite) then allocates
 * no function to log it. The query digest is made only for a log line.
 */
function logged(fetch: Fetch, { log, observe }: Pick<NodeAppOptions, 'log' | 'observe'>): Fetch {
  const write = (req: Request, env: unknown, started: number, res: Response) => {
    const latency_ms = Math.round((performance.now() - started) * 100) / 100;
    const path = getPath(req);
    observe?.(path, res.status, latency_ms, env);
    if (log) {
      const q = rawQuery(req.url);
      log(
        { event: 'request', method: req.method, path, query_sha256: q ? sha256Hex(q).slice(0, 16) : null, status: res.status, latency_ms },
        env,
      );
    }
    return res;
  };
  return (req, env, ctx) => {
    const started = performance.now();
    const res = fetch(req, env, ctx);
    return 'then' in res ? res.then((r) => write(req, env, started, r)) : write(req, env, started, res);
  };
}

/** The UCP routes a request is answered with: the node's one set, a platform tenant's, or none. */
function ucpRoutes(publisher: NodePublisher | PublisherFor, o: NodeAppOptions, form: FormGuard): UcpRoutesFor | undefined {
  const { ucp, bookings } = o;
  if (typeof ucp === 'function') return typeof publisher === 'function' ? (c) => ({ publisher: publisher(c), form, ...ucp(c) }) : undefined;
  if (!ucp || !bookings || typeof publisher === 'function') return undefined;
  const routes: UcpRoutes = { publisher, desk: bookings, form, ...ucp };
  return () => routes;
}

export function createNodeApp(publisher: NodePublisher | PublisherFor, options: NodeAppOptions = {}): Hono {
  const app = new Hono();
  const serviceOf: PublisherFor = typeof publisher === 'function' ? publisher : () => publisher;

  // Core §2: discovery document.
  app.get(DISCOVERY_PATH, (c) => c.json(serviceOf(c).discovery(), 200, { 'cache-control': `public, max-age=${JWKS_MAX_CACHE_SECONDS}` }));

  // Core §3 / §3.1: every active and retained key; max-age ≤ 300 bounds revocation latency.
  app.get(JWKS_PATH, async (c) => c.json(await serviceOf(c).jwks(), 200, { 'cache-control': `public, max-age=${JWKS_MAX_CACHE_SECONDS}` }));

  // Core §5.1: the booking landing page.
  const formSecret = options.formSecret ?? randomBytes(32);
  const bookForm = formGuard(BOOK_FORM, formSecret, MAX_BOOKING_REQUEST_BYTES);
  mountBookPage(app, serviceOf, bookForm);

  // UCP booking sessions: the profile, the Lodging booking REST binding and the guest's page
  // (ucp/http.ts), a node's or each platform tenant's.
  const routesFor = ucpRoutes(publisher, options, formGuard(CONTINUE_FORM, formSecret, MAX_UCP_REQUEST_BYTES));
  if (routesFor) {
    mountUcpRest(app, routesFor);
    mountUcpContinue(app, routesFor);
    // The /book form too, a thin client of the same sessions: the node's (or tenant's) one booking path.
    mountBookForm(app, routesFor, bookForm);
  }
  // Health for supervisors and load balancers: alive is 200; not ready is 503 naming the failing checks.
  app.get(HEALTHZ_PATH, (c) => c.json({ status: 'ok' }, 200, { 'cache-control': 'no-store' }));
  const { readiness } = options;
  if (readiness)
    app.get(READYZ_PATH, async (c) => {
      const r = await readiness();
      return c.json(r, r.ready ? 200 : 503, { 'cache-control': 'no-store' });
    });

  // Every surface of the registry: the offer endpoint (Core §4), MCP (with the UCP Booking tools when
  // the sessions are mounted, surfaces/mcp/ucp.ts), A2A and WebMCP.
  mountSurfaces(
    app,
    serviceOf,
    routesFor
      ? (c): UcpMcpBinding => {
          const r = routesFor(c);
          return { sessions: r.sessions, desk: r.desk };
        }
      : undefined,
  );

  // No route matched: a read-only resource asked with another method is 405 with the methods that
  // exist (RFC 9110 §15.5.6), anything else 404. Answered here rather than by catch-all routes, so
  // a GET matches exactly one handler and Hono calls it directly, outside its middleware chain.
  app.notFound((c) => {
    const path = c.req.path;
    if (READ_ONLY_PATHS.has(path)) return errorResponse('method_not_allowed', { methods: 'GET', path }, { allow: 'GET, HEAD' });
    return errorResponse('not_found');
  });
  // Internal failures never echo details to the client (they may name store or key files); user input never lands here.
  // A lost store connection is 503, not a bug: the request failed closed and a retry may succeed.
  app.onError((e) => {
    if (options.storeHealth?.failed(e)) return storeUnavailableResponse('its storage refuses writes', STORE_OUTAGE_RETRY_AFTER_SECONDS);
    options.onError?.(e);
    return isConnectionLoss(e) ? storeUnavailableResponse() : errorResponse('internal_error');
  });

  // The Host check and the log wrap the router instead of being middleware in it: with no
  // middleware a handler that returns a Response (the offer endpoint always does on SQLite) is
  // answered in the same turn, and @hono/node-server writes its bytes at once, headers and body
  // in one write. Every request still passes both: `fetch` is the app's only entry (`request`
  // and the servers call it).
  const route = app.fetch;
  const misdirected =
    options.canonicalHostOnly !== false && typeof publisher !== 'function' ? canonicalHostOnly(publisher.canonicalDomain) : undefined;
  const guarded: Fetch = misdirected ? (req, env, ctx) => misdirected(req) ?? route(req, env, ctx) : route;
  app.fetch = options.log || options.observe ? logged(guarded, options) : guarded;
  return app;
}
