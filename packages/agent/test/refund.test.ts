import { evaluateRefund } from '@vrpkit/agent';
import { describe, expect, it } from 'vitest';

const CHECK_IN = Date.parse('2026-09-12T15:00:00Z');
const hoursBefore = (h: number) => CHECK_IN - h * 3_600_000;
const SCHEDULE = [
  { hours_before_checkin: 0, refund_percent: 0 },
  { hours_before_checkin: 336, refund_percent: 100 },
  { hours_before_checkin: 168, refund_percent: 50 },
];

describe('evaluateRefund (Core VRP v0.1 §5.3)', () => {
  it('picks the first row ≤ H after sorting by hours descending', () => {
    expect(evaluateRefund(SCHEDULE, CHECK_IN, hoursBefore(400))).toMatchObject({
      state: 'affirmed',
      refund_percent: 100,
      hours_before_checkin: 400,
    });
    expect(evaluateRefund(SCHEDULE, CHECK_IN, hoursBefore(336))).toMatchObject({ refund_percent: 100 });
    expect(evaluateRefund(SCHEDULE, CHECK_IN, hoursBefore(335))).toMatchObject({ refund_percent: 50 });
    expect(evaluateRefund(SCHEDULE, CHECK_IN, hoursBefore(168))).toMatchObject({
      refund_percent: 50,
      row: { hours_before_checkin: 168, refund_percent: 50 },
    });
    expect(evaluateRefund(SCHEDULE, CHECK_IN, hoursBefore(2))).toMatchObject({ refund_percent: 0 });
  });

  it('floors H: 167 h 59 min before is H = 167', () => {
    const r = evaluateRefund(SCHEDULE, CHECK_IN, hoursBefore(168) + 60_000);
    expect(r).toMatchObject({ hours_before_checkin: 167, refund_percent: 0 });
  });

  it('no matching row (H < 0 included) → 0 %; [] means never a refund', () => {
    expect(evaluateRefund([{ hours_before_checkin: 48, refund_percent: 100 }], CHECK_IN, hoursBefore(10))).toMatchObject({
      refund_percent: 0,
      row: null,
    });
    expect(evaluateRefund(SCHEDULE, CHECK_IN, CHECK_IN + 3_600_000)).toMatchObject({
      state: 'affirmed',
      refund_percent: 0,
      hours_before_checkin: -1,
    });
    expect(evaluateRefund([], CHECK_IN, hoursBefore(1000))).toMatchObject({ state: 'affirmed', refund_percent: 0 });
  });

  it('absent or null schedule is unknown, never an invented refund', () => {
    expect(evaluateRefund(undefined, CHECK_IN, hoursBefore(1000))).toEqual({ state: 'unknown', reason: 'schedule_absent' });
    expect(evaluateRefund(null, CHECK_IN, hoursBefore(1000))).toEqual({ state: 'unknown', reason: 'schedule_absent' });
  });

  it('malformed rows, ambiguous duplicate thresholds and unusable instants are unknown', () => {
    expect(evaluateRefund([{ hours_before_checkin: 24, refund_percent: 101 }], CHECK_IN, 0)).toMatchObject({
      reason: 'schedule_malformed',
    });
    expect(evaluateRefund([{ hours_before_checkin: 1.5, refund_percent: 10 }], CHECK_IN, 0)).toMatchObject({
      reason: 'schedule_malformed',
    });
    expect(evaluateRefund('100%', CHECK_IN, 0)).toMatchObject({ reason: 'schedule_malformed' });
    const dup = [
      { hours_before_checkin: 24, refund_percent: 50 },
      { hours_before_checkin: 24, refund_percent: 100 },
    ];
    expect(evaluateRefund(dup, CHECK_IN, hoursBefore(30))).toMatchObject({ state: 'unknown', reason: 'schedule_ambiguous' });
    expect(evaluateRefund(SCHEDULE, 'someday', hoursBefore(30))).toMatchObject({ reason: 'instant_unusable' });
    expect(evaluateRefund(SCHEDULE, new Date(CHECK_IN), new Date(hoursBefore(200)))).toMatchObject({ refund_percent: 50 });
  });
});
