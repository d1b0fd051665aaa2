/**
 * Discovery (Core VRP v0.1 §2; Safe-to-Quote conditions 1–3): the document is fetched over https from
 * the host domain itself; protocol's `checkDiscoveryDocument` reads it (through `DiscoveryDocumentSchema`)
 * and binds it to that domain: the protocol and version, exactly that `canonical_domain`, the JWKS and
 * offer endpoint on that same host.
 */
import { type Clock, type FetchLike, systemClock } from '@vrpkit/core';
import {
  checkDiscoveryDocument,
  DISCOVERY_PATH,
  type DiscoveryDocument,
  type DiscoveryDocumentCode,
  JWKS_MAX_CACHE_SECONDS,
} from '@vrpkit/protocol';
import { normalizeHost } from './canonical-domain.js';
import { getJsonText } from './http-get.js';
import { cacheLifetimeSeconds } from './jwks-cache.js';

/** Why discovery failed: the read itself (here), or the document (`checkDiscoveryDocument`'s codes). */
export type DiscoveryFailureCode =
  | 'invalid_domain'
  | 'discovery_unreachable'
  | 'discovery_http_error'
  | 'discovery_not_json'
  | DiscoveryDocumentCode;

export type DiscoveryOutcome =
  | { ok: true; domain: string; url: string; discovery: DiscoveryDocument }
  | { ok: false; domain: string; url: string | null; code: DiscoveryFailureCode; message: string };

/** The host of `https://DOMAIN`, `DOMAIN` or `DOMAIN/` as a normalised bare host, or null. */
export function domainOf(input: string): string | null {
  let host = input.trim();
  if (/^https:\/\//i.test(host)) {
    let url: URL;
    try {
      url = new URL(host);
    } catch {
      return null;
    }
    // A domain is a host: a path, query, port or userinfo is not part of it.
    if (url.port || url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return null;
    host = url.hostname;
  } else if (host.endsWith('/')) host = host.slice(0, -1);
  return normalizeHost(host);
}

/** Fetch and check `https://{domain}/.well-known/vacation-rental.json`. Never throws: failures are outcomes. */
export async function fetchDiscovery(domainInput: string, opts: { fetch: FetchLike }): Promise<DiscoveryOutcome> {
  return (await readDiscovery(domainInput, opts.fetch)).outcome;
}

/** One discovery read: the checked outcome and the `Cache-Control` header it was served with. */
async function readDiscovery(domainInput: string, fetch: FetchLike): Promise<{ outcome: DiscoveryOutcome; cacheControl: string | null }> {
  const domain = domainOf(domainInput);
  if (!domain) {
    return {
      outcome: { ok: false, domain: domainInput, url: null, code: 'invalid_domain', message: `not a host domain: ${domainInput}` },
      cacheControl: null,
    };
  }
  const url = `https://${domain}${DISCOVERY_PATH}`;
  const got = await getJsonText(fetch, url, 'discovery');
  if (!got.ok) return { outcome: { ok: false, domain, url, code: 'discovery_unreachable', message: got.message }, cacheControl: null };
  return { outcome: checkDiscovery(domain, url, got.res.status, got.text), cacheControl: got.res.headers.get('cache-control') };
}

/** Core VRP v0.1 §2 checks on a served discovery document: the HTTP answer here, the document itself in protocol. */
function checkDiscovery(domain: string, url: string, status: number, text: string): DiscoveryOutcome {
  if (status !== 200) return { ok: false, domain, url, code: 'discovery_http_error', message: `discovery answered HTTP ${status}` };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, domain, url, code: 'discovery_not_json', message: 'discovery response is not JSON' };
  }
  const checked = checkDiscoveryDocument(doc, domain);
  return checked.ok
    ? { ok: true, domain, url, discovery: checked.document }
    : { ok: false, domain, url, code: checked.code, message: checked.message };
}

/**
 * The discovery document under the JWKS's cache policy (Core VRP v0.1 §3.1 applied to the document that
 * names the JWKS): an entry lives at most 300 s, `Cache-Control: max-age` shortens that and
 * `no-store` / `no-cache` mean no reuse; concurrent reads of one domain share one request; a
 * failed or refused document is never cached (the next verification asks again). `get(domain,
 * { refresh: true })` skips the entry: callers use it when a verification failed for a reason a
 * newer document could fix (another offer endpoint or JWKS URL).
 */
export class DiscoveryCache {
  readonly #fetch: FetchLike;
  readonly #clock: Clock;
  readonly #maxAgeSeconds: number;
  readonly #entries = new Map<string, { outcome: DiscoveryOutcome & { ok: true }; expiresAt: number }>();
  readonly #inFlight = new Map<string, Promise<DiscoveryOutcome>>();

  constructor(options: { fetch: FetchLike; clock?: Clock; maxAgeSeconds?: number }) {
    this.#fetch = options.fetch;
    this.#clock = options.clock ?? systemClock;
    this.#maxAgeSeconds = Math.min(options.maxAgeSeconds ?? JWKS_MAX_CACHE_SECONDS, JWKS_MAX_CACHE_SECONDS);
  }

  /** The checked discovery outcome for `domain`, from the cache while its entry lives (unless `refresh`). */
  get(domainInput: string, options: { refresh?: boolean } = {}): Promise<DiscoveryOutcome> {
    const key = domainOf(domainInput) ?? domainInput;
    const entry = this.#entries.get(key);
    if (entry && !options.refresh && this.#clock.now() < entry.expiresAt) return Promise.resolve(entry.outcome);
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#load(key, domainInput).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  async #load(key: string, domainInput: string): Promise<DiscoveryOutcome> {
    // The lifetime counts from the request, not the response: never longer than the cap.
    const requestedAt = this.#clock.now();
    const { outcome, cacheControl } = await readDiscovery(domainInput, this.#fetch);
    const lifetimeMs = cacheLifetimeSeconds(cacheControl, this.#maxAgeSeconds) * 1000;
    if (outcome.ok && lifetimeMs > 0) this.#entries.set(key, { outcome, expiresAt: requestedAt + lifetimeMs });
    else this.#entries.delete(key);
    return outcome;
  }
}
