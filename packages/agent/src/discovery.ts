/**
 * Discovery (Core VRP v0.1 §2; Safe-to-Quote conditions 1–3): the document is fetched over https from
 * the host domain itself, names the protocol and version, claims exactly that domain as its
 * `canonical_domain`, and points its JWKS and offer endpoint at https URLs on that same host.
 * Only the spec's field names are read (Core VRP v0.1 §2): hemmabo's aliases (`jwks_uri`,
 * `version`, `domain`, `endpoints.*`) are not accepted, so a document is read one way only.
 */
import { type Clock, type FetchLike, isRecord, systemClock } from '@vrpkit/core';
import { DISCOVERY_PATH, type DiscoveryDocument, JWKS_MAX_CACHE_SECONDS, PROTOCOL, PROTOCOL_VERSION } from '@vrpkit/protocol';
import { normalizeHost } from './canonical-domain.js';
import { getJsonText } from './http-get.js';
import { cacheLifetimeSeconds } from './jwks-cache.js';

export type DiscoveryFailureCode =
  | 'invalid_domain'
  | 'discovery_unreachable'
  | 'discovery_http_error'
  | 'discovery_not_json'
  | 'discovery_schema_mismatch'
  | 'protocol_mismatch'
  | 'canonical_domain_mismatch'
  | 'jwks_url_off_domain'
  | 'offer_endpoint_off_domain';

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

/** True for an https URL whose host is exactly `domain` on the default port, without userinfo. */
function isHttpsUrlOn(value: unknown, domain: string): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname === domain && url.port === '' && !url.username && !url.password;
  } catch {
    return false;
  }
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

/** Core VRP v0.1 §2 checks on a served discovery document. */
function checkDiscovery(domain: string, url: string, status: number, text: string): DiscoveryOutcome {
  const fail = (code: DiscoveryFailureCode, message: string): DiscoveryOutcome => ({ ok: false, domain, url, code, message });
  if (status !== 200) return fail('discovery_http_error', `discovery answered HTTP ${status}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return fail('discovery_not_json', 'discovery response is not JSON');
  }
  if (!isRecord(doc)) return fail('discovery_schema_mismatch', 'discovery document is not an object');
  const d = doc;
  // Core VRP v0.1 §7 conditions 2–3.
  if (d.protocol !== PROTOCOL || d.protocol_version !== PROTOCOL_VERSION) {
    return fail('protocol_mismatch', `discovery names protocol ${String(d.protocol)} ${String(d.protocol_version)}`);
  }
  // Core VRP v0.1 §2: canonical_domain MUST match the host domain being verified (schema: lowercase, no scheme or port).
  if (typeof d.canonical_domain !== 'string' || !/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(d.canonical_domain)) {
    return fail('discovery_schema_mismatch', 'canonical_domain is missing or not a lowercase host name');
  }
  if (d.canonical_domain !== domain) return fail('canonical_domain_mismatch', `canonical_domain ${d.canonical_domain} is not ${domain}`);
  // Core VRP v0.1 §2 / Node Tool Binding v0.1 §6: the JWKS and the offer come from the node's own host.
  if (!isHttpsUrlOn(d.jwks_url, domain) || !/\/\.well-known\/jwks\.json$/.test(String(d.jwks_url))) {
    return fail('jwks_url_off_domain', `jwks_url is not https://${domain}/.well-known/jwks.json`);
  }
  if (!isHttpsUrlOn(d.verified_stay_offer_endpoint, domain)) {
    return fail('offer_endpoint_off_domain', `verified_stay_offer_endpoint is not an https URL on ${domain}`);
  }
  return { ok: true, domain, url, discovery: d as DiscoveryDocument };
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
