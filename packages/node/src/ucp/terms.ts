/**
 * A session's money and terms, read from the signed offer it is bound to and nothing else, so
 * what an agent shows, what the guest confirms and what the booking receipt signs are one total:
 * - `totals[]` (UCP `common/types/totals.json`; Booking, Pricing Scope): one `subtotal` (the signed
 *   nightly breakdown, one line a night), a `fee` per signed adjustment, exactly one `total` equal to
 *   `price.agent_total`, the addends summing to it. When the signed addends do not sum to the signed
 *   total the breakdown is not shown: one subtotal equal to the total (the total is the authority,
 *   Core VRP v0.1 §5).
 * - `payment.terms` (Booking, Payment Timing & Terms): the node takes no payment; the host collects
 *   the whole total at the property (one `at_property` schedule equal to the total), with the
 *   disclosure warning the capability asks for property-collected charges.
 * - `policies[]`: the refund schedule the offer signed (Core VRP v0.1 §5.3) as the cancellation-policy
 *   extension's item (`refundability`, and a deterministic `schedule` when the check-in instant is
 *   known), with its disclosure warning.
 */
import type { OfferPayload, RefundScheduleRow, UcpMessage } from '@vrpkit/protocol';
import { UCP_CANCELLATION_POLICY_TYPE } from '@vrpkit/protocol';
import { checkInInstant } from './time.js';

export interface UcpTotal {
  type: 'subtotal' | 'fee' | 'total';
  amount: number;
  display_text?: string;
  lines?: { display_text: string; amount: number }[];
}

export interface UcpPaymentTerm {
  id: string;
  title: string;
  schedules: { id: string; type: string; description: { plain: string }; amount: number }[];
}

/** A cancellation outcome (`policy_cancellation.json#/$defs/cancellation_outcome`): vrpkit states percentages only. */
export interface UcpCancellationOutcome {
  kind: 'percentage';
  buyer_bps: number;
}

/** The cancellation-policy extension's item (`policy_cancellation.json#/$defs/cancellation_item`). */
export interface UcpPolicy {
  type: string;
  description: { plain: string };
  refundability: string;
  applies_to?: string[];
  url?: string;
  schedule?: { anchor: string; tiers: { until: string; outcome: UcpCancellationOutcome }[]; after_last_tier: UcpCancellationOutcome };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** The signed offer's totals: the breakdown when its addends sum to `agent_total`, else the total alone. */
export function offerTotals(offer: OfferPayload, total: number): UcpTotal[] {
  const nights = offer.price.breakdown ?? [];
  const fees = offer.price.adjustments ?? [];
  const subtotal = sum(nights.map((n) => n.nightly_rate));
  const itemised = nights.length > 0 && fees.every((f) => f.amount >= 0) && subtotal + sum(fees.map((f) => f.amount)) === total;
  if (!itemised)
    return [
      { type: 'subtotal', amount: total, display_text: 'Stay' },
      { type: 'total', amount: total, display_text: 'Total' },
    ];
  return [
    {
      type: 'subtotal',
      amount: subtotal,
      display_text: `${nights.length} night${nights.length === 1 ? '' : 's'}`,
      lines: nights.map((n) => ({ display_text: n.date, amount: n.nightly_rate })),
    },
    ...fees.map((f): UcpTotal => ({ type: 'fee', amount: f.amount, display_text: f.label })),
    { type: 'total', amount: total, display_text: 'Total' },
  ];
}

/** The one payment term: the whole total to the host at the property; nothing is charged on completion. */
export function paymentTerms(offer: OfferPayload, total: number, checkIn: string): { terms: UcpPaymentTerm[]; selected_term_id: string } {
  return {
    terms: [
      {
        id: 'pay_at_property',
        title: 'Pay the host at the property',
        schedules: [{ id: 'balance', type: 'at_property', description: { plain: atPropertyWords(offer, checkIn) }, amount: total }],
      },
    ],
    selected_term_id: 'pay_at_property',
  };
}

function atPropertyWords(offer: OfferPayload, checkIn: string): string {
  const from = offer.rules?.check_in_time ? ` from ${offer.rules.check_in_time}` : '';
  return `The whole total is paid to the host on arrival (${checkIn}${from}). Nothing is charged when you book.`;
}

/**
 * Booking, Local Tax & Fee Disclosures: charges the property collects are disclosed with a warning
 * whose `path` is the schedule (here the whole total).
 */
export function atPropertyDisclosure(offer: OfferPayload, checkIn: string): UcpMessage {
  return {
    type: 'warning',
    code: 'at_property_payment',
    content: atPropertyWords(offer, checkIn),
    path: '$.payment.terms[0].schedules[0]',
    presentation: 'disclosure',
  };
}

/** The refund schedule in words, strictest row last (Core VRP v0.1 §5.3: null = not published, [] = never a refund). */
export function refundWords(rows: readonly RefundScheduleRow[] | null): string {
  if (rows === null) return 'The host has not published cancellation terms for this stay: ask the host before you book.';
  if (rows.length === 0) return 'No refund if you cancel.';
  const ordered = [...rows].sort((a, b) => b.hours_before_checkin - a.hours_before_checkin);
  return ordered
    .map((r) => `${r.refund_percent}% refund when cancelled at least ${r.hours_before_checkin} hours before check-in.`)
    .join(' ');
}

/** Basis points of a refund percentage (`buyer_bps`: 10000 is a full refund). */
const bps = (percent: number) => Math.round(percent * 100);

/** `refundability` of an outcome (cancellation-policy extension, Refundability classification). */
const classify = (o: UcpCancellationOutcome) =>
  o.buyer_bps === 10000 ? 'refundable' : o.buyer_bps === 0 ? 'non_refundable' : 'partially_refundable';

/**
 * The signed refund rows as an ordered schedule (cancellation-policy extension, Deterministic schedule):
 * one tier per distinct threshold, farthest first, `until` = `PT{hours}H`, after the last cutoff no
 * refund (Core VRP v0.1 §5.3: no matching row is 0 %). Core VRP gives a row's refund at exactly its
 * threshold (H ≥ hours) where UCP moves on at the cutoff instant: the two differ at that one instant.
 * Rows with one threshold and two percentages are ambiguous (the agent's evaluateRefund says unknown):
 * no schedule then.
 */
function refundSchedule(rows: readonly RefundScheduleRow[], anchor: string): UcpPolicy['schedule'] | undefined {
  const ordered = [...rows].sort((a, b) => b.hours_before_checkin - a.hours_before_checkin);
  const tiers: { until: string; outcome: UcpCancellationOutcome }[] = [];
  for (const [i, r] of ordered.entries()) {
    const prev = ordered[i - 1];
    if (prev && prev.hours_before_checkin === r.hours_before_checkin) {
      if (prev.refund_percent !== r.refund_percent) return undefined;
      continue;
    }
    tiers.push({ until: `PT${r.hours_before_checkin}H`, outcome: { kind: 'percentage', buyer_bps: bps(r.refund_percent) } });
  }
  if (tiers.length === 0) return undefined;
  return { anchor, tiers, after_last_tier: { kind: 'percentage', buyer_bps: 0 } };
}

/** The outcome the schedule selects at `now` (cancellation-policy extension, Evaluation). */
function outcomeAt(schedule: NonNullable<UcpPolicy['schedule']>, now: number): UcpCancellationOutcome {
  const anchor = Date.parse(schedule.anchor);
  for (const t of schedule.tiers) if (now < anchor - Number(t.until.slice(2, -1)) * 3_600_000) return t.outcome;
  return schedule.after_last_tier;
}

/**
 * The cancellation policy the offer signed, as the extension's item, and the disclosure warning that
 * compels a platform to show it (extension, Non-refundable bookings; vrpkit shows it for every class).
 * The anchor is check-in: `rules.check_in_time` on the check-in date in the property's time zone, or
 * the start of that date when the offer states no time (the earlier instant: no refund is shown that
 * the host might not give). Unpublished terms (null) carry no schedule and an open-vocabulary
 * `refundability` platforms must tolerate (they fall back to `description`).
 */
export function cancellationTerms(
  offer: OfferPayload,
  stay: { check_in: string; time_zone: string },
  now: number,
): { policy: UcpPolicy; warning: UcpMessage } {
  const rows = offer.rules?.refund_schedule ?? null;
  const plain = refundWords(rows);
  const anchor = checkInInstant(stay.check_in, offer.rules?.check_in_time ?? null, stay.time_zone);
  const schedule = rows && rows.length > 0 && anchor ? refundSchedule(rows, anchor) : undefined;
  const refundability = schedule
    ? classify(outcomeAt(schedule, now))
    : rows === null || rows.length > 0
      ? 'dev.vrpkit.unknown'
      : 'non_refundable';
  return {
    policy: { type: UCP_CANCELLATION_POLICY_TYPE, description: { plain }, refundability, ...(schedule ? { schedule } : {}) },
    warning: { type: 'warning', code: UCP_CANCELLATION_POLICY_TYPE, content: plain, presentation: 'disclosure' },
  };
}
