/**
 * The one offer service behind every surface (Node Tool Binding v0.1 §5: thin adapters, one
 * source). A surface parses what it received with the protocol's one parser and hands the parsed
 * request to `offer`; the service reads the store, judges the stay against the property's today,
 * horizon and calendar (calendar.ts) and signs the offer, reusing a signed response from the
 * signed-offer cache while nothing that could change it has changed (signing.ts). The discovery
 * document and the JWKS (discovery.ts) and a booking's live re-quote are served from the same state.
 */
import { type Clock, systemClock } from '@vrpkit/core';
import {
  JWKS_PATH,
  OFFER_ENDPOINT_PATH,
  type OfferRequestRefusal,
  type ParsedOfferRequest,
  parseOfferRequest,
  stayWindowRefusal,
} from '@vrpkit/protocol';
import type { LiveQuote } from '../booking/ports.js';
import { localDate } from '../dates.js';
import { jwksAt, KeyRing, keyFileSource, type PrivateKeySource } from '../keys.js';
import { createOfferCache, DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS, type OfferCache } from '../offer-cache.js';
import type { StoreSnapshot } from '../store/store.js';
import { calendarDays, judgeStay, type StayJudgement } from './calendar.js';
import { discoveryDocument } from './discovery.js';
import { createOfferSigning, type OfferSigning } from './signing.js';
import { type OfferState, OfferStates } from './state.js';
import type { NodePublisher, OfferOptions, OfferOutcome, OfferService, SnapshotSource } from './types.js';

export type {
  CalendarDay,
  NodePublisher,
  OfferOptions,
  OfferOutcome,
  OfferService,
  PropertyView,
  SnapshotSource,
  StayPreview,
} from './types.js';

export interface OfferServiceOptions {
  store: SnapshotSource;
  /** The node's `keys/` directory, or a function returning a kid's private JWK (a platform tenant's key custody). */
  keys: string | PrivateKeySource;
  /** The node's clock (default the system clock); which key signs and every offer's times are read from it. */
  clock?: Clock;
  /** Seconds a served offer is reused (`--offer-cache-max-age`): an integer from 0 (no reuse) to 3600; default 60. */
  offerCacheMaxAgeSeconds?: number;
  /** Memory bound of the signed-offer cache in bytes (default 64 MiB). */
  offerCacheMaxBytes?: number;
  /**
   * A signed-offer cache shared with other services (platform mode: one for every tenant, its
   * keys carry the domain), or null for none; replaces the cache the two options above would make.
   */
  offerCache?: OfferCache | null;
  /** Called before every Ed25519 signature this service makes (offers, MCP receipts), with its kid: platform metrics count them; a throw refuses the signature. */
  onSignature?: (kid: string) => void;
}

/**
 * The offer for raw arguments as a surface received them: a tool call's JSON object (MCP, A2A,
 * WebMCP) or an HTTP query (repeated keys kept), `snake_case` keys with the `camelCase` date
 * aliases (Node Tool Binding v0.1 §4). The protocol's one parser, then `service.offer`.
 */
export function offerFor(service: OfferService, input: unknown, options?: OfferOptions): OfferOutcome | Promise<OfferOutcome> {
  const parsed = parseOfferRequest(input);
  return parsed.ok ? service.offer(parsed.request, options) : parsed;
}

/** The answer to `r` at `t` from `s`: refused by the stay window, signed afresh, or served (cache, signing turn). */
function answer(
  signing: OfferSigning,
  r: ParsedOfferRequest,
  t: number,
  s: OfferState,
  fresh: boolean,
): OfferOutcome | Promise<OfferOutcome> {
  const today = localDate(t, s.p.time_zone);
  // Core VRP v0.1 §4: a refusal never reaches pricing or the signer.
  const refusal = stayWindowRefusal(r, { today, horizonDays: s.p.booking_horizon_days });
  if (refusal) return { ok: false, error: refusal };
  return fresh ? { ok: true, ...signing.sign(judgeStay(r, t, s, today), s) } : signing.serve(r, t, s, today);
}

/** `stay` judged from `s` at `t` as an offer would be (Core VRP v0.1 §4 window first), nothing signed. */
function judgeAt(stay: ParsedOfferRequest, t: number, s: OfferState): StayJudgement | { ok: false; error: OfferRequestRefusal } {
  const today = localDate(t, s.p.time_zone);
  const refusal = stayWindowRefusal(stay, { today, horizonDays: s.p.booking_horizon_days });
  return refusal ? { ok: false, error: refusal } : judgeStay(stay, t, s, today);
}

/** The live re-quote of a booking (booking/ports.ts): judged from `s` at `t`, signed only when asked for. */
function liveQuote(signing: OfferSigning, stay: ParsedOfferRequest, t: number, s: OfferState): LiveQuote {
  const j = judgeAt(stay, t, s);
  if ('ok' in j) return j;
  const total = j.outcome.available ? j.outcome.price.total : null;
  const signedJws = () => signing.sign(j, s).envelope.signature.jws;
  return {
    ok: true,
    available: j.outcome.available,
    mayQuote: j.mayQuote,
    total,
    currency: s.p.currency,
    propertyId: s.p.property_id,
    signedJws,
  };
}

/** Open the offer service over a store. Every offer reads the store's revision and works from its current state. */
export async function createOfferService(o: OfferServiceOptions): Promise<NodePublisher> {
  const { store } = o;
  const clock = o.clock ?? systemClock;
  const cache =
    o.offerCache !== undefined
      ? o.offerCache
      : createOfferCache(o.offerCacheMaxAgeSeconds ?? DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS, o.offerCacheMaxBytes);
  const first = await store.snapshot();
  const { canonical_domain: domain, node_id, created_at } = first.info;
  const origin = `https://${domain}`;
  const jwksUrl = `${origin}${JWKS_PATH}`;
  const keyRing = new KeyRing(typeof o.keys === 'string' ? keyFileSource(o.keys) : o.keys, clock, o.onSignature);
  keyRing.signerFor(first.keys);
  const states = new OfferStates(domain, keyRing, first);
  const signing = createOfferSigning({ cache, domain, createdAt: created_at, jwksUrl });
  /** The store as of now (one revision read; reloaded only when a write happened). */
  const load = async () => states.of(await store.snapshot(clock.now()));

  /** The state without waiting for the store, when that is known (and no lapsed hold is to be expired first). */
  function stateNow(t: number): OfferState | null {
    const now = store.snapshotNow?.() ?? null;
    // A lapsed hold frees its dates only once `snapshot` has expired it (a write): that path waits.
    if (!now || (now.nextHoldExpiry !== null && Date.parse(now.nextHoldExpiry) <= t)) return null;
    return states.of(now);
  }

  return {
    canonicalDomain: domain,
    origin,
    jwksUrl,
    offerEndpoint: `${origin}${OFFER_ENDPOINT_PATH}`,
    offer(request, options = {}) {
      const fresh = options.fresh === true;
      const t = clock.now();
      const s = fresh ? null : stateNow(t);
      if (s) return answer(signing, request, t, s, false);
      return load().then((loaded) => answer(signing, request, clock.now(), loaded, fresh));
    },
    requote: (state: StoreSnapshot, stay) => liveQuote(signing, stay, clock.now(), states.aside(state)),
    async preview(stay, draft) {
      const t = clock.now();
      const snapshot = await store.snapshot(t);
      // A draft is judged against the same calendar, feeds and keys: only the property differs.
      const j = judgeAt(stay, t, states.aside(draft ? { ...snapshot, property: draft } : snapshot));
      if ('ok' in j) return j;
      const { outcome } = j;
      return {
        ok: true,
        available: outcome.available,
        reason: outcome.available ? null : outcome.reason,
        price: outcome.available ? outcome.price : null,
        mayQuote: j.mayQuote,
        currency: (draft ?? snapshot.property).currency,
      };
    },
    property: () => states.view,
    async calendar(from, days) {
      const t = clock.now();
      return calendarDays(await load(), from, days, t);
    },
    activeSigner: () => keyRing.current(),
    now: () => clock.now(),
    discovery: () => discoveryDocument(domain, node_id, states.current.property),
    jwks: async () => {
      // The JWKS read doubles as a key-ring refresh, so the sync activeSigner() follows rotations too.
      await load();
      return jwksAt(states.current.keys, clock.now());
    },
  };
}
