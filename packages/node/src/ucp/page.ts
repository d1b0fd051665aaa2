/**
 * The guest's page for a UCP session (`continue_url`, on the node's own origin; Booking, Continue
 * URL): it shows exactly the session's totals, payment terms and cancellation policy (the same
 * Booking view the platform got, from the bound signed offer), then two forms: "send me a code" and
 * "confirm with the code".
 * Both forms carry a token bound to the session (http/forms.ts) and post back to this page.
 */
import { UCP_CONTINUE_PATH } from '@vrpkit/protocol';
import { money, page } from '../booking/page.js';
import { FORM_TOKEN_FIELD, type FormSpec } from '../http/forms.js';
import { escapeHtml as esc } from '../http/html.js';
import type { UcpPaymentTerm, UcpPolicy, UcpTotal } from './terms.js';

/** The page's forms: where they post, and the hidden field their token binds (the session). */
export const CONTINUE_FORM: FormSpec = { action: UCP_CONTINUE_PATH, bound: ['session_id'] };

/** The parts of a session's Booking view the page shows. */
export interface ContinueView {
  id: string;
  status: string;
  currency: string;
  totals: UcpTotal[];
  payment: { terms: UcpPaymentTerm[] };
  policies: UcpPolicy[];
  property: { name: string };
  stays: { stay_dates: { start_date: string; end_date: string }; occupancy: { total: number } }[];
}

/** The stay in words: the property, the dates, the nights and the party. */
export function stayTitle(v: Pick<ContinueView, 'property' | 'stays'>): string {
  const s = v.stays[0];
  if (!s) return v.property.name;
  const nights = Math.round((Date.parse(s.stay_dates.end_date) - Date.parse(s.stay_dates.start_date)) / 86_400_000);
  const guests = s.occupancy.total;
  return `${v.property.name}: ${s.stay_dates.start_date} to ${s.stay_dates.end_date}, ${nights} night${nights === 1 ? '' : 's'}, ${guests} guest${guests === 1 ? '' : 's'}`;
}

const STATUS_WORDS: Record<string, string> = {
  incomplete: 'The agent has not sent the guest’s name and email yet: nothing can be confirmed.',
  requires_escalation: 'Waiting for your confirmation. No night is held until you confirm with the code we email you.',
  ready_for_complete: 'Confirmed: the host now holds these dates for you.',
  completed: 'Booked: the host holds these dates for you.',
  canceled: 'This stay request was canceled.',
};

function totalsTable(v: ContinueView, digits: number): string {
  const rows = v.totals
    .map((t) => {
      const lines = (t.lines ?? [])
        .map((l) => `<tr class="line"><td>${esc(l.display_text)}</td><td class="n">${money(l.amount, v.currency, digits)}</td></tr>`)
        .join('');
      const cls = t.type === 'total' ? ' class="total"' : '';
      return `${lines}<tr${cls} data-type="${esc(t.type)}"><td>${esc(t.display_text ?? t.type)}</td><td class="n" data-minor="${t.amount}">${money(t.amount, v.currency, digits)}</td></tr>`;
    })
    .join('');
  return `<table id="totals">${rows}</table>`;
}

function forms(v: ContinueView, token: string, notice: string, email: string): string {
  if (v.status !== 'requires_escalation') return '';
  const hidden = `<input type="hidden" name="session_id" value="${esc(v.id)}"><input type="hidden" name="${FORM_TOKEN_FIELD}" value="${esc(token)}">`;
  const action = `${UCP_CONTINUE_PATH}/${encodeURIComponent(v.id)}`;
  return `${notice ? `<p id="notice">${esc(notice)}</p>` : ''}
<form method="post" action="${esc(action)}" id="send-code">${hidden}<input type="hidden" name="step" value="send_code">
<p>We send a 6-digit code to ${esc(email)}.</p><p><button type="submit">Email me a code</button></p></form>
<form method="post" action="${esc(action)}" id="confirm">${hidden}<input type="hidden" name="step" value="confirm">
<p><label>Code <input name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required></label></p>
<p><button type="submit">Confirm this stay</button></p></form>`;
}

/** The page for the session view `v`; `notice` says what the last step did, `refusal` marks a refused step with its code. */
export function renderContinuePage(
  canonicalDomain: string,
  v: ContinueView,
  o: { token: string; digits: number; email: string; notice?: string; refusal?: string },
): string {
  const terms = v.payment.terms
    .flatMap((t) => t.schedules.map((s) => `<li data-type="${esc(s.type)}">${esc(s.description.plain)}</li>`))
    .join('');
  const policy = v.policies.map((p) => `<p>${esc(p.description.plain)}</p>`).join('');
  return page(
    `Confirm your stay on ${canonicalDomain}`,
    `<p class="note">Stay request on ${esc(canonicalDomain)}, session ${esc(v.id)}.</p>
<h1>${esc(stayTitle(v))}</h1>
<p id="session-status" data-status="${esc(v.status)}"${o.refusal ? ` data-refusal="${esc(o.refusal)}"` : ''}>${esc(STATUS_WORDS[v.status] ?? v.status)}</p>
${totalsTable(v, o.digits)}
<h3>Payment</h3><ul id="payment-terms">${terms}</ul>
<h3>Cancellation</h3><div id="cancellation">${policy}</div>
${forms(v, o.token, o.notice ?? '', o.email)}`,
  );
}
