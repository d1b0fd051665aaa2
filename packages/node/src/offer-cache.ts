/**
 * The signed-offer cache: the exact response of a signed offer, reused for the same stay while
 * nothing that could change the offer has changed. Core VRP v0.1 §6 lets `valid_until` govern an
 * offer's life, so an agent may receive an offer signed up to the cache's max-age ago: its
 * `generated_at` stays the moment it was signed.
 *
 * What makes an entry true is in its key: the domain and the node's creation time (a platform
 * tenant removed and added again under its domain is another node, whose first revision and
 * kid may repeat the old one's), the request (check_in, check_out, guests,
 * language), the store revision (every store write bumps it: bookings, blocks, calendar syncs,
 * property and price changes, key rotation and revocation), the active signing key's kid, and
 * the property's local date (the day decides `date_in_past`, the booking horizon and the host
 * alternatives' search window). What only time changes is in the entry's deadline: its age, a
 * margin before `valid_until`, and the moment an imported calendar turns stale.
 *
 * Bounded by bytes (an LRU over an estimate of each entry's heap size), never by entry count.
 */
import { LRUCache } from 'lru-cache';
import { NodeError } from './errors.js';
import type { SignedOffer } from './offer.js';

/** `--offer-cache-max-age` default: an offer is reused for at most this many seconds after signing. */
export const DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS = 60;
/** Longest `--offer-cache-max-age` accepted: an hour (reuse is bounded by `valid_until` minus the margin anyway). */
export const MAX_OFFER_CACHE_MAX_AGE_SECONDS = 3600;
/** Default memory bound of one node's cache. */
export const DEFAULT_OFFER_CACHE_MAX_BYTES = 64 * 1024 * 1024;
/** An offer is never handed out this close to its `valid_until`: an agent needs time to verify and quote it. */
export const OFFER_CACHE_VALIDITY_MARGIN_MS = 5 * 60_000;

/** What identifies a signed offer's truth (see the module comment). */
export interface OfferCacheKey {
  domain: string;
  /** The node's `created_at` (its store info): which node of that domain signed. */
  created_at: string;
  check_in: string;
  check_out: string;
  guests: number;
  language?: string;
  revision: number;
  kid: string;
  /** The property's local date when the offer was signed. */
  today: string;
}

/** A signed offer as the offer service answers it (`OfferOutcome`'s success). */
export type ServedOffer = { ok: true } & SignedOffer;

interface Entry {
  response: ServedOffer;
  /** When the offer was signed (epoch ms, the node's clock). */
  signedAt: number;
  /** First instant (epoch ms) at which the entry is no longer served. */
  notAfter: number;
}

/**
 * Heap estimate of one entry: the body buffer, the one-byte JSON string of the same length, the
 * parsed envelope (measured at about twice the JSON's size on V8) and, once the offer was served
 * over MCP, the MCP answer's bytes the surface keeps beside it (what follows the receipt: the
 * envelope as a JSON string literal and as itself, about twice the body; and the last answer up to
 * its JSON-RPC id, about three times). Only the bound needs it.
 */
const entrySize = (e: Entry) => 9 * e.response.body.byteLength + 256;

export interface OfferCacheOptions {
  /** Seconds an offer is reused after signing; must be > 0 (0 means no cache: see `createOfferCache`). */
  maxAgeSeconds: number;
  maxBytes?: number;
}

export class OfferCache {
  private readonly entries: LRUCache<string, Entry>;
  readonly maxAgeMs: number;
  /** Lookups answered from the cache, and lookups that had to sign (for metrics). */
  hits = 0;
  misses = 0;

  constructor(o: OfferCacheOptions) {
    this.maxAgeMs = o.maxAgeSeconds * 1000;
    this.entries = new LRUCache<string, Entry>({ maxSize: o.maxBytes ?? DEFAULT_OFFER_CACHE_MAX_BYTES, sizeCalculation: entrySize });
  }

  /** Estimated heap bytes held (what the `maxBytes` bound counts). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  /** The fields are validated upstream (dates, integers, a BCP 47 tag, a kid and domain of the node), so a space cannot occur in one. */
  static key(k: OfferCacheKey): string {
    return `${k.domain} ${k.created_at} ${k.check_in} ${k.check_out} ${k.guests} ${k.language ?? ''} ${k.revision} ${k.kid} ${k.today}`;
  }

  /** The response stored under `key`, if it may still be served at `now`. */
  get(key: string, now: number): ServedOffer | undefined {
    const e = this.entries.get(key);
    if (!e) {
      this.misses++;
      return undefined;
    }
    // A clock that went back never sees an offer "generated" in its future.
    if (now < e.signedAt || now >= e.notAfter) {
      this.entries.delete(key);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return e.response;
  }

  /**
   * Keep `response`, signed at `signedAt`, until the first of: max-age, `valid_until` minus the
   * margin, and `changesAt` (when time alone changes what the node would sign, e.g. a calendar
   * feed turning stale). An offer that would never be servable is not kept.
   */
  set(key: string, response: ServedOffer, signedAt: number, changesAt: number): void {
    const notAfter = Math.min(
      signedAt + this.maxAgeMs,
      Date.parse(response.envelope.offer.valid_until) - OFFER_CACHE_VALIDITY_MARGIN_MS,
      changesAt,
    );
    if (notAfter > signedAt) this.entries.set(key, { response, signedAt, notAfter });
  }
}

/** The cache for `maxAgeSeconds` (`--offer-cache-max-age`), or none when it is 0. */
export function createOfferCache(maxAgeSeconds: number, maxBytes?: number): OfferCache | null {
  if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 0 || maxAgeSeconds > MAX_OFFER_CACHE_MAX_AGE_SECONDS)
    throw new NodeError('invalid_offer_cache_max_age', { max: MAX_OFFER_CACHE_MAX_AGE_SECONDS });
  return maxAgeSeconds === 0 ? null : new OfferCache({ maxAgeSeconds, ...(maxBytes !== undefined ? { maxBytes } : {}) });
}
