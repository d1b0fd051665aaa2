/**
 * A session's money and terms, read from the signed offer it is bound to and nothing else, so
 * what an agent shows, what the guest confirms and what the booking receipt signs are one total:
 * - `totals[]` (UCP `common/types/totals.json`): one `subtotal` (the signed nightly breakdown, one
 *   line a night), a `fee` per signed adjustment, one `total` equal to `price.agent_total`. When the
 *   signed addends do not sum to the signed total the breakdown is not shown: one subtotal equal to
 *   the total (the total is the authority, Core VRP v0.1 §5).
 * - `payment.terms` (UCP payment-terms extension): the node takes no payment; the host collects the
 *   whole total at the property (`at_property`, a type the open vocabulary admits: not due at completion).
 * - `policies[]` (UCP `common/types/policy.json`): the refund schedule the offer signed (Core VRP v0.1
 *   §5.3), with the `messages[]` warning of the same code that compels showing it (UCP Policies).
 */
import type { OfferPayload, RefundScheduleRow, UcpMessage } from '@vrpkit/protocol';
import { UCP_CANCELLATION_POLICY_TYPE } from '@vrpkit/protocol';

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

export interface UcpPolicy {
  type: string;
  description: { plain: string };
  refund_schedule: RefundScheduleRow[] | null;
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
  const from = offer.rules?.check_in_time ? ` from ${offer.rules.check_in_time}` : '';
  return {
    terms: [
      {
        id: 'pay_at_property',
        title: 'Pay the host at the property',
        schedules: [
          {
            id: 'balance',
            type: 'at_property',
            description: { plain: `The whole total is paid to the host on arrival (${checkIn}${from}). Nothing is charged when you book.` },
            amount: total,
          },
        ],
      },
    ],
    selected_term_id: 'pay_at_property',
  };
}

/** The refund schedule in words, strictest row last (Core VRP v0.1 §5.3: null = not published, [] = never a refund). */
function refundWords(rows: readonly RefundScheduleRow[] | null): string {
  if (rows === null) return 'The host has not published cancellation terms for this stay: ask the host before you book.';
  if (rows.length === 0) return 'No refund if you cancel.';
  const ordered = [...rows].sort((a, b) => b.hours_before_checkin - a.hours_before_checkin);
  return ordered
    .map((r) => `${r.refund_percent}% refund when cancelled at least ${r.hours_before_checkin} hours before check-in.`)
    .join(' ');
}

/** The cancellation policy the offer signed, and the warning that compels a platform to show it. */
export function cancellationTerms(offer: OfferPayload): { policy: UcpPolicy; warning: UcpMessage } {
  const rows = offer.rules?.refund_schedule ?? null;
  const plain = refundWords(rows);
  return {
    policy: { type: UCP_CANCELLATION_POLICY_TYPE, description: { plain }, refund_schedule: rows },
    warning: { type: 'warning', code: UCP_CANCELLATION_POLICY_TYPE, content: plain },
  };
}
