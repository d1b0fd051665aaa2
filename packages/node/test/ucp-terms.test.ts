/**
 * A session's cancellation terms as the UCP cancellation-policy extension states them, from the
 * signed refund rows (Core VRP v0.1 §5.3): the check-in anchor carries the property's UTC offset on
 * that date (daylight saving included), one tier per threshold farthest first, `refundability` the
 * outcome the schedule selects now (the extension's own boundary: at the cutoff the tier no longer
 * applies), no schedule for ambiguous rows, and every item valid against the vendored schema.
 */
import type { OfferPayload } from '@vrpkit/protocol';
import { ucpSchemaErrors } from '@vrpkit/testkit/ucp';
import { describe, expect, it } from 'vitest';
import type { PropertyView } from '../src/service/types.js';
import { legalLinks } from '../src/ucp/legal.js';
import { cancellationTerms } from '../src/ucp/terms.js';
import { checkInInstant } from '../src/ucp/time.js';

const ITEM = 'lodging/policy_cancellation.json#/$defs/cancellation_item';
const offerWith = (rows: { hours_before_checkin: number; refund_percent: number }[] | null, checkInTime: string | null = '15:00') =>
  ({ rules: { refund_schedule: rows, check_in_time: checkInTime } }) as unknown as OfferPayload;
const stay = { check_in: '2027-04-10', time_zone: 'Europe/Stockholm' };
const anchor = Date.parse('2027-04-10T15:00:00+02:00');
const H = 3_600_000;

describe('checkInInstant', () => {
  it('gives the zone’s offset on that date, across daylight saving, and refuses what it cannot place', () => {
    expect(checkInInstant('2027-02-11', '15:00', 'Europe/Stockholm')).toBe('2027-02-11T15:00:00+01:00');
    expect(checkInInstant('2027-04-10', '15:00', 'Europe/Stockholm')).toBe('2027-04-10T15:00:00+02:00');
    expect(checkInInstant('2027-07-01', '16:30', 'America/New_York')).toBe('2027-07-01T16:30:00-04:00');
    expect(checkInInstant('2027-07-01', null, 'UTC')).toBe('2027-07-01T00:00:00+00:00');
    expect(checkInInstant('2027-07-01', '25:00', 'UTC')).toBeUndefined();
    expect(checkInInstant('2027-07-01', '15:00', 'Not/AZone')).toBeUndefined();
  });
});

describe('cancellationTerms', () => {
  const rows = [
    { hours_before_checkin: 336, refund_percent: 50 },
    { hours_before_checkin: 720, refund_percent: 100 },
    { hours_before_checkin: 0, refund_percent: 0 },
  ];

  it('orders the tiers farthest first and classifies the outcome at each side of a cutoff', () => {
    const at = (ms: number) => cancellationTerms(offerWith(rows), stay, ms).policy;
    const p = at(anchor - 800 * H);
    expect(p.schedule).toEqual({
      anchor: '2027-04-10T15:00:00+02:00',
      tiers: [
        { until: 'PT720H', outcome: { kind: 'percentage', buyer_bps: 10000 } },
        { until: 'PT336H', outcome: { kind: 'percentage', buyer_bps: 5000 } },
        { until: 'PT0H', outcome: { kind: 'percentage', buyer_bps: 0 } },
      ],
      after_last_tier: { kind: 'percentage', buyer_bps: 0 },
    });
    expect(p.refundability).toBe('refundable');
    expect(at(anchor - 720 * H - 1).refundability).toBe('refundable');
    // At exactly anchor − until the tier no longer applies (extension, Evaluation).
    expect(at(anchor - 720 * H).refundability).toBe('partially_refundable');
    expect(at(anchor - 336 * H).refundability).toBe('non_refundable');
    for (const ms of [anchor - 800 * H, anchor - 400 * H, anchor]) expect(ucpSchemaErrors(ITEM, at(ms))).toEqual([]);
  });

  it('says non-refundable for [], leaves the class open for unpublished or ambiguous terms, and always warns with a disclosure', () => {
    const none = cancellationTerms(offerWith([]), stay, anchor - 800 * H);
    expect(none.policy.refundability).toBe('non_refundable');
    expect(none.policy.schedule).toBeUndefined();
    const unpublished = cancellationTerms(offerWith(null), stay, anchor - 800 * H);
    expect(unpublished.policy.refundability).toBe('dev.vrpkit.unknown');
    const ambiguous = cancellationTerms(
      offerWith([
        { hours_before_checkin: 48, refund_percent: 100 },
        { hours_before_checkin: 48, refund_percent: 0 },
      ]),
      stay,
      anchor - 800 * H,
    );
    expect(ambiguous.policy.schedule).toBeUndefined();
    expect(ambiguous.policy.refundability).toBe('dev.vrpkit.unknown');
    for (const t of [none, unpublished, ambiguous]) {
      expect(ucpSchemaErrors(ITEM, t.policy)).toEqual([]);
      expect(t.warning).toMatchObject({ type: 'warning', code: 'dev.ucp.lodging.policy.cancellation', presentation: 'disclosure' });
    }
  });
});

describe('legalLinks', () => {
  const property = (own: { terms_url?: string; privacy_url?: string }) =>
    ({ name: 'Villa', terms_url: own.terms_url ?? null, privacy_url: own.privacy_url ?? null }) as unknown as PropertyView;

  it('links the host’s own pages when the property file names them, else the node’s pages on its origin; each a valid UCP link', () => {
    const own = legalLinks(property({ terms_url: 'https://host.example/t', privacy_url: 'https://host.example/p' }), 'https://n.example');
    expect(own.map((l) => [l.type, l.url])).toEqual([
      ['terms_of_service', 'https://host.example/t'],
      ['privacy_policy', 'https://host.example/p'],
    ]);
    const node = legalLinks(property({}), 'https://n.example');
    expect(node.map((l) => l.url)).toEqual(['https://n.example/ucp/terms', 'https://n.example/ucp/privacy']);
    for (const link of [...own, ...node]) expect(ucpSchemaErrors('common/types/link.json', link)).toEqual([]);
  });
});
