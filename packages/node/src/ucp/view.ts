/**
 * A session as UCP Checkout (`source/schemas/shopping/checkout.json` composed with the payment-terms
 * extension): the `ucp` envelope, the one stay line, `totals[]`, `payment.terms`, `policies[]`,
 * `links[]`, `messages[]`, `continue_url` while the guest must act, `order` once completed, and the
 * stay with its signed offer (and, once held, the signed booking receipt) under `dev.vrpkit.lodging`.
 * Everything priced comes from the bound offer's signed payload (terms.ts).
 */
import { jwsPayloadJson, parseCompactJws } from '@vrpkit/core';
import {
  type OfferPayload,
  readOfferPayload,
  UCP_CHECKOUT_CAPABILITY,
  UCP_CONTINUE_PATH,
  UCP_LODGING_KEY,
  UCP_PAYMENT_TERMS_CAPABILITY,
  UCP_STAY_ITEM_ID,
  UCP_VERSION,
  type UcpMessage,
  type UcpSessionCode,
} from '@vrpkit/protocol';
import type { UcpSessionRecord } from './ports.js';
import { cancellationTerms, offerTotals, paymentTerms } from './terms.js';

/** The `ucp` member of every checkout response (UCP `ucp.json#/$defs/response_checkout_schema`). */
export const CHECKOUT_ENVELOPE = {
  version: UCP_VERSION,
  capabilities: {
    [UCP_CHECKOUT_CAPABILITY]: [{ version: UCP_VERSION }],
    [UCP_PAYMENT_TERMS_CAPABILITY]: [{ version: UCP_VERSION, extends: UCP_CHECKOUT_CAPABILITY }],
  },
  // The node takes no payment: the host collects at the property (terms.ts).
  payment_handlers: {},
};

/** The signed payload of an offer JWS the node already checked when the session was made. */
export function boundOffer(offerJws: string): OfferPayload {
  const parsed = parseCompactJws(offerJws);
  const offer = parsed.ok ? readOfferPayload(jwsPayloadJson(parsed.jws)) : null;
  // A stored session's offer passed checkOwnOffer before the row was written: anything else is a corrupted store.
  if (!offer) throw new Error('a stored UCP session holds an offer that does not parse');
  return offer;
}

/** A refusal as a UCP error message with its stable code. */
export function errorMessage(
  code: UcpSessionCode,
  content: string,
  severity: NonNullable<UcpMessage['severity']>,
  path?: string,
): UcpMessage {
  return { type: 'error', code, content, severity, ...(path ? { path } : {}) };
}

/** The guest's page for session `id` on the node's own origin. */
export const continueUrl = (origin: string, id: string) => `${origin}${UCP_CONTINUE_PATH}/${encodeURIComponent(id)}`;

/** What the session needs before the guest can confirm: UCP's `missing` with the JSONPath of each absent buyer field. */
export function missingBuyer(s: Pick<UcpSessionRecord, 'buyer_email' | 'buyer_name'>): UcpMessage[] {
  const out: UcpMessage[] = [];
  if (!s.buyer_email) out.push(errorMessage('missing', 'The guest’s email is required', 'recoverable', '$.buyer.email'));
  if (!s.buyer_name) out.push(errorMessage('missing', 'The guest’s name is required', 'recoverable', '$.buyer.first_name'));
  return out;
}

/** The messages a session carries in its status, before any the operation adds. */
function statusMessages(s: UcpSessionRecord): UcpMessage[] {
  if (s.status === 'incomplete') return missingBuyer(s);
  if (s.status === 'requires_escalation')
    return [
      errorMessage(
        'guest_confirmation_required',
        'The guest reviews the stay and confirms with a code sent to their email on the host’s page (continue_url); no night is held before that.',
        'requires_buyer_review',
      ),
    ];
  return [];
}

export interface SessionViewContext {
  origin: string;
  propertyName: string;
  propertyUrl: string;
  /** The signed booking receipt, once the session holds a booking. */
  receiptJws?: string;
}

/** Session `s` as a UCP Checkout response, with `extra` messages after those of its status. */
export function checkoutView(s: UcpSessionRecord, ctx: SessionViewContext, extra: readonly UcpMessage[] = []): Record<string, unknown> {
  const offer = boundOffer(s.offer_jws);
  const total = Number(s.total);
  const totals = offerTotals(offer, total);
  const cancellation = cancellationTerms(offer);
  const nights = Math.round((Date.parse(s.check_out) - Date.parse(s.check_in)) / 86_400_000);
  const open = s.status === 'incomplete' || s.status === 'requires_escalation' || s.status === 'ready_for_complete';
  return {
    ucp: CHECKOUT_ENVELOPE,
    id: s.session_id,
    status: s.status,
    currency: s.currency,
    line_items: [
      {
        id: 'li_stay',
        item: {
          id: UCP_STAY_ITEM_ID,
          title: `${ctx.propertyName}: ${s.check_in} to ${s.check_out}, ${nights} nights, ${s.guests} guests`,
          price: total,
        },
        quantity: 1,
        totals,
      },
    ],
    ...(s.buyer_email || s.buyer_name ? { buyer: buyerView(s) } : {}),
    totals,
    payment: paymentTerms(offer, total, s.check_in),
    policies: [{ ...cancellation.policy, applies_to: ['$.line_items[0]'] }],
    links: [{ type: 'dev.vrpkit.property', url: ctx.propertyUrl, title: ctx.propertyName }],
    messages: [...statusMessages(s), ...extra, cancellation.warning],
    expires_at: s.expires_at,
    ...(open ? { continue_url: continueUrl(ctx.origin, s.session_id) } : {}),
    ...(s.status === 'completed' && s.booking_id
      ? { order: { id: s.booking_id, permalink_url: continueUrl(ctx.origin, s.session_id) } }
      : {}),
    [UCP_LODGING_KEY]: {
      property_id: s.property_id,
      check_in: s.check_in,
      check_out: s.check_out,
      guests: Number(s.guests),
      offer_jws: s.offer_jws,
      offer_jws_sha256: s.offer_jws_sha256,
      ...(s.booking_id ? { booking_id: s.booking_id } : {}),
      ...(ctx.receiptJws ? { booking_receipt_jws: ctx.receiptJws } : {}),
    },
  };
}

/** The buyer as stored, back in UCP's fields (the name kept whole: first and last joined on the way in). */
function buyerView(s: UcpSessionRecord): Record<string, string> {
  return { ...(s.buyer_email ? { email: s.buyer_email } : {}), ...(s.buyer_name ? { first_name: s.buyer_name } : {}) };
}

/** No session exists to show (UCP `common/types/error_response.json`): the refusal alone. */
export function errorResponseBody(message: UcpMessage): Record<string, unknown> {
  return { ucp: { version: UCP_VERSION, status: 'error' }, messages: [message] };
}
