/**
 * JWKS cache policy (Core VRP v0.1 §3.1; the refetch limits are vrpkit's, the spec leaves them open):
 * - an entry lives at most 300 s; `Cache-Control: max-age` may shorten that, never lengthen
 *   it, and `no-store` / `no-cache` mean it is not reused at all;
 * - a kid that is not in the cached set triggers one re-fetch before the offer is called
 *   unverifiable (refresh-on-miss);
 * - concurrent fetches of one JWKS URL share a single in-flight request (coalescing), and
 *   miss-triggered re-fetches are rate-limited per domain (Core VRP v0.1 §3.1 "SHOULD rate-limit"): a kid
 *   this cache has never seen for the domain may re-fetch at once — so two rotations seconds
 *   apart both verify — while a token bucket (`missRefetchBurst` tokens, one more every
 *   `minRefetchIntervalMs`, default 5 and 10 s) bounds them, so a stream of forged kids cannot
 *   turn the agent into a JWKS flood; a kid already seen and still missing re-fetches at most
 *   once per `minRefetchIntervalMs`;
 * - a failed fetch is unknown: a stale set is never served past its lifetime, and a failed
 *   refresh-on-miss does not fall back to the set that lacked the kid.
 * Presence in the current set is the whole trust signal: a removed (revoked) key stops
 * verifying as soon as the entry that held it expires, at most 300 s later.
 */
import { asRecord, type Clock, type FetchLike, jwkThumbprint, parseCompactJws, systemClock } from '@vrpkit/core';
import { JWKS_MAX_CACHE_SECONDS } from '@vrpkit/protocol';
import { getJsonText } from './http-get.js';
import { SIGNATURE_MEMO_ENTRIES, SignatureMemo } from './offer/signature-memo.js';

export interface JwksCacheOptions {
  /** The fetch used for JWKS documents (give it a `createHardenedFetch`). */
  fetch: FetchLike;
  /** Injected clock (epoch ms). */
  clock?: Clock;
  /** Lifetime cap in seconds; values above Core VRP v0.1 §3.1's 300 s are clamped to 300. */
  maxAgeSeconds?: number;
  /** Refill period of the per-domain miss re-fetch bucket, and the minimum spacing of re-fetches for a kid already seen (default 10 000 ms). */
  minRefetchIntervalMs?: number;
  /** Capacity of the per-domain miss re-fetch bucket (default 5): at most this many re-fetches at once, then one per interval. */
  missRefetchBurst?: number;
  /**
   * Bound on remembered successful signature checks (default 1000; 0 disables the memo). A hit
   * skips only the Ed25519 computation over bytes that already verified under the same key
   * (by RFC 7638 thumbprint); a key's entries go when this cache drops or replaces the key.
   */
  signatureMemoEntries?: number;
}

export type JwksFailureCode = 'jwks_unreachable' | 'jwks_http_error' | 'jwks_not_json' | 'jwks_schema_mismatch';

export type JwksLookup =
  | {
      ok: true;
      /** The JWKS document as served (the same object while the entry lives, so key imports stay cached). */
      jwks: { keys: Record<string, unknown>[] };
      /** When it was fetched (epoch ms) and until when it may be used. */
      fetchedAt: number;
      expiresAt: number;
      /** `cache` when no request was made for this lookup. */
      source: 'cache' | 'network';
    }
  | { ok: false; code: JwksFailureCode; message: string };

export const JWKS_MIN_REFETCH_INTERVAL_MS = 10_000;
export const JWKS_MISS_REFETCH_BURST = 5;
/** Kids remembered per domain; past this the memory starts over (every kid is new again, still bounded by the bucket). */
const SEEN_KIDS_LIMIT = 256;

/** Per domain: the miss re-fetch token bucket and the kids that already caused (or were refused) a re-fetch. */
interface MissBudget {
  tokens: number;
  refilledAt: number;
  lastRefetch: number;
  seen: Set<string>;
}

interface Entry {
  jwks: { keys: Record<string, unknown>[] };
  fetchedAt: number;
  expiresAt: number;
  /** RFC 7638 thumbprints of the set's Ed25519 keys, by JWK object (for the signature memo). */
  thumbprints: Map<Record<string, unknown>, string>;
}

const lookupOf = (e: Entry, source: 'cache' | 'network'): JwksLookup => ({
  ok: true,
  jwks: e.jwks,
  fetchedAt: e.fetchedAt,
  expiresAt: e.expiresAt,
  source,
});

/** Thumbprints of the Ed25519 keys of a key set; a key jose cannot thumbprint is left out (it never verifies from the memo). */
async function thumbprintsOf(keys: Record<string, unknown>[]): Promise<Map<Record<string, unknown>, string>> {
  const out = new Map<Record<string, unknown>, string>();
  for (const k of keys) {
    if (k.kty !== 'OKP' || k.crv !== 'Ed25519' || typeof k.x !== 'string') continue;
    try {
      out.set(k, await jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: k.x }));
    } catch {
      // Not a usable key: verifyOffer answers unsupported_key for it anyway.
    }
  }
  return out;
}

/** Seconds the response allows caching, capped by `cap` (Core VRP v0.1 §3.1: shorten only). */
export function cacheLifetimeSeconds(cacheControl: string | null, cap: number): number {
  if (!cacheControl) return cap;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  for (const d of directives) {
    const m = /^max-age\s*=\s*"?(\d+)"?$/.exec(d);
    if (m) return Math.min(Number(m[1]), cap);
  }
  return cap;
}

/** The protected-header `kid` of a compact JWS, the cache's refresh-on-miss hint (Core VRP v0.1 §3.1); undefined when it has none. */
export function jwsHeaderKid(jws: unknown): string | undefined {
  const parsed = parseCompactJws(jws);
  return parsed.ok && typeof parsed.jws.header.kid === 'string' ? parsed.jws.header.kid : undefined;
}

const hasKid = (jwks: Entry['jwks'], kid: string) => jwks.keys.some((k) => k.kid === kid);

export class JwksCache {
  readonly #fetch: FetchLike;
  readonly #clock: Clock;
  readonly #maxAgeMs: number;
  readonly #minRefetchMs: number;
  readonly #burst: number;
  readonly #entries = new Map<string, Entry>();
  /** Bumped by clear(): a fetch started under an older generation never fills the cache. */
  #generation = 0;
  readonly #inFlight = new Map<string, Promise<JwksLookup>>();
  /** Per domain (JWKS URL host): the miss re-fetch budget. */
  readonly #missBudget = new Map<string, MissBudget>();
  readonly #memo: SignatureMemo | undefined;

  constructor(options: JwksCacheOptions) {
    this.#fetch = options.fetch;
    this.#clock = options.clock ?? systemClock;
    this.#maxAgeMs = Math.min(options.maxAgeSeconds ?? JWKS_MAX_CACHE_SECONDS, JWKS_MAX_CACHE_SECONDS) * 1000;
    this.#minRefetchMs = options.minRefetchIntervalMs ?? JWKS_MIN_REFETCH_INTERVAL_MS;
    this.#burst = options.missRefetchBurst ?? JWKS_MISS_REFETCH_BURST;
    const memoEntries = options.signatureMemoEntries ?? SIGNATURE_MEMO_ENTRIES;
    this.#memo = memoEntries > 0 ? new SignatureMemo(memoEntries) : undefined;
  }

  /** The signature memo over the keys this cache holds (undefined when disabled). Internal to the package. */
  get signatureMemo(): SignatureMemo | undefined {
    return this.#memo;
  }

  /**
   * The JWKS at `jwksUrl`, for verifying a JWS whose header names `kid`. Served from the cache
   * while the entry lives and holds `kid`; otherwise fetched (a kid miss only within the
   * domain's re-fetch budget). With the kid still absent the caller's verifier answers
   * `kid_not_in_jwks`, i.e. unverifiable.
   */
  async get(jwksUrl: string, kid?: string): Promise<JwksLookup> {
    const now = this.#clock.now();
    const entry = this.#entries.get(jwksUrl);
    if (entry && now >= entry.expiresAt) this.#replace(jwksUrl, null);
    const live = entry && now < entry.expiresAt ? entry : undefined;
    if (live && (kid === undefined || hasKid(live.jwks, kid))) return lookupOf(live, 'cache');
    // Refresh on miss (Core VRP v0.1 §3.1), rate-limited per domain; a fetch already in flight is shared for free.
    if (live && !this.#inFlight.has(jwksUrl) && !this.#spendMissRefetch(new URL(jwksUrl).hostname, kid as string, now)) {
      return lookupOf(live, 'cache');
    }
    return this.#fetchCoalesced(jwksUrl);
  }

  /** Whether a miss on `kid` may re-fetch `domain`'s key set now; spends a token when it may. */
  #spendMissRefetch(domain: string, kid: string, now: number): boolean {
    let budget = this.#missBudget.get(domain);
    if (!budget) {
      budget = { tokens: this.#burst, refilledAt: now, lastRefetch: Number.NEGATIVE_INFINITY, seen: new Set() };
      this.#missBudget.set(domain, budget);
    }
    budget.tokens = Math.min(this.#burst, budget.tokens + (now - budget.refilledAt) / this.#minRefetchMs);
    budget.refilledAt = now;
    const firstSeen = !budget.seen.has(kid);
    if (firstSeen) {
      if (budget.seen.size >= SEEN_KIDS_LIMIT) budget.seen.clear();
      budget.seen.add(kid);
    }
    // A kid already seen is still missing after its own re-fetch: only the old once-per-interval rule.
    if (budget.tokens < 1 || (!firstSeen && now - budget.lastRefetch < this.#minRefetchMs)) return false;
    budget.tokens -= 1;
    budget.lastRefetch = now;
    return true;
  }

  /** Drop every entry (e.g. after a caller learns of a compromise out of band). */
  clear(): void {
    // A fetch already in flight was asked before the caller learnt what made it clear the cache:
    // its answer must neither be stored nor be shared with anyone who asks from now on.
    this.#generation++;
    this.#inFlight.clear();
    this.#entries.clear();
    this.#missBudget.clear();
    this.#memo?.clear();
  }

  #fetchCoalesced(jwksUrl: string): Promise<JwksLookup> {
    let pending = this.#inFlight.get(jwksUrl);
    if (!pending) {
      const started = this.#load(jwksUrl, this.#generation);
      pending = started.finally(() => {
        if (this.#inFlight.get(jwksUrl) === pending) this.#inFlight.delete(jwksUrl);
      });
      this.#inFlight.set(jwksUrl, pending);
    }
    return pending;
  }

  async #load(jwksUrl: string, generation: number): Promise<JwksLookup> {
    // The lifetime counts from the request, not the response (Core VRP v0.1 §3.1 cap: never longer).
    const requestedAt = this.#clock.now();
    const got = await getJsonText(this.#fetch, jwksUrl, 'JWKS');
    if (!got.ok) {
      this.#record(jwksUrl, generation, null);
      return { ok: false, code: 'jwks_unreachable', message: got.message };
    }
    const { res, text } = got;
    // Any failure drops the old entry: a stale set is never a fallback (fail closed).
    const fail = (code: JwksFailureCode, message: string): JwksLookup => {
      this.#record(jwksUrl, generation, null);
      return { ok: false, code, message };
    };
    if (res.status !== 200) return fail('jwks_http_error', `JWKS endpoint answered HTTP ${res.status}`);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return fail('jwks_not_json', 'JWKS response is not JSON');
    }
    const keys = asRecord(doc)?.keys;
    // Entries are checked as before (any non-null object): `isRecord` would also refuse an array entry, a change of verdict.
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'object' && k !== null)) {
      return fail('jwks_schema_mismatch', 'JWKS document has no keys array of objects (Core VRP v0.1 §3)');
    }
    const jwks = doc as Entry['jwks'];
    const thumbprints = this.#memo ? await thumbprintsOf(jwks.keys) : new Map();
    const fetchedAt = this.#clock.now();
    const lifetimeMs = cacheLifetimeSeconds(res.headers.get('cache-control'), this.#maxAgeMs / 1000) * 1000;
    const entry: Entry = { jwks, fetchedAt, expiresAt: requestedAt + lifetimeMs, thumbprints };
    this.#record(jwksUrl, generation, lifetimeMs > 0 ? entry : null);
    return lookupOf(entry, 'network');
  }

  /** Store (or, with null, drop) what one fetch learnt — only if no clear() happened since it started. */
  #record(jwksUrl: string, generation: number, entry: Entry | null): void {
    if (generation === this.#generation) this.#replace(jwksUrl, entry);
  }

  /**
   * Put `entry` (or nothing) in place of the URL's entry. The memo forgets every key that leaves
   * (revoked, rotated out, expired, or a failed re-fetch: Core VRP v0.1 §3.1) and learns the new
   * set's keys; only a key set held by this cache ever verifies from the memo.
   */
  #replace(jwksUrl: string, entry: Entry | null): void {
    const old = this.#entries.get(jwksUrl);
    if (entry) this.#entries.set(jwksUrl, entry);
    else this.#entries.delete(jwksUrl);
    if (!this.#memo) return;
    if (old) {
      // The old set's JWK objects stop counting as held keys too: a caller still holding that
      // document verifies against it in full.
      const kept = new Set(entry?.thumbprints.values());
      for (const [jwk, t] of old.thumbprints) {
        this.#memo.unsetThumbprint(jwk);
        if (!kept.has(t)) this.#memo.forget(t);
      }
    }
    if (entry) for (const [jwk, t] of entry.thumbprints) this.#memo.setThumbprint(jwk as { x: string }, t);
  }
}
