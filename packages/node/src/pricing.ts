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

/** The rate for one night: the season containing it (seasons never overlap), else the base rate. */
export function rateForNight(rates: RateTable, date: string): PriceBreakdownNight {
  const day = weekdayOf(date);
  const is_weekend = rates.weekend_nights.includes(day);
  const season = rates.seasons.find((s) => s.start <= date && date <= s.end);
  const plan = season ?? { name: null, type: 'standard', nightly: rates.nightly, weekend: rates.weekend };
  return {
    date,
    day_of_week: day,
    is_weekend,
    season_type: plan.type,
    season_name: plan.name,
    nightly_rate: is_weekend ? (plan.weekend ?? plan.nightly) : plan.nightly,
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
