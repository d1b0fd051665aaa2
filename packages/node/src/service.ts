/**
 * The one offer service behind every surface (Node Tool Binding v0.1 §5: three adapters, one
 * source). Every surface hands the raw argument object it received to the service; the service
 * reads the store, prices, checks availability and calendar freshness, and signs the offer.
 * `getServedOffer` (the offer endpoint, MCP) reuses a signed response from the signed-offer
 * cache while nothing that could change it has changed (offer-cache.ts); `getOffer` (the
 * booking page's live re-quote) always signs afresh.
 */
import { randomUUID } from 'node:crypto';
import type { JwsSigner } from '@vrpkit/core';
import { type Clock, systemClock } from '@vrpkit/core';
import {
  AGENT_CARD_PATH,
  DISCOVERY_PATH,
  type DiscoveryDocument,
  JWKS_PATH,
  MCP_ENDPOINT_PATH,
  OFFER_ENDPOINT_PATH,
  type OfferRequestInput,
  type ParsedOfferRequest,
  PROTOCOL,
  PROTOCOL_VERSION,
  parseOfferRequest,
  type RefundScheduleRow,
  type VrpJwks,
} from '@vrpkit/protocol';
import { blockedNights, calendarFreshness, calendarFreshnessMemo, hostAlternatives, type UnavailableReason } from './availability.js';
import { addDays, dayNumber, localDate, nightsOf } from './dates.js';
import { OfferRequestError } from './errors.js';
import { jwksAt, KeyRing, keyFileSource, type PrivateKeySource } from './keys.js';
import { buildOfferPayload, type HostAlternatives, OfferTemplate, type SignedOffer, signOffer } from './offer.js';
import { createOfferCache, DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS, OfferCache, type ServedOffer } from './offer-cache.js';
import { rateForNight } from './pricing.js';
import { currencyMinorDigits, type PropertyDescription } from './property.js';
import { inSigningTurn } from './signing-turn.js';
import type { StoreSnapshot } from './store/store.js';

/** One offer service behind every surface (Node Tool Binding v0.1 §5: three adapters, one source). */
export interface OfferService {
  readonly canonicalDomain: string;
  readonly origin: string;
  readonly jwksUrl: string;
  readonly offerEndpoint: string;
  /** Raw arguments as a surface received them: a JSON object (MCP/A2A/WebMCP) or the HTTP query (repeated keys kept);
   *  snake_case check_in/check_out/guests, camelCase checkIn/checkOut accepted as aliases (§4).
   *  Always signs afresh: for a live re-quote (the booking page, Core VRP v0.1 §5.1). */
  getOffer(args: OfferRequestInput): Promise<OfferOutcome>;
  /** The offer as served to agents: the same arguments and outcome as `getOffer`, but a response
   *  signed up to `--offer-cache-max-age` seconds ago is reused (byte for byte) while the store
   *  revision, the signing key and the property's local date are unchanged (Core VRP v0.1 §6: `valid_until`
   *  governs). The returned envelope is shared between calls: never mutate it. `args` may be the
   *  endpoint's raw query string, as for `servedOfferNow`. */
  getServedOffer(args: OfferRequestInput | string): Promise<OfferOutcome>;
  /**
   * What `getServedOffer(args)` answers, without waiting for the store when its state is known
   * synchronously (SQLite, unchanged since the last snapshot, no lapsed hold to expire): a
   * refusal or a cached response at once (the offer endpoint then answers in the same turn, as
   * prebuilt bytes), or the promise of an offer signed in this turn's signing batch
   * (signing-turn.ts). Null when the store read would wait (PostgreSQL, a write to reload, a
   * hold to expire): the caller takes `getServedOffer`. `args` may be the endpoint's raw query
   * string (without `?`): its accepted parses are remembered, so a stay asked again skips
   * decoding and parsing.
   */
  servedOfferNow?(args: OfferRequestInput | string): OfferOutcome | Promise<OfferOutcome> | null;
  /** Property facts for human pages. */
  property(): PropertyView;
  /** Day-by-day availability and nightly rate for a page calendar (YYYY-MM-DD from, number of days). */
  calendar(from: string, days: number): Promise<CalendarDay[]>;
  /** The key ring's active signer: the same Ed25519 key signs offers and MCP transport assertions (MCP composition profile). */
  activeSigner(): JwsSigner;
  /** The node's clock (epoch ms); injected in tests. */
  now(): number;
}

/**
 * What the node's own HTTP app needs beyond the surfaces' contract: the well-known documents.
 * `createOfferService` returns one; `createNodeApp` takes one.
 */
export interface NodePublisher extends OfferService {
  /** Core VRP v0.1 §2 discovery document (`/.well-known/vacation-rental.json`). */
  discovery(): DiscoveryDocument;
  /** Core VRP v0.1 §3 JWKS at the node's clock: active and retained keys. */
  jwks(): Promise<VrpJwks>;
  /** The live re-quote of a booking request: `getOffer` computed from the store state `state` (read inside the hold's transaction). */
  quoteFrom(state: StoreSnapshot, args: OfferRequestInput): OfferOutcome;
}

/** A signed offer (`json` is the exact response body, `body` its UTF-8 bytes) or a malformed request's error. */
export type OfferOutcome = ServedOffer | { ok: false; error: { code: string; message: string } };

export interface CalendarDay {
  date: string;
  available: boolean;
  nightly_rate: number | null;
}

export interface PropertyView {
  property_id: string;
  name: string;
  description: string;
  url: string;
  city: string | null;
  country: string | null;
  time_zone: string;
  currency: string;
  /** ISO 4217 minor-unit digits: amounts are integers in 10^-digits of the currency. */
  currency_minor_digits: number;
  max_guests: number;
  min_nights: number;
  max_nights: number;
  check_in_time: string;
  check_out_time: string;
  pets_label: string | null;
  rates: PropertyDescription['rates'];
  fees: PropertyDescription['fees'];
  refund_schedule: RefundScheduleRow[] | null;
  booking_horizon_days: number;
  offer_lifetime_minutes: number;
}

/** Most raw query strings whose accepted parse the offer endpoint remembers (the memo is emptied when full). */
const PARSED_QUERIES_MAX = 4096;

/**
 * The offer endpoint's accepted parses by raw query string, one memo for the process (every node
 * service in it, every platform tenant: the bound holds once). The parser's answer depends only
 * on the query, the property's today and its booking horizon, so it is reused while both are
 * those it was made under. Refusals are not kept (a client cannot fill the memo with them).
 */
const parsedQueries = new Map<string, { today: string; horizonDays: number; parsed: { ok: true; request: ParsedOfferRequest } }>();

/** Core VRP v0.1 §4: `parseOfferRequest` of the raw query string `query`, through the memo above. */
function parseOfferQuery(query: string, today: string, horizonDays: number) {
  const known = parsedQueries.get(query);
  if (known && known.today === today && known.horizonDays === horizonDays) return known.parsed;
  const parsed = parseOfferRequest(new URLSearchParams(query), { today, horizonDays });
  if (parsed.ok) {
    if (parsedQueries.size >= PARSED_QUERIES_MAX) parsedQueries.clear();
    parsedQueries.set(query, { today, horizonDays, parsed });
  }
  return parsed;
}
/** How far ahead `host_alternatives.next_available` looks. */
const ALTERNATIVES_SEARCH_DAYS = 60;
/** Longest range a page calendar may ask for. */
const MAX_CALENDAR_DAYS = 400;

function viewOf(p: PropertyDescription, domain: string): PropertyView {
  return {
    property_id: p.property_id,
    name: p.name,
    description: p.description,
    url: p.url ?? `https://${domain}/`,
    city: p.city,
    country: p.country,
    time_zone: p.time_zone,
    currency: p.currency,
    currency_minor_digits: currencyMinorDigits(p.currency),
    max_guests: p.max_guests,
    min_nights: p.min_nights,
    max_nights: p.max_nights,
    check_in_time: p.check_in_time,
    check_out_time: p.check_out_time,
    pets_label: p.pets_label,
    rates: p.rates,
    fees: p.fees,
    refund_schedule: p.refund_schedule,
    booking_horizon_days: p.booking_horizon_days,
    offer_lifetime_minutes: p.offer_lifetime_minutes,
  };
}

/** What the offer service reads its store through: one snapshot per request (`NodeStore`, or a platform tenant's rows). */
export interface SnapshotSource {
  /** The state as of `now` (a NodeStore also expires lapsed booking holds at `now`). */
  snapshot(now?: number): Promise<StoreSnapshot>;
  /** The state without waiting, when it is known unchanged (NodeStore on SQLite); absent or null: use `snapshot`. */
  snapshotNow?(): StoreSnapshot | null;
}

export interface OfferServiceOptions {
  store: SnapshotSource;
  /** The node's `keys/` directory, or a function returning a kid's private JWK (a platform tenant's key custody). */
  keys: string | PrivateKeySource;
  /** The node's clock (default the system clock); which key signs and every offer's times are read from it. */
  clock?: Clock;
  /** Seconds a signed offer is reused by `getServedOffer` (`--offer-cache-max-age`): an integer from 0 (no reuse) to 3600; default 60. */
  offerCacheMaxAgeSeconds?: number;
  /** Memory bound of the signed-offer cache in bytes (default 64 MiB). */
  offerCacheMaxBytes?: number;
  /**
   * A signed-offer cache shared with other services (platform mode: one for every tenant, its
   * keys carry the domain), or null for none; replaces the cache the two options above would make.
   */
  offerCache?: OfferCache | null;
  /** Called after every Ed25519 signature this service makes (offers, MCP receipts): platform metrics count them. */
  onSignature?: () => void;
}

/** Open the offer service over a store. Every offer reads the store's revision and works from its current state. */
export async function createOfferService(o: OfferServiceOptions): Promise<NodePublisher> {
  const { store } = o;
  const clock = o.clock ?? systemClock;
  const cache =
    o.offerCache !== undefined
      ? o.offerCache
      : createOfferCache(o.offerCacheMaxAgeSeconds ?? DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS, o.offerCacheMaxBytes);
  let snap = await store.snapshot();
  const { info } = snap;
  const domain = info.canonical_domain;
  const { created_at } = info;
  const origin = `https://${domain}`;
  const jwksUrl = `${origin}${JWKS_PATH}`;
  const keyRing = new KeyRing(typeof o.keys === 'string' ? keyFileSource(o.keys) : o.keys, clock, o.onSignature);
  keyRing.signerFor(snap.keys);
  let view = viewOf(snap.property, domain);

  /** What the offers signed from the store state `state` share: the offer template and the calendar freshness. */
  const offerBasis = (state: StoreSnapshot) => ({
    template: new OfferTemplate(domain, info.node_id, state.property),
    freshness: calendarFreshnessMemo(state.feeds, state.property.calendar_max_age_minutes),
  });
  let basis = offerBasis(snap);

  /** What the offer path reads from the store state `state`, given what its offers share. */
  const loadedOf = (state: StoreSnapshot, shared: ReturnType<typeof offerBasis>) => {
    const { revision, property: p, feeds, blocks, keys } = state;
    return { revision, p, feeds, blocks, signer: keyRing.signerFor(keys), ...shared };
  };
  /** The last `loaded` answer: the same object while the snapshot and the signing key stay (a cache hit allocates none). */
  let lastLoaded: ReturnType<typeof loadedOf> | undefined;
  let lastLoadedFrom: StoreSnapshot | undefined;
  /** What the offer path reads from a snapshot, with the derived views kept in step (built once per snapshot). */
  const loaded = (next: StoreSnapshot) => {
    if (next !== snap) {
      snap = next;
      view = viewOf(snap.property, domain);
      basis = offerBasis(snap);
    }
    const signer = keyRing.signerFor(snap.keys);
    if (lastLoaded === undefined || lastLoadedFrom !== snap || lastLoaded.signer !== signer) {
      lastLoaded = loadedOf(snap, basis);
      lastLoadedFrom = snap;
    }
    return lastLoaded;
  };
  /** The store as of now (one revision read; reloaded only when a write happened). */
  const load = async () => loaded(await store.snapshot(clock.now()));
  type Loaded = ReturnType<typeof loaded>;

  function discovery(): DiscoveryDocument {
    return {
      protocol: PROTOCOL,
      protocol_version: PROTOCOL_VERSION,
      canonical_domain: domain,
      node_id: info.node_id,
      jwks_url: jwksUrl,
      verified_stay_offer_endpoint: `${origin}${OFFER_ENDPOINT_PATH}`,
      capabilities: { signed_verified_stay_offer: true, live_availability: true, exact_total_price: true, direct_booking_url: true },
      // Core VRP v0.1 §2: who holds the signing key; a verifier must not assume self-custody when absent.
      operator: {
        name: snap.property.operator.name ?? snap.property.name,
        role: snap.property.operator.role,
        key_custody: snap.property.operator.key_custody,
      },
      endpoints: {
        discovery: `${origin}${DISCOVERY_PATH}`,
        jwks: jwksUrl,
        verified_stay_offer: `${origin}${OFFER_ENDPOINT_PATH}`,
        booking: `${origin}/book`,
        mcp: `${origin}${MCP_ENDPOINT_PATH}`,
        agent_card: `${origin}${AGENT_CARD_PATH}`,
      },
    };
  }

  /** Sign the offer for a request the parser accepted, at `t`, from the store state `s` (Core VRP v0.1 §5, §7). */
  function signFresh(r: ParsedOfferRequest, t: number, s: Loaded, today: string): SignedOffer {
    const { p, blocks, signer, template } = s;
    const freshness = s.freshness(t);
    const nights = nightsOf(r.check_in, r.check_out);
    // Core VRP v0.1 §7: each reason is a signed negative; guest count and stay length first, then the calendar.
    let reason: UnavailableReason | null = null;
    if (r.guests > p.max_guests) reason = 'exceeds_max_guests';
    else if (r.nights < p.min_nights) reason = 'below_minimum_stay';
    else if (r.nights > p.max_nights) reason = 'above_maximum_stay';
    else if (blockedNights(blocks, nights).size > 0) reason = 'not_available';
    else if (!freshness.value.safe) reason = 'calendar_stale';

    let alternatives: HostAlternatives | undefined;
    if (reason === 'not_available' || reason === 'below_minimum_stay' || reason === 'above_maximum_stay') {
      const alt = hostAlternatives(
        blocks,
        r.check_in,
        r.nights,
        { minNights: p.min_nights, maxNights: p.max_nights, lastCheckIn: addDays(today, p.booking_horizon_days) },
        ALTERNATIVES_SEARCH_DAYS,
      );
      // Only a safe calendar may point at open windows; otherwise the windows themselves are unknown.
      if (freshness.value.safe && (alt.shorten_to || alt.next_available)) {
        alternatives = { note: "The host's own nearest open windows for this property.", ...alt };
      }
    }
    const offer = buildOfferPayload({
      template,
      request: r,
      now: t,
      outcome: reason ? { available: false, reason } : { available: true, price: template.priceStay(nights) },
      freshness,
      // Unguessable per-offer id (UUID v4 from Node's pooled CSPRNG: cheaper than a fresh randomBytes per offer).
      offerId: randomUUID(),
    });
    return signOffer(offer, signer, jwksUrl, alternatives);
  }

  /** Core VRP v0.1 §4: the one request parser every surface shares, against the property's today and horizon. */
  function parseAt(args: OfferRequestInput | string, s: Loaded, today: string) {
    const horizonDays = s.p.booking_horizon_days;
    return typeof args === 'string' ? parseOfferQuery(args, today, horizonDays) : parseOfferRequest(args, { today, horizonDays });
  }

  /** Sign afresh at `t` from the store state `s`, now. */
  function signAt(args: OfferRequestInput | string, t: number, s: Loaded): OfferOutcome {
    const today = localDate(t, s.p.time_zone);
    // A refusal never reaches pricing or the signer.
    const parsed = parseAt(args, s, today);
    if (!parsed.ok) return parsed;
    return { ok: true, ...signFresh(parsed.request, t, s, today) };
  }

  async function getOffer(args: OfferRequestInput): Promise<OfferOutcome> {
    const s = await load();
    return signAt(args, clock.now(), s);
  }

  function quoteFrom(state: StoreSnapshot, args: OfferRequestInput): OfferOutcome {
    // The current snapshot's shared offer basis is reused; another state (a booking's own transaction) builds its own.
    return signAt(args, clock.now(), state === snap ? loaded(state) : loadedOf(state, offerBasis(state)));
  }

  /** Served offers being signed in this turn's signing batch, by cache key (see `serveAt`). */
  const signing = new Map<string, Promise<OfferOutcome>>();

  /**
   * The offer served for `args` at `t` from `s`: a refusal or a cached response at once, otherwise
   * the promise of one signed in this turn's signing batch (and cached). A request for a stay
   * whose signature is already in the batch waits for that signature: one offer per stay and
   * store state, as when each was signed on arrival.
   */
  function serveAt(args: OfferRequestInput | string, t: number, s: Loaded): OfferOutcome | Promise<OfferOutcome> {
    const today = localDate(t, s.p.time_zone);
    const parsed = parseAt(args, s, today);
    if (!parsed.ok) return parsed;
    const r = parsed.request;
    if (!cache) return inSigningTurn(() => ({ ok: true as const, ...signFresh(r, t, s, today) }));
    // Members named one by one (no spread), so the key's argument object can stay unallocated once inlined.
    const { check_in, check_out, guests, language } = r;
    const key = OfferCache.key({
      domain,
      created_at,
      check_in,
      check_out,
      guests,
      language,
      revision: s.revision,
      kid: s.signer.kid,
      today,
    });
    // The cache keeps the outcome object itself: a hit hands it out as it is.
    const hit = cache.get(key, t);
    if (hit) return hit;
    let pending = signing.get(key);
    if (!pending) {
      pending = inSigningTurn(() => {
        const served: ServedOffer = { ok: true, ...signFresh(r, t, s, today) };
        cache.set(key, served, t, s.freshness(t).changesAt);
        return served;
      }).finally(() => signing.delete(key));
      signing.set(key, pending);
    }
    return pending;
  }

  async function getServedOffer(args: OfferRequestInput | string): Promise<OfferOutcome> {
    const s = await load();
    return serveAt(args, clock.now(), s);
  }

  function servedOfferNow(args: OfferRequestInput | string): OfferOutcome | Promise<OfferOutcome> | null {
    const now = store.snapshotNow?.() ?? null;
    if (!now) return null;
    const t = clock.now();
    // A lapsed hold frees its dates only once `snapshot` has expired it (a write): that path waits.
    if (now.nextHoldExpiry !== null && Date.parse(now.nextHoldExpiry) <= t) return null;
    return serveAt(args, t, loaded(now));
  }

  async function calendar(from: string, days: number): Promise<CalendarDay[]> {
    if (dayNumber(from) === null) throw new OfferRequestError('invalid_date', 'from must be a real calendar date YYYY-MM-DD');
    if (!Number.isInteger(days) || days < 1 || days > MAX_CALENDAR_DAYS)
      throw new OfferRequestError('invalid_range', `days must be an integer from 1 to ${MAX_CALENDAR_DAYS}`);
    const t = clock.now();
    const { p, feeds, blocks } = await load();
    const dates = nightsOf(from, addDays(from, days));
    const blocked = blockedNights(blocks, dates);
    const today = localDate(t, p.time_zone);
    const lastCheckIn = addDays(today, p.booking_horizon_days);
    // Fail closed: on an unsafe calendar no night shows as available.
    const safe = calendarFreshness(feeds, t, p.calendar_max_age_minutes).safe;
    return dates.map((date) => {
      const available = safe && date >= today && date <= lastCheckIn && !blocked.has(date);
      return { date, available, nightly_rate: available ? rateForNight(p.rates, date).nightly_rate : null };
    });
  }

  return {
    canonicalDomain: domain,
    origin,
    jwksUrl,
    offerEndpoint: `${origin}${OFFER_ENDPOINT_PATH}`,
    getOffer,
    getServedOffer,
    servedOfferNow,
    quoteFrom,
    property: () => view,
    calendar,
    activeSigner: () => keyRing.current(),
    now: () => clock.now(),
    discovery,
    jwks: async () => {
      // The JWKS read doubles as a key-ring refresh, so the sync activeSigner() follows rotations too.
      await load();
      return jwksAt(snap.keys, clock.now());
    },
  };
}
