/**
 * The inbox: the UCP booking sessions and the reservations (booking requests, the holds a guest's
 * confirmation made) by status; one session with the guest's party, the signed totals and terms the
 * guest confirmed (the same Booking view the platform got, ucp/view.ts) and its hold; one
 * reservation with the guest's details, its signed total and receipt, and the host's decision on a
 * pending hold: confirm, or decline with the reason the guest is mailed (`vrp node bookings
 * confirm|decline`, through `ConsoleActions`).
 */
import { type BookingStatus, BookingStatusSchema, UcpSessionStatusSchema } from '@vrpkit/protocol';
import type { Hono } from 'hono';
import { MAX_DECLINE_REASON_CHARS } from '../booking/admin.js';
import type { BookingRequestRecord } from '../booking/ports.js';
import { signBookingReceipt } from '../booking/receipt.js';
import type { FormSpec } from '../http/forms.js';
import { escapeHtml as e } from '../http/html.js';
import { sessionOfHold } from '../ucp/confirm.js';
import type { UcpSessionRecord } from '../ucp/ports.js';
import type { UcpPaymentTerm, UcpPolicy, UcpTotal } from '../ucp/terms.js';
import { bookingView } from '../ucp/view.js';
import { type ConsoleDeps, mountChange, pageContext } from './context.js';
import { formFields, link, type PageContext, page, scrollable, when } from './pages.js';

export const DECIDE_FORM: FormSpec = { action: '/inbox/decide', bound: ['booking_id', 'decision'] };
const HOLD_STATUSES: readonly BookingStatus[] = BookingStatusSchema.options;
type SessionStatus = UcpSessionRecord['status'];
/** The statuses a session is stored in (`complete_in_progress` never is). */
const SESSION_STATUSES = UcpSessionStatusSchema.options.filter((s): s is SessionStatus => s !== 'complete_in_progress');
type SessionRow = Awaited<ReturnType<ConsoleDeps['reads']['ucpSessions']>>[number];

/** An amount in minor units as the host reads it: `1234.50 EUR`. */
export function money(minor: number, currency: string, digits: number): string {
  return `${(Number(minor) / 10 ** digits).toFixed(digits)} ${currency}`;
}

const sessionPath = (id: string) => `/inbox/sessions/${encodeURIComponent(id)}`;
const holdPath = (id: string) => `/inbox/${encodeURIComponent(id)}`;

function holdsTable(p: PageContext, rows: BookingRequestRecord[], amount: (b: BookingRequestRecord) => string): string {
  if (rows.length === 0) return '<p>No reservations here.</p>';
  const body = rows
    .map(
      (b) => `<tr><td><a href="${link(p, holdPath(b.booking_id))}">${e(b.booking_id)}</a></td><td>${e(b.check_in)} → ${e(b.check_out)}</td>
<td>${e(b.guests)}</td><td class="guest">${e(b.guest_name)}</td><td>${e(amount(b))}</td><td>${e(b.status)}</td><td>${
        b.status === 'pending' ? when(b.hold_expires_at) : '—'
      }</td></tr>`,
    )
    .join('');
  return scrollable(
    'Reservations',
    `<table><caption>Reservations</caption><thead><tr><th scope="col">Request</th><th scope="col">Nights</th>
<th scope="col">Guests</th><th scope="col">Guest</th><th scope="col">Total</th><th scope="col">Status</th><th scope="col">Hold until</th></tr></thead>
<tbody>${body}</tbody></table>`,
  );
}

function sessionsTable(p: PageContext, rows: SessionRow[], amount: (s: SessionRow) => string): string {
  if (rows.length === 0) return '<p>No booking sessions here.</p>';
  const body = rows
    .map(
      (
        s,
      ) => `<tr><td><a href="${link(p, sessionPath(s.session_id))}">${e(s.session_id)}</a></td><td>${e(s.check_in)} → ${e(s.check_out)}</td>
<td>${e(s.guests)}</td><td class="guest">${e(s.buyer_name ?? '—')}</td><td>${e(amount(s))}</td><td>${e(s.status)}</td><td>${
        s.booking_id ? `<a href="${link(p, holdPath(s.booking_id))}">${e(s.booking_id)}</a>` : '—'
      }</td></tr>`,
    )
    .join('');
  return scrollable(
    'Booking sessions',
    `<table><caption>Booking sessions (UCP)</caption><thead><tr><th scope="col">Session</th><th scope="col">Nights</th>
<th scope="col">Guests</th><th scope="col">Lead guest</th><th scope="col">Total</th><th scope="col">Status</th><th scope="col">Reservation</th></tr></thead>
<tbody>${body}</tbody></table>`,
  );
}

function statusLinks(p: PageContext, current: string): string {
  const links = (label: string, statuses: readonly string[]) =>
    `<li>${label}: <ul>${statuses
      .map(
        (s) =>
          `<li><a href="${link(p, `/inbox?status=${s}`)}"${s === current ? ' aria-current="page"' : ''}>${s.replaceAll('_', ' ')}</a></li>`,
      )
      .join('')}</ul></li>`;
  return `<nav aria-label="Status"><ul>${links('Reservations', ['pending', ...HOLD_STATUSES.filter((s) => s !== 'pending')])}${links(
    'Sessions',
    SESSION_STATUSES,
  )}<li><a href="${link(p, '/inbox?status=all')}"${current === 'all' ? ' aria-current="page"' : ''}>all</a></li></ul></nav>`;
}

function decisionForms(p: PageContext, b: BookingRequestRecord): string {
  if (b.status !== 'pending') return '';
  const fields = (decision: 'confirmed' | 'declined') => formFields(p, DECIDE_FORM, { booking_id: b.booking_id, decision });
  return `<h2>Decision</h2><form class="inline" method="post" action="${link(p, DECIDE_FORM.action)}">${fields('confirmed')}<button type="submit">Confirm booking</button></form>
<form method="post" action="${link(p, DECIDE_FORM.action)}">${fields('declined')}
<label for="reason">Reason for declining (the guest is mailed it)</label>
<textarea id="reason" name="reason" required maxlength="${MAX_DECLINE_REASON_CHARS}" rows="3"></textarea>
<p><button type="submit" class="secondary">Decline</button></p></form>`;
}

const row = (k: string, v: string, cls = '') => `<tr><th scope="row">${k}</th><td${cls}>${v}</td></tr>`;

function bookingDetail(p: PageContext, b: BookingRequestRecord, amount: string, receipt: string): string {
  const session = sessionOfHold(b.idempotency_key);
  return `<table><caption>Request ${e(b.booking_id)}</caption><tbody>
${row('Status', e(b.status))}${row('Nights', `${e(b.check_in)} → ${e(b.check_out)}`)}${row('Guests', e(b.guests))}
${row('Total (as signed in the offer)', e(amount))}${row('Guest', e(b.guest_name), ' class="guest"')}${row('Email', e(b.guest_email), ' class="guest"')}
${row('Phone', e(b.guest_phone ?? '—'), ' class="guest"')}${row('Requested', when(b.created_at))}${row('Hold until', when(b.hold_expires_at))}
${session ? row('Booking session', `<a href="${link(p, sessionPath(session))}">${e(session)}</a>`) : ''}
${b.decision_reason ? row('Reason declined', e(b.decision_reason), ' class="guest"') : ''}
${row('Offer JWS digest (SHA-256)', e(b.offer_jws_sha256), ' class="mono"')}</tbody></table>
${decisionForms(p, b)}<h2>Receipt</h2><p>The signed booking-request receipt as the guest's agent receives it (verify it with the node's JWKS):</p>
<p class="mono">${e(receipt)}</p>`;
}

/** The parts of a session's Booking view (ucp/view.ts) the host reads: what the guest confirmed. */
interface SessionView {
  totals: UcpTotal[];
  payment: { terms: UcpPaymentTerm[] };
  policies: UcpPolicy[];
  messages: { type: string; code: string; content: string }[];
  booker?: { first_name?: string; last_name?: string; email?: string; phone_number?: string };
  guests?: { id: string; first_name?: string; last_name?: string; email?: string }[];
}

function sessionDetail(p: PageContext, s: UcpSessionRecord, v: SessionView, money: (minor: number) => string): string {
  const person = (x: { first_name?: string; last_name?: string; email?: string } | undefined) =>
    x ? e([x.first_name, x.last_name].filter(Boolean).join(' ') + (x.email ? ` <${x.email}>` : '')) : '—';
  const totals = v.totals.map((t) => row(e(t.display_text ?? t.type), e(money(t.amount)))).join('');
  const terms = v.payment.terms.flatMap((t) => t.schedules.map((x) => `<li>${e(x.description.plain)}</li>`)).join('');
  const policies = v.policies.map((x) => `<li>${e(x.description.plain)}</li>`).join('');
  const messages = v.messages.map((m) => `<li class="guest">${e(m.type)} ${e(m.code)}: ${e(m.content)}</li>`).join('');
  return `<table><caption>Session ${e(s.session_id)}</caption><tbody>
${row('Status', e(s.status))}${row('Nights', `${e(s.check_in)} → ${e(s.check_out)}`)}${row('Guests', e(s.guests))}
${row('Lead guest', e(s.buyer_name ?? '—'), ' class="guest"')}${row('Lead email', e(s.buyer_email ?? '—'), ' class="guest"')}
${row('Booker', person(v.booker), ' class="guest"')}${(v.guests ?? []).map((g) => row(`Guest ${e(g.id)}`, person(g), ' class="guest"')).join('')}
${row('Reservation', s.booking_id ? `<a href="${link(p, holdPath(s.booking_id))}">${e(s.booking_id)}</a>` : 'none yet: the guest has not confirmed')}
${s.cancel_reason ? row('Reason declined', e(s.cancel_reason), ' class="guest"') : ''}
${row('Created', when(s.created_at))}${row('Expires', when(s.expires_at))}${row('Offer JWS digest (SHA-256)', e(s.offer_jws_sha256), ' class="mono"')}
</tbody></table>
<table><caption>Totals as signed in the offer</caption><tbody>${totals}</tbody></table>
<h2>Terms the guest confirmed</h2><h3>Payment</h3><ul>${terms}</ul><h3>Cancellation</h3><ul>${policies}</ul>
<h2>Messages the platform is given</h2><ul>${messages}</ul>`;
}

export function mountInbox(app: Hono, x: ConsoleDeps): void {
  const digits = () => x.publisher.property().currency_minor_digits;
  const holdAmount = () => {
    const d = digits();
    return (b: BookingRequestRecord) => money(b.total, b.currency, d);
  };

  app.get('/inbox', async (c) => {
    const asked = c.req.query('status') ?? 'pending';
    const hold = HOLD_STATUSES.find((s) => s === asked);
    const session = SESSION_STATUSES.find((s) => s === asked);
    const all = !hold && !session;
    const d = digits();
    const p = pageContext(c, 'inbox');
    const parts = [
      session || all ? sessionsTable(p, await x.reads.ucpSessions(session), (s) => money(s.total, s.currency, d)) : '',
      hold || all ? holdsTable(p, await x.reads.bookingRequests(hold), holdAmount()) : '',
    ];
    return c.html(page(p, 'Inbox', statusLinks(p, all ? 'all' : asked) + parts.join('')));
  });

  app.get('/inbox/sessions/:id', async (c) => {
    const s = await x.reads.ucpSession(c.req.param('id'));
    const p = pageContext(c, 'inbox');
    if (!s) return c.html(page(p, 'Not found', '<p>No booking session has this id.</p>'), 404);
    const v = bookingView(s, { origin: x.publisher.origin, property: x.publisher.property(), now: p.now }) as unknown as SessionView;
    const d = digits();
    return c.html(
      page(
        p,
        `Booking session ${s.session_id}`,
        sessionDetail(p, s, v, (m) => money(m, s.currency, d)),
      ),
    );
  });

  app.get('/inbox/:id', async (c) => {
    const b = await x.reads.bookingRequest(c.req.param('id'));
    const p = pageContext(c, 'inbox');
    if (!b) return c.html(page(p, 'Not found', '<p>No booking request has this id.</p>'), 404);
    const receipt = signBookingReceipt(b, x.publisher.canonicalDomain, x.publisher.activeSigner(), p.now);
    return c.html(page(p, `Booking request ${b.booking_id}`, bookingDetail(p, b, holdAmount()(b), receipt)));
  });

  mountChange(app, x, DECIDE_FORM, (form) => {
    const id = form.get('booking_id') ?? '';
    const decision = form.get('decision');
    if (decision !== 'confirmed' && decision !== 'declined') return '/inbox';
    const reason = form.get('reason') ?? undefined;
    const back = holdPath(id);
    return {
      action: `booking_${decision}`,
      target: id,
      run: () => x.actions.decideBooking(id, decision, reason),
      done: back,
      back,
    };
  });
}
