/**
 * The booking landing page `/book` (Core VRP v0.1 §5.1): it re-quotes live and fails closed. It never
 * honours the `offer` parameter's old price: it shows the terms of a fresh signed offer for
 * the same stay, or says the stay is no longer available. Its form starts a UCP booking session
 * from that signed offer (booking/http.ts `mountBookForm`); the guest confirms on the session's page.
 */
import { BOOK_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { FORM_TOKEN_FIELD, type FormSpec } from '../http/forms.js';
import { escapeHtml as esc } from '../http/html.js';
import { offerQuery } from '../http/query.js';
import { type OfferOutcome, type OfferService, offerFor } from '../service/index.js';

/** The `/book` form: where it posts and the hidden field its token binds (http/forms.ts). */
export const BOOK_FORM: FormSpec = { action: BOOK_PATH, bound: ['offer_jws'] };

/** The token of a `/book` form rendered now with these bound values. */
export type FormTokenFor = (values: Readonly<Record<string, string>>) => string;

/** Core VRP v0.1 §5.1: the booking link's own parameter next to the §4 request; read and ignored (the page always re-quotes). */
const OFFER_REFERENCE_PARAMETER = 'offer';

export function money(amount: number, currency: string, digits: number): string {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(amount / 10 ** digits);
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;width:100%}td,th{padding:.25rem .5rem;border-bottom:1px solid #ddd;text-align:left}
td.n,th.n{text-align:right}.total td{font-weight:700}.note{color:#555;font-size:.9rem}.unavailable{color:#8a1f11}</style>
</head><body>${body}</body></html>`;
}

/**
 * The request form: it posts the signed offer shown on this page (never a price the page could
 * alter: the session is bound to the JWS, which the node re-checks and re-quotes) with the guest's
 * details, and the form token binding the offer (http/forms.ts: the post must come from this page).
 * A double submit makes two unconfirmed sessions, and an unconfirmed session blocks no night.
 */
function bookingForm(offerJws: string, tokenFor: FormTokenFor): string {
  const token = tokenFor({ offer_jws: offerJws });
  return `<h3>Request this stay</h3>
<form method="post" action="${BOOK_PATH}" id="booking-form">
<input type="hidden" name="offer_jws" value="${esc(offerJws)}">
<input type="hidden" name="${FORM_TOKEN_FIELD}" value="${esc(token)}">
<p><label>First name <input name="guest_first_name" required maxlength="100" autocomplete="given-name"></label></p>
<p><label>Last name <input name="guest_last_name" required maxlength="100" autocomplete="family-name"></label></p>
<p><label>Email <input name="guest_email" type="email" required maxlength="254" autocomplete="email"></label></p>
<p><label>Phone (optional) <input name="guest_phone" type="tel" maxlength="32" autocomplete="tel"></label></p>
<p><button type="submit">Continue</button></p>
<p class="note">Next you confirm with a code we email you; only then does the host hold the dates. Nothing is charged here.</p>
</form>`;
}

/** The page after a refused post: no stay request was made, and why (`code`, `message`). */
export function renderRefusedRequest(canonicalDomain: string, code: string, message: string): string {
  return page(
    'Stay request not made',
    `<p class="note">Stay request on ${esc(canonicalDomain)}.</p><h1>No stay request was made</h1><p class="unavailable" id="booking-status" data-code="${esc(code)}">${esc(message)} (${esc(code)}).</p>`,
  );
}

export interface BookPage {
  status: 200 | 400;
  html: string;
}

/** The offer for the link's stay: the offer endpoint's parser and codes, with the link's one `offer` reference set aside. */
async function requote(service: OfferService, url: string): Promise<OfferOutcome> {
  const read = offerQuery(url);
  if (!read.ok) return read;
  const { query } = read;
  if (query.getAll(OFFER_REFERENCE_PARAMETER).length > 1) {
    return { ok: false, error: { code: 'duplicate_parameter', message: `${OFFER_REFERENCE_PARAMETER} given more than once` } };
  }
  query.delete(OFFER_REFERENCE_PARAMETER);
  // Core VRP v0.1 §5.1: signed afresh from the store as it is now, never a cached offer.
  return offerFor(service, query, { fresh: true });
}

/**
 * Render `/book` for the request URL it received (`checkIn`, `checkOut`, `guests` or their
 * snake_case names; `offer` is read and ignored), its form carrying a token from `tokenFor`.
 */
export async function renderBookPage(service: OfferService, url: string, tokenFor: FormTokenFor): Promise<BookPage> {
  const p = service.property();
  const outcome = await requote(service, url);
  const heading = `<h1>${esc(p.name)}</h1><p class="note">Booking page on ${esc(service.canonicalDomain)}. It always re-quotes live: an earlier quote or offer reference is never honoured.</p>`;
  if (!outcome.ok) {
    return {
      status: 400,
      html: page(
        `${p.name}: booking`,
        `${heading}<p class="unavailable">This booking link is not valid (${esc(outcome.error.code)}): ${esc(outcome.error.message)}.</p>`,
      ),
    };
  }
  const { offer } = outcome.envelope as OfferEnvelope;
  const r = offer.request!;
  const stay = `${esc(r.check_in)} → ${esc(r.check_out)} · ${r.nights} night${r.nights === 1 ? '' : 's'} · ${r.guests} guest${r.guests === 1 ? '' : 's'}`;
  const embedded = `<script type="application/json" id="vrp-offer">${outcome.json.replace(/</g, '\\u003c')}</script>`;
  if (!offer.availability.available || !offer.agent_permission.may_quote_as_official_direct_offer || offer.price.agent_total === null) {
    return {
      status: 200,
      html: page(
        `${p.name}: not available`,
        `${heading}<h2>${stay}</h2><p class="unavailable" id="status" data-available="false">This stay is no longer available (${esc(String(offer.availability.reason ?? 'not_available'))}).</p>${embedded}`,
      ),
    };
  }
  const cur = offer.price.currency;
  const d = p.currency_minor_digits;
  const nights = (offer.price.breakdown ?? [])
    .map(
      (n) =>
        `<tr><td>${esc(n.date)}</td><td>${esc(n.season_name ?? 'Standard')}${n.is_weekend ? ' (weekend)' : ''}</td><td class="n">${money(n.nightly_rate, cur, d)}</td></tr>`,
    )
    .join('');
  const fees = (offer.price.adjustments ?? [])
    .map((a) => `<tr><td colspan="2">${esc(a.label)}</td><td class="n">${money(a.amount, cur, d)}</td></tr>`)
    .join('');
  const refunds =
    offer.rules?.refund_schedule == null
      ? '<p>The host has not published computable refund terms.</p>'
      : offer.rules.refund_schedule.length === 0
        ? '<p>No refund at any point.</p>'
        : `<table><tr><th>Cancelled at least … hours before check-in</th><th class="n">Refund</th></tr>${offer.rules.refund_schedule
            .map((row) => `<tr><td>${row.hours_before_checkin}</td><td class="n">${row.refund_percent}%</td></tr>`)
            .join('')}</table>`;
  return {
    status: 200,
    html: page(
      `${p.name}: book ${r.check_in} to ${r.check_out}`,
      `${heading}<h2>${stay}</h2>
<p id="status" data-available="true">Available now. Current signed terms (offer ${esc(offer.booking.offer_id ?? '')}, valid until ${esc(offer.valid_until)}):</p>
<table><tr><th>Night</th><th>Rate</th><th class="n">Amount</th></tr>${nights}${fees}
<tr class="total"><td colspan="2">Total (no add-on fees)</td><td class="n" id="total" data-minor="${offer.price.agent_total}">${money(offer.price.agent_total, cur, d)}</td></tr></table>
<p>Check-in from ${esc(offer.rules?.check_in_time ?? '')}, check-out by ${esc(offer.rules?.check_out_time ?? '')}.</p>
<h3>Refund schedule</h3>${refunds}
<p class="note">You book directly with the host; payment goes to the host. This node does not take payment online.</p>
${bookingForm(outcome.envelope.signature.jws, tokenFor)}${embedded}`,
    ),
  };
}
