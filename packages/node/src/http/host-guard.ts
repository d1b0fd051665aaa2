import type { Context, MiddlewareHandler } from 'hono';
import { errorBody, JSON_TYPE } from '../request.js';

/**
 * 421 Misdirected Request (RFC 9110 §15.5.20) for a request whose `Host` is neither the canonical
 * domain nor a subdomain of it, before any handler runs, so no node data reaches it. Core VRP
 * v0.1 §2: a node speaks only for its canonical domain. It also shields a node on a local user's
 * machine from DNS rebinding (a page whose name was re-pointed at 127.0.0.1 sends its own Host).
 */
export function canonicalHostOnly(domainOf: (c: Context) => string): MiddlewareHandler {
  return async (c, next) => {
    const domain = domainOf(c);
    const host = requestHostName(c.req.header('host'));
    if (host === domain || host?.endsWith(`.${domain}`)) return next();
    return c.body(errorBody('misdirected_request', `this node serves https://${domain}`), 421, { 'content-type': JSON_TYPE });
  };
}

/** The DNS name a `Host` header names (lowercased; port and trailing dot removed), or undefined when it names none. */
export function requestHostName(header: string | null | undefined): string | undefined {
  const m = /^([a-z0-9.-]+?)\.?(?::\d{1,5})?$/i.exec(header?.trim() ?? '');
  return m?.[1]?.toLowerCase();
}
