/** The offer service's contract: what every surface and the booking desk see of it. */
import type { JwsSigner } from '@vrpkit/core';
import type { DiscoveryDocument, OfferRequestRefusal, ParsedOfferRequest, RefundScheduleRow, VrpJwks } from '@vrpkit/protocol';
import type { UnavailableReason } from '../availability.js';
import type { BookingOffers } from '../booking/ports.js';
import type { ServedOffer } from '../offer-cache.js';
import type { StayPrice } from '../pricing.js';
import type { PropertyDescription } from '../property.js';
import type { StoreSnapshot } from '../store/store.js';

/** A signed offer (`json` is the exact response body, `body` its UTF-8 bytes) or a refused request's code. */
export type OfferOutcome = ServedOffer | { ok: false; error: OfferRequestRefusal };

export interface OfferOptions {
  /**
   * Sign afresh, never reuse a cached response, and read the store rather than take its state as
   * known: the booking page's live re-quote (Core VRP v0.1 §5.1). Default: the offer as served to
   * agents, reused from the signed-offer cache while nothing that could change it has changed.
   */
  fresh?: boolean;
}

/** One offer service behind every surface (Node Tool Binding v0.1 §5: three adapters, one source). */
export interface OfferService {
  readonly canonicalDomain: string;
  readonly origin: string;
  readonly jwksUrl: string;
  readonly offerEndpoint: string;
  /**
   * The node's answer to a request the protocol's parser accepted (Core VRP v0.1 §4–§7): a signed
   * offer, or `date_in_past` / `beyond_horizon` against the property's today and horizon. The
   * answer is a value, not a promise, when the store's state is known without waiting (SQLite,
   * unchanged since the last read, no lapsed hold to expire) and nothing is to be signed (a cache hit
   * or a refusal): the offer endpoint then answers in the same turn, as prebuilt bytes. An offer to
   * sign is signed in this turn's signing batch (signing-turn.ts). A served envelope is shared
   * between calls: never mutate it.
   */
  offer(request: ParsedOfferRequest, options?: OfferOptions): OfferOutcome | Promise<OfferOutcome>;
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
 * What the node's own HTTP app and its booking desk need beyond the surfaces' contract: the
 * well-known documents and the live re-quote of a booking. `createOfferService` returns one;
 * `createNodeApp` takes one.
 */
export interface NodePublisher extends OfferService, BookingOffers<StoreSnapshot> {
  /** Core VRP v0.1 §2 discovery document (`/.well-known/vacation-rental.json`). */
  discovery(): DiscoveryDocument;
  /** Core VRP v0.1 §3 JWKS at the node's clock: active and retained keys. */
  jwks(): Promise<VrpJwks>;
  /**
   * What an offer for `stay` would say now, from the store's current state, signing nothing: with
   * `draft`, as if that property were published (the host console's price preview, issue 35).
   */
  preview(stay: ParsedOfferRequest, draft?: PropertyDescription): Promise<StayPreview>;
}

/** An offer's judgement without the offer: refused by the stay window, or available and priced, or the signed negative's reason. */
export type StayPreview =
  | { ok: false; error: OfferRequestRefusal }
  | {
      ok: true;
      available: boolean;
      reason: UnavailableReason | null;
      price: StayPrice | null;
      /** `agent_permission.may_quote_as_official_direct_offer` as the offer would sign it. */
      mayQuote: boolean;
      currency: string;
    };

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
  /** The host's terms and privacy pages (property file); null: the node's own pages (ucp/legal.ts). */
  terms_url: string | null;
  privacy_url: string | null;
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

/** What the offer service reads its store through: one snapshot per request (`NodeStore`, or a platform tenant's rows). */
export interface SnapshotSource {
  /** The state as of `now` (a NodeStore also expires lapsed booking holds at `now`). */
  snapshot(now?: number): Promise<StoreSnapshot>;
  /** The state without waiting, when it is known unchanged (NodeStore on SQLite); absent or null: use `snapshot`. */
  snapshotNow?(): StoreSnapshot | null;
}
