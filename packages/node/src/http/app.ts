/**
 * One Hono app per node (DESIGN §3): the well-known documents, the verified stay offer
 * endpoint and the booking page; the tool surfaces (MCP, A2A, WebMCP page) are mounted by
 * `mountSurfaces` on the same app, so every surface shares the one offer service.
 */
import { sha256Hex } from '@vrpkit/core';
import { DISCOVERY_PATH, JWKS_MAX_CACHE_SECONDS, JWKS_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { Hono } from 'hono';
import type { NodePublisher } from '../service.js';
import { mountSurfaces } from '../surfaces/index.js';
import { renderBookPage } from './book.js';

/** Longest raw query string the offer endpoint reads (three dates-and-count parameters fit in ~60 bytes). */
export const MAX_QUERY_LENGTH = 512;

/** One structured log line per request. The query string is a digest: raw tool arguments never reach a log. */
export interface RequestLogEntry {
  event: 'request';
  method: string;
  path: string;
  query_sha256: string | null;
  status: number;
  latency_ms: number;
}

export interface NodeAppOptions {
  log?: (entry: RequestLogEntry) => void;
  /** Called with every internal failure (the client only sees `internal_error`). */
  onError?: (error: unknown) => void;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** The raw query string of a request URL, without the `?`. */
function rawQuery(url: string): string {
  const i = url.indexOf('?');
  return i < 0 ? '' : url.slice(i + 1);
}

export function createNodeApp(service: NodePublisher, options: NodeAppOptions = {}): Hono {
  const app = new Hono();
  const { log } = options;

  if (log) {
    app.use(async (c, next) => {
      const started = performance.now();
      await next();
      const q = rawQuery(c.req.url);
      log({
        event: 'request',
        method: c.req.method,
        path: c.req.path,
        query_sha256: q ? sha256Hex(q).slice(0, 16) : null,
        status: c.res.status,
        latency_ms: Math.round((performance.now() - started) * 100) / 100,
      });
    });
  }

  // Core §2: discovery document.
  app.get(DISCOVERY_PATH, (c) => c.json(service.discovery(), 200, { 'cache-control': `public, max-age=${JWKS_MAX_CACHE_SECONDS}` }));

  // Core §3 / §3.1: every active and retained key; max-age ≤ 300 bounds revocation latency.
  app.get(JWKS_PATH, async (c) => c.json(await service.jwks(), 200, { 'cache-control': `public, max-age=${JWKS_MAX_CACHE_SECONDS}` }));

  // Core §4: GET ?check_in&check_out&guests → the signed envelope; malformed input → 400 {error:{code,message}}.
  app.get(OFFER_ENDPOINT_PATH, async (c) => {
    const headers = { 'content-type': JSON_TYPE, 'cache-control': 'no-store' };
    const q = rawQuery(c.req.url);
    if (q.length > MAX_QUERY_LENGTH) {
      return c.body(errorBody('query_too_long', `the query string is limited to ${MAX_QUERY_LENGTH} bytes`), 400, headers);
    }
    // A prototype-less object: a `__proto__` parameter is an unknown parameter, not a prototype.
    const args: Record<string, unknown> = Object.create(null);
    for (const [k, v] of new URLSearchParams(q)) {
      if (Object.hasOwn(args, k)) return c.body(errorBody('duplicate_parameter', `${k.slice(0, 40)} given more than once`), 400, headers);
      args[k] = v;
    }
    const outcome = await service.getServedOffer(args);
    if (!outcome.ok) return c.body(errorBody(outcome.error.code, outcome.error.message), 400, headers);
    // One Buffer with its length declared: @hono/node-server hands it to Node's http in one end() call.
    return c.body(outcome.body, 200, { ...headers, 'content-length': String(outcome.body.byteLength) });
  });

  // Core §5.1: the booking landing page re-quotes live and fails closed.
  app.get('/book', async (c) => {
    const r = await renderBookPage(service, new URLSearchParams(rawQuery(c.req.url)));
    return c.html(r.html, r.status, { 'cache-control': 'no-store' });
  });

  mountSurfaces(app, service);

  app.notFound((c) => c.body(errorBody('not_found', 'no such resource'), 404, { 'content-type': JSON_TYPE }));
  // Internal failures never echo details to the client (they may name store or key files); user input never lands here.
  app.onError((e, c) => {
    options.onError?.(e);
    return c.body(errorBody('internal_error', 'the node could not complete the request'), 500, { 'content-type': JSON_TYPE });
  });
  return app;
}
