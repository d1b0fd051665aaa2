/**
 * Refund-schedule evaluation (Core VRP v0.1 §5.3), a pure function:
 * H = floor((checkInMoment − cancelAt) / 1 h); rows sorted by `hours_before_checkin`
 * descending; the first row with `hours_before_checkin ≤ H` applies; no row (H < 0 included)
 * → 0 %. `[]` means never a refund; an absent or null schedule is unknown — never invent one.
 *
 * Decisions (Core VRP v0.1 §5.3 leaves these open): the check-in moment is the caller's instant (vrpkit does not
 * guess a time zone or combine the date with `check_in_time`); two rows with the same
 * threshold and different percentages make the schedule ambiguous → unknown; a row that is
 * not `{hours_before_checkin: int ≥ 0, refund_percent: int 0–100}` → unknown.
 */
import { asRecord } from '@vrpkit/core';
import type { RefundScheduleRow } from '@vrpkit/protocol';

export type RefundEvaluation =
  | { state: 'affirmed'; refund_percent: number; hours_before_checkin: number; row: RefundScheduleRow | null }
  | { state: 'unknown'; reason: 'schedule_absent' | 'schedule_malformed' | 'schedule_ambiguous' | 'instant_unusable' };

const HOUR_MS = 3_600_000;

function ms(v: number | Date | string): number {
  return typeof v === 'number' ? v : v instanceof Date ? v.getTime() : Date.parse(v);
}

const isInt = (v: unknown, min: number, max: number) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

export function evaluateRefund(
  schedule: unknown,
  checkInMoment: number | Date | string,
  cancelAt: number | Date | string,
): RefundEvaluation {
  if (schedule === undefined || schedule === null) return { state: 'unknown', reason: 'schedule_absent' };
  if (!Array.isArray(schedule)) return { state: 'unknown', reason: 'schedule_malformed' };
  const rows: RefundScheduleRow[] = [];
  for (const r of schedule) {
    const row = asRecord(r);
    if (!row || !isInt(row.hours_before_checkin, 0, Number.MAX_SAFE_INTEGER) || !isInt(row.refund_percent, 0, 100)) {
      return { state: 'unknown', reason: 'schedule_malformed' };
    }
    rows.push({ hours_before_checkin: row.hours_before_checkin as number, refund_percent: row.refund_percent as number });
  }
  const ci = ms(checkInMoment);
  const cancel = ms(cancelAt);
  if (!Number.isFinite(ci) || !Number.isFinite(cancel)) return { state: 'unknown', reason: 'instant_unusable' };
  const sorted = [...rows].sort((a, b) => b.hours_before_checkin - a.hours_before_checkin);
  for (let i = 1; i < sorted.length; i++) {
    const [a, b] = [sorted[i - 1] as RefundScheduleRow, sorted[i] as RefundScheduleRow];
    if (a.hours_before_checkin === b.hours_before_checkin && a.refund_percent !== b.refund_percent) {
      return { state: 'unknown', reason: 'schedule_ambiguous' };
    }
  }
  const H = Math.floor((ci - cancel) / HOUR_MS);
  const row = sorted.find((r) => r.hours_before_checkin <= H) ?? null;
  return { state: 'affirmed', refund_percent: row ? row.refund_percent : 0, hours_before_checkin: H, row };
}
