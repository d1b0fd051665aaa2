/**
 * The inbox: booking requests by status, one request with the guest's details, the total and
 * stay they asked for and the signed receipt, and the host's decision on a pending hold
 * (`vrp node bookings confirm|decline`, through `ConsoleActions`).
 */
import { type BookingStatus, BookingStatusSchema } from '@vrpkit/protocol';
import type { Hono } from 'hono';
import type { BookingRequestRecord } from '../booking/ports.js';
import { signBookingReceipt } from '../booking/receipt.js';
import type { FormSpec } from '../http/forms.js';
import { escapeHtml as e } from '../http/html.js';
import { type ConsoleDeps, mountChange, pageContext } from './context.js';
import { formFields, type PageContext, page, scrollable, when } from './pages.js';

export const DECIDE_FORM: FormSpec = { action: '/inbox/decide', bound: ['booking_id', 'decision'] };
const STATUSES: readonly BookingStatus[] = BookingStatusSchema.options;

/** An amount in minor units as the host reads it: `1234.50 EUR`. */
export function money(minor: number, currency: string, digits: number): string {
  return `${(Number(minor) / 10 ** digits).toFixed(digits)} ${currency}`;
}

function inboxTable(rows: BookingRequestRecord[], amount: (b: BookingRequestRecord) => string): string {
  if (rows.length === 0) return '<p>No booking requests here.</p>';
  const body = rows
    .map(
      (b) => `<tr><td><a href="/inbox/${e(b.booking_id)}">${e(b.booking_id)}</a></td><td>${e(b.check_in)} → ${e(b.check_out)}</td>
<td>${e(b.guests)}</td><td class="guest">${e(b.guest_name)}</td><td>${e(amount(b))}</td><td>${e(b.status)}</td><td>${
        b.status === 'pending' ? when(b.hold_expires_at) : '—'
      }</td></tr>`,
    )
    .join('');
  return scrollable(
    'Booking requests',
    `<table><caption>Booking requests</caption><thead><tr><th scope="col">Request</th><th scope="col">Nights</th>
<th scope="col">Guests</th><th scope="col">Guest</th><th scope="col">Total</th><th scope="col">Status</th><th scope="col">Hold until</th></tr></thead>
<tbody>${body}</tbody></table>`,
  );
}

function statusLinks(current: string): string {
  return `<nav aria-label="Status"><ul>${['pending', ...STATUSES.filter((s) => s !== 'pending'), 'all']
    .map((s) => `<li><a href="/inbox?status=${s}"${s === current ? ' aria-current="page"' : ''}>${s}</a></li>`)
    .join('')}</ul></nav>`;
}

function decisionForms(p: PageContext, b: BookingRequestRecord): string {
  if (b.status !== 'pending') return '';
  const form = (decision: 'confirmed' | 'declined', label: string, cls: string) =>
    `<form class="inline" method="post" action="${DECIDE_FORM.action}">${formFields(p, DECIDE_FORM, {
      booking_id: b.booking_id,
      decision,
    })}<button type="submit"${cls}>${label}</button></form>`;
  return `<h2>Decision</h2><p>${form('confirmed', 'Confirm booking', '')} ${form('declined', 'Decline', ' class="secondary"')}</p>`;
}

function bookingDetail(p: PageContext, b: BookingRequestRecord, amount: string, receipt: string): string {
  const row = (k: string, v: string, cls = '') => `<tr><th scope="row">${k}</th><td${cls}>${v}</td></tr>`;
  return `<table><caption>Request ${e(b.booking_id)}</caption><tbody>
${row('Status', e(b.status))}${row('Nights', `${e(b.check_in)} → ${e(b.check_out)}`)}${row('Guests', e(b.guests))}
${row('Total (as signed in the offer)', e(amount))}${row('Guest', e(b.guest_name), ' class="guest"')}${row('Email', e(b.guest_email), ' class="guest"')}
${row('Phone', e(b.guest_phone ?? '—'), ' class="guest"')}${row('Requested', when(b.created_at))}${row('Hold until', when(b.hold_expires_at))}
${row('Offer JWS digest (SHA-256)', e(b.offer_jws_sha256), ' class="mono"')}</tbody></table>
${decisionForms(p, b)}<h2>Receipt</h2><p>The signed booking-request receipt as the guest's agent receives it (verify it with the node's JWKS):</p>
<p class="mono">${e(receipt)}</p>`;
}

export function mountInbox(app: Hono, x: ConsoleDeps): void {
  const amountOf = () => {
    const { currency_minor_digits: digits } = x.publisher.property();
    return (b: BookingRequestRecord) => money(b.total, b.currency, digits);
  };

  app.get('/inbox', async (c) => {
    const asked = c.req.query('status') ?? 'pending';
    const status = STATUSES.find((s) => s === asked);
    const rows = await x.reads.bookingRequests(status);
    const p = pageContext(c, 'inbox');
    return c.html(page(p, 'Inbox', statusLinks(status ?? 'all') + inboxTable(status ? rows : rows.reverse(), amountOf())));
  });

  app.get('/inbox/:id', async (c) => {
    const b = await x.reads.bookingRequest(c.req.param('id'));
    const p = pageContext(c, 'inbox');
    if (!b) return c.html(page(p, 'Not found', '<p>No booking request has this id.</p>'), 404);
    const receipt = signBookingReceipt(b, x.publisher.canonicalDomain, x.publisher.activeSigner(), p.now);
    return c.html(page(p, `Booking request ${b.booking_id}`, bookingDetail(p, b, amountOf()(b), receipt)));
  });

  mountChange(app, x, DECIDE_FORM, (form) => {
    const id = form.get('booking_id') ?? '';
    const decision = form.get('decision');
    if (decision !== 'confirmed' && decision !== 'declined') return '/inbox';
    const page = `/inbox/${encodeURIComponent(id)}`;
    return { action: `booking_${decision}`, target: id, run: () => x.actions.decideBooking(id, decision), done: page, back: page };
  });
}
