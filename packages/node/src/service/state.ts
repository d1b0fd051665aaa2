/**
 * What the offer service reads from one store snapshot: the rows, the signer of the key signing
 * now, and what every offer signed from that snapshot shares (the offer template, the calendar
 * freshness memo, the property view), each built once per snapshot. A cache hit allocates
 * nothing here: the same state object is handed out while the snapshot and the signing key stay.
 */
import type { JwsSigner } from '@vrpkit/core';
import { type CalendarFreshnessAt, calendarFreshnessMemo } from '../availability.js';
import type { KeyRing } from '../keys.js';
import { OfferTemplate } from '../offer.js';
import { currencyMinorDigits, type PropertyDescription } from '../property.js';
import type { BlockedRange, CalendarFeed, StoreSnapshot } from '../store/store.js';
import type { PropertyView } from './types.js';

/** What the offer path reads from one snapshot, with what its offers share. */
export interface OfferState {
  revision: number;
  p: PropertyDescription;
  feeds: CalendarFeed[];
  blocks: BlockedRange[];
  signer: JwsSigner;
  template: OfferTemplate;
  freshness: (now: number) => CalendarFreshnessAt;
}

/** What the offers signed from one snapshot share. */
interface OfferBasis {
  template: OfferTemplate;
  freshness: (now: number) => CalendarFreshnessAt;
}

function viewOf(p: PropertyDescription, domain: string): PropertyView {
  return {
    property_id: p.property_id,
    name: p.name,
    description: p.description,
    url: p.url ?? `https://${domain}/`,
    terms_url: p.terms_url ?? null,
    privacy_url: p.privacy_url ?? null,
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

/** The states of a node's snapshots: the current one's derived views kept, another snapshot's built for it alone. */
export class OfferStates {
  private snap: StoreSnapshot;
  private basis: OfferBasis;
  private propertyView: PropertyView;
  /** The last state handed out: the same object while the snapshot and the signing key stay. */
  private last: { state: OfferState; from: StoreSnapshot } | undefined;

  /** `first`: the snapshot the service opened on; its `node_id` is the one every offer names. */
  constructor(
    private readonly domain: string,
    private readonly keyRing: KeyRing,
    first: StoreSnapshot,
    private readonly nodeId = first.info.node_id,
  ) {
    this.snap = first;
    this.basis = this.basisOf(first);
    this.propertyView = viewOf(first.property, domain);
  }

  /** The snapshot last read (the documents a node serves are of it). */
  get current(): StoreSnapshot {
    return this.snap;
  }

  /** The property facts of the snapshot last read, for human pages. */
  get view(): PropertyView {
    return this.propertyView;
  }

  /** The state of `next`, now the current snapshot (derived views rebuilt only when it is another one). */
  of(next: StoreSnapshot): OfferState {
    if (next !== this.snap) {
      this.snap = next;
      this.propertyView = viewOf(next.property, this.domain);
      this.basis = this.basisOf(next);
    }
    const signer = this.keyRing.signerFor(this.snap.keys);
    const last = this.last;
    if (last && last.from === this.snap && last.state.signer === signer) return last.state;
    const state = this.stateOf(this.snap, this.basis, signer);
    this.last = { state, from: this.snap };
    return state;
  }

  /**
   * The state of `snapshot` without making it current: the current snapshot's shared basis when it
   * is that one, else its own (a booking's transaction reads a state of its own).
   */
  aside(snapshot: StoreSnapshot): OfferState {
    if (snapshot === this.snap) return this.of(snapshot);
    return this.stateOf(snapshot, this.basisOf(snapshot), this.keyRing.signerFor(snapshot.keys));
  }

  private basisOf(s: StoreSnapshot): OfferBasis {
    return {
      template: new OfferTemplate(this.domain, this.nodeId, s.property),
      freshness: calendarFreshnessMemo(s.feeds, s.property.calendar_max_age_minutes),
    };
  }

  private stateOf(s: StoreSnapshot, basis: OfferBasis, signer: JwsSigner): OfferState {
    const { revision, property: p, feeds, blocks } = s;
    return { revision, p, feeds, blocks, signer, ...basis };
  }
}
