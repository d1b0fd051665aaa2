/**
 * Pricing: a pure function of the rate table and the nights of a stay. Amounts are integer
 * minor units (Core VRP v0.1 §5 `minor_unit: true`); stay-level fees are folded into the total as
 * `price.adjustments` (scope "stay"), so the total is what the guest pays (`no_add_on_fees`).
 */
import type { PriceAdjustment, PriceBreakdownNight, PriceReconciliation } from '@vrpkit/protocol';
import { weekdayOf } from './dates.js';
import type { PropertyDescription } from './property.js';

export type RateTable = PropertyDescription['rates'];
export type StayFees = PropertyDescription['fees'];

export interface StayPrice {
  breakdown: PriceBreakdownNight[];
  adjustments: PriceAdjustment[];
  reconciliation: PriceReconciliation;
  total: number;
}

/** The index of the season containing `date` (seasons never overlap), or -1: the base rate prices it. */
export function seasonOf(rates: RateTable, date: string): number {
  return rates.seasons.findIndex((s) => s.start <= date && date <= s.end);
}

/** A night's rate under one plan (a season or the base rate), a weekend night or not: every member but its date and weekday. */
export type PlanRate = Omit<PriceBreakdownNight, 'date' | 'day_of_week'>;

/** The `PlanRate` of plan `season` (a `seasonOf` index, -1 the base rate), on a weekend night or not. */
export function planRate(rates: RateTable, season: number, is_weekend: boolean): PlanRate {
  const plan = rates.seasons[season] ?? { name: null, type: 'standard', nightly: rates.nightly, weekend: rates.weekend };
  return {
    is_weekend,
    season_type: plan.type,
    season_name: plan.name,
    nightly_rate: is_weekend ? (plan.weekend ?? plan.nightly) : plan.nightly,
  };
}

/**
 * The rate for one night: the season containing it, else the base rate; the weekend rate on the
 * table's weekend nights. `plans`: `planRate` of this table, or a memo of it (the offer template's).
 */
export function rateForNight(
  rates: RateTable,
  date: string,
  plans: (season: number, weekend: boolean) => PlanRate = (season, weekend) => planRate(rates, season, weekend),
): PriceBreakdownNight {
  const day = weekdayOf(date);
  const r = plans(seasonOf(rates, date), rates.weekend_nights.includes(day));
  return {
    date,
    day_of_week: day,
    is_weekend: r.is_weekend,
    season_type: r.season_type,
    season_name: r.season_name,
    nightly_rate: r.nightly_rate,
  };
}

/** Core VRP v0.1 §5: the stay-level fees as `price.adjustments` (scope "stay"), in the host's order. */
export function stayAdjustments(fees: StayFees): PriceAdjustment[] {
  return fees.map((f) => ({ code: f.code, label: f.label, amount: f.amount, scope: 'stay' }));
}

/**
 * Price a stay from its nights' rates (`rateForNight` of each night) and its adjustments
 * (`stayAdjustments`). Core VRP v0.1 §5 reconciliation: Σ breakdown.nightly_rate + Σ
 * adjustments.amount = computed_total, and the quoted total is the computed total, so
 * `matches_quoted_total` holds by construction; the offer builder still sets `exact` from it
 * rather than assuming it.
 */
export function priceStay(breakdown: PriceBreakdownNight[], adjustments: PriceAdjustment[]): StayPrice {
  const nightly_subtotal = breakdown.reduce((s, n) => s + n.nightly_rate, 0);
  const adjustments_total = adjustments.reduce((s, a) => s + a.amount, 0);
  const computed_total = nightly_subtotal + adjustments_total;
  const total = computed_total;
  return {
    breakdown,
    adjustments,
    reconciliation: {
      nightly_subtotal,
      adjustments_total,
      computed_total,
      matches_quoted_total: Number.isSafeInteger(computed_total) && computed_total === total,
    },
    total,
  };
}
