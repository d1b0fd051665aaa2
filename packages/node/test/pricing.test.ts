/**
 * Price arithmetic (Core VRP v0.1 §5 reconciliation): for any rate table (base, weekend nights,
 * non-overlapping seasons, stay-level fees) and any stay, Σ breakdown + Σ adjustments = total,
 * the signed price says so (`exact`, `reconciliation.matches_quoted_total`), and each night is
 * priced by the rule that covers it.
 */
import { addDays, type PropertyDescription, sampleProperty, validatePropertyDescription } from '@vrpkit/node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { calendarFreshness, calendarFreshnessChangesAt, calendarFreshnessMemo } from '../src/availability.js';
import { dayNumber, fromDayNumber, nightsOf, weekdayOf } from '../src/dates.js';
import { buildOfferPayload, OfferTemplate } from '../src/offer.js';
import { priceStay, rateForNight, stayAdjustments } from '../src/pricing.js';
import type { CalendarFeed } from '../src/store/store.js';

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
const amount = fc.integer({ min: 0, max: 100_000_000 });
const date = fc.integer({ min: 0, max: 3 * 365 }).map((d) => addDays('2026-01-01', d));

/** Seasons as disjoint spans cut from sorted distinct day offsets. */
const seasons = fc
  .uniqueArray(fc.integer({ min: 0, max: 3 * 365 }), { maxLength: 12 })
  .chain((cuts) => {
    const sorted = [...cuts].sort((a, b) => a - b);
    const spans: [number, number][] = [];
    // Distinct sorted cuts: each pair [a, b - 1] is non-empty and lies strictly before the next pair.
    for (let i = 0; i + 1 < sorted.length; i += 2) spans.push([sorted[i]!, sorted[i + 1]! - 1]);
    return fc.tuple(
      ...spans.map(([a, b]) =>
        fc.record({ nightly: amount, weekend: fc.option(amount, { nil: undefined }), a: fc.constant(a), b: fc.constant(b) }),
      ),
    );
  })
  .map((ss) =>
    ss.map((s, i) => ({
      name: `S${i}`,
      type: 'season',
      start: addDays('2026-01-01', s.a),
      end: addDays('2026-01-01', s.b),
      nightly: s.nightly,
      weekend: s.weekend,
    })),
  );

const rateTable = fc.record({
  nightly: amount,
  weekend: fc.option(amount, { nil: undefined }),
  weekend_nights: fc.subarray([...WEEKDAYS]),
  seasons,
});
const fees = fc.uniqueArray(
  fc.record({ code: fc.constantFrom('cleaning', 'linen', 'towels', 'energy', 'tax'), label: fc.constant('Fee'), amount }),
  {
    selector: (f) => f.code,
    maxLength: 5,
  },
);
const stay = fc.tuple(date, fc.integer({ min: 1, max: 365 })).map(([checkIn, n]) => ({ checkIn, checkOut: addDays(checkIn, n) }));

describe('calendar dates', () => {
  it('dayNumber and fromDayNumber are inverse on every day from year 1000 to 9999, and impossible dates are refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: -354_285, max: 2_932_896 }), (d) => {
        expect(dayNumber(fromDayNumber(d))).toBe(d);
      }),
    );
    for (const bad of ['2027-02-29', '2027-04-31', '2027-13-01', '2027-00-01', '2027-01-00', '27-01-01', '2027-1-01'])
      expect(dayNumber(bad)).toBeNull();
  });
});

describe('priceStay', () => {
  it('Σ breakdown + Σ adjustments = total for any stay and rate table, and every night takes the rule that covers it', () => {
    fc.assert(
      fc.property(rateTable, fees, stay, (rates, stayFees, s) => {
        const property = validatePropertyDescription({ ...sampleProperty(Date.parse('2026-01-01')), rates, fees: stayFees }, 'generated');
        const nights = nightsOf(s.checkIn, s.checkOut);
        const p = priceStay(
          nights.map((n) => rateForNight(property.rates, n)),
          stayAdjustments(property.fees),
        );
        // The offer template's memo of each rate plan prices the stay the same, and writes each night's text as JSON.stringify.
        const template = new OfferTemplate('villa.example', 'villa.example', property);
        expect(template.priceStay(nights)).toEqual(p);
        for (const n of p.breakdown) expect(template.nightJson(n)).toBe(JSON.stringify(n));
        // A night priced under another rate table is not taken for the template's plan.
        const other = rateForNight({ ...property.rates, nightly: property.rates.nightly + 1, weekend: undefined, seasons: [] }, nights[0]!);
        expect(template.nightJson(other)).toBe(JSON.stringify(other));
        const sumNights = p.breakdown.reduce((acc, n) => acc + n.nightly_rate, 0);
        const sumAdj = p.adjustments.reduce((acc, a) => acc + a.amount, 0);
        expect(sumNights + sumAdj).toBe(p.total);
        expect(p.reconciliation).toEqual({
          nightly_subtotal: sumNights,
          adjustments_total: sumAdj,
          computed_total: p.total,
          matches_quoted_total: true,
        });
        expect(Number.isSafeInteger(p.total)).toBe(true);
        expect(p.breakdown.map((n) => n.date)).toEqual(nights);
        for (const n of p.breakdown) {
          const season = property.rates.seasons.find((x) => x.start <= n.date && n.date <= x.end);
          const weekend = property.rates.weekend_nights.includes(weekdayOf(n.date));
          const plan = season ?? { nightly: property.rates.nightly, weekend: property.rates.weekend };
          expect(n.nightly_rate).toBe(weekend ? (plan.weekend ?? plan.nightly) : plan.nightly);
          expect(n.is_weekend).toBe(weekend);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the signed price of an available stay is exact and reconciled for any rate table', () => {
    fc.assert(
      fc.property(rateTable, fees, stay, (rates, stayFees, s) => {
        const property: PropertyDescription = validatePropertyDescription(
          { ...sampleProperty(Date.parse('2026-01-01')), rates, fees: stayFees, max_nights: 365, min_nights: 1 },
          'generated',
        );
        const nights = nightsOf(s.checkIn, s.checkOut);
        const template = new OfferTemplate('villa.example', 'villa.example', property);
        const { offer, json } = buildOfferPayload({
          template,
          request: { check_in: s.checkIn, check_out: s.checkOut, guests: 2, nights: nights.length },
          now: Date.parse('2026-01-01T00:00:00Z'),
          outcome: { available: true, price: template.priceStay(nights) },
          freshness: calendarFreshnessMemo([], 180)(Date.parse('2026-01-01T00:00:00Z')),
          offerId: 'o1',
        });
        expect(json).toBe(JSON.stringify(offer));
        const pr = offer.price;
        expect(pr.breakdown!.reduce((a, n) => a + n.nightly_rate, 0) + pr.adjustments!.reduce((a, x) => a + x.amount, 0)).toBe(pr.total);
        expect(pr).toMatchObject({ exact: true, agent_total: pr.total, public_total: pr.total, minor_unit: true, no_add_on_fees: true });
        expect(offer.agent_permission.may_quote_as_official_direct_offer).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('prices a concrete stay across a season boundary and a weekend', () => {
    const property = validatePropertyDescription(
      {
        ...sampleProperty(Date.parse('2027-01-01')),
        rates: {
          nightly: 1000,
          weekend: 1500,
          weekend_nights: ['friday', 'saturday'],
          seasons: [{ name: 'Summer', type: 'high', start: '2027-06-15', end: '2027-08-20', nightly: 2000, weekend: 2500 }],
        },
        fees: [{ code: 'cleaning', label: 'Final cleaning', amount: 700 }],
      },
      'inline',
    );
    // 2027-06-12 is a Saturday: Sat (base weekend), Sun, Mon (base), Tue 15th (summer), Wed (summer)
    const p = new OfferTemplate('villa.example', 'villa.example', property).priceStay(nightsOf('2027-06-12', '2027-06-17'));
    expect(p.breakdown.map((n) => n.nightly_rate)).toEqual([1500, 1000, 1000, 2000, 2000]);
    expect(p.breakdown.map((n) => n.season_name)).toEqual([null, null, null, 'Summer', 'Summer']);
    expect(p.adjustments).toEqual([{ code: 'cleaning', label: 'Final cleaning', amount: 700, scope: 'stay' }]);
    expect(p.total).toBe(8200);
  });
});

describe('calendarFreshnessMemo', () => {
  it('answers at every instant what calendarFreshness and calendarFreshnessChangesAt compute then, its text JSON.stringify of its value', () => {
    const at = (m: number) => new Date(Date.parse('2026-01-01T00:00:00Z') - m * 60_000).toISOString();
    const feed = fc.record({
      name: fc.string({ maxLength: 6 }),
      // Successes from 0 to 200 minutes before the first instant: fresh, turning stale within the steps, or stale.
      last_success_at: fc.option(fc.integer({ min: 0, max: 200 }).map(at), { nil: null }),
      last_error: fc.option(fc.constant('feed_http_error'), { nil: null }),
    });
    // Steps in ms, mostly forward (within a second, across seconds, past a feed turning stale), sometimes back.
    const steps = fc.array(
      fc.oneof(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 1000, max: 3_600_000 }), fc.integer({ min: -5000, max: -1 })),
      {
        maxLength: 20,
      },
    );
    fc.assert(
      fc.property(fc.array(feed, { maxLength: 3 }), steps, (fs, ds) => {
        const feeds = fs.map((f) => ({
          ...f,
          url: null,
          file: null,
          created_at: at(300),
          last_attempt_at: null,
          event_count: 0,
        })) as CalendarFeed[];
        const memo = calendarFreshnessMemo(feeds, 180);
        let now = Date.parse('2026-01-01T00:00:00.400Z');
        for (const d of [0, ...ds]) {
          now += d;
          const value = calendarFreshness(feeds, now, 180);
          expect(memo(now)).toEqual({ value, json: JSON.stringify(value), changesAt: calendarFreshnessChangesAt(feeds, now, 180) });
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('buildOfferPayload', () => {
  const text = fc.string({ unit: 'binary', maxLength: 12 });
  const reason = fc.constantFrom('not_available', 'below_minimum_stay', 'above_maximum_stay', 'exceeds_max_guests', 'calendar_stale');
  const feed = fc.record({
    name: text,
    last_success_at: fc.option(fc.constantFrom('2025-12-31T23:00:00.000Z', '2025-12-01T00:00:00.000Z'), { nil: null }),
    last_error: fc.option(text, { nil: null }),
  });

  it('its payload text is JSON.stringify of its payload, whatever the property, stay, outcome and calendar', () => {
    fc.assert(
      fc.property(
        fc.record({
          rates: rateTable,
          fees,
          stay,
          name: text,
          city: fc.option(text, { nil: null }),
          refund: fc.option(fc.array(fc.record({ hours_before_checkin: fc.nat(), refund_percent: fc.nat(100) }), { maxLength: 3 }), {
            nil: null,
          }),
          optIn: fc.boolean(),
          wording: fc.option(text, { nil: undefined }),
          language: fc.option(fc.constantFrom('en', 'sv-SE', 'zh-Hant-TW'), { nil: undefined }),
          outcome: fc.option(reason, { nil: null }),
          feeds: fc.array(feed, { maxLength: 3 }),
          offerId: text,
        }),
        (x) => {
          const base = sampleProperty(Date.parse('2026-01-01'));
          // Built directly, not validated: the texts may hold anything JSON must escape.
          const property: PropertyDescription = {
            ...base,
            name: x.name,
            city: x.city,
            rates: { ...x.rates, seasons: x.rates.seasons.map((s) => ({ ...s, name: `${s.name}${x.name}` })) },
            fees: x.fees.map((f) => ({ ...f, label: x.name })),
            refund_schedule: x.refund,
            agent_permission: { may_quote_as_official_direct_offer: x.optIn, ...(x.wording === undefined ? {} : { wording: x.wording }) },
          } as PropertyDescription;
          const template = new OfferTemplate('villa.example', 'node-"1"', property);
          const nights = nightsOf(x.stay.checkIn, x.stay.checkOut);
          const now = Date.parse('2026-01-01T00:00:00.250Z');
          const feeds: CalendarFeed[] = x.feeds.map((f) => ({
            ...f,
            url: null,
            file: null,
            created_at: f.last_success_at ?? '2025-01-01T00:00:00.000Z',
            last_attempt_at: null,
            event_count: 0,
          }));
          const { offer, json } = buildOfferPayload({
            template,
            request: {
              check_in: x.stay.checkIn,
              check_out: x.stay.checkOut,
              guests: 2,
              nights: nights.length,
              ...(x.language ? { language: x.language } : {}),
            },
            now,
            outcome: x.outcome ? { available: false, reason: x.outcome } : { available: true, price: template.priceStay(nights) },
            freshness: calendarFreshnessMemo(feeds, 180)(now),
            offerId: x.offerId,
          });
          expect(json).toBe(JSON.stringify(offer));
        },
      ),
      { numRuns: 300 },
    );
  });
});
