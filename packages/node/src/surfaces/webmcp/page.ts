/**
 * WebMCP surface (Node Tool Binding v0.1 §3–§6): the node's property page `/`, a real page a guest
 * uses — name, description, rates, an availability calendar, a quote form on the offer
 * endpoint and the booking button to the signed `direct_booking_url` — that also registers
 * `get_verified_stay_offer` with the browser's model context (see script.ts).
 *
 * Server-rendered; every interpolated string goes through `escapeHtml`, and the tool
 * definition is embedded as JSON with `<` escaped so no property text can close the script.
 */
import { JWKS_PATH, OFFER_ENDPOINT_PATH, WEBMCP_TOOL_CALL_PATH } from '@vrpkit/protocol';
import { escapeHtml, scriptJson } from '../../http/html.js';
import type { CalendarDay, OfferService, PropertyView } from '../../service/index.js';
import { OFFER_TOOL_INPUT_SCHEMA, OFFER_TOOL_NAME, OFFER_TOOL_TITLE, offerToolDescription } from '../tool.js';
import { WEBMCP_SCRIPT_PATH } from './script.js';

/** Days the page calendar shows, starting today in the property's time zone. */
const CALENDAR_DAYS = 56;

/** The property facts the page shows. */
type PageFacts = Pick<
  PropertyView,
  | 'name'
  | 'description'
  | 'city'
  | 'country'
  | 'time_zone'
  | 'currency'
  | 'currency_minor_digits'
  | 'max_guests'
  | 'min_nights'
  | 'check_in_time'
  | 'check_out_time'
  | 'refund_schedule'
>;

function formatMoney(minor: number, currency: string, digits: number): string {
  return new Intl.NumberFormat('en', { style: 'currency', currency, maximumFractionDigits: 0 }).format(minor / 10 ** digits);
}

/** Today's date in the property's time zone (`en-CA` formats as YYYY-MM-DD). */
function localToday(now: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

function renderCalendar(days: CalendarDay[], facts: PageFacts): string {
  const months = new Map<string, CalendarDay[]>();
  for (const day of days) {
    const key = day.date.slice(0, 7);
    months.set(key, [...(months.get(key) ?? []), day]);
  }
  const weekdays = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => `<th scope="col">${d}</th>`).join('');
  return [...months.entries()]
    .map(([month, list]) => {
      const first = list[0] as CalendarDay;
      const title = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
        Date.parse(`${month}-01T00:00:00Z`),
      );
      const lead = (new Date(`${first.date}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday-first offset
      const cells = [
        ...Array.from({ length: lead }, () => '<td class="pad"></td>'),
        ...list.map((d) => {
          const label =
            d.available && d.nightly_rate !== null ? formatMoney(d.nightly_rate, facts.currency, facts.currency_minor_digits) : 'booked';
          return `<td class="${d.available ? 'free' : 'taken'}" title="${escapeHtml(d.date)}"><span class="d">${Number(d.date.slice(8))}</span><span class="r">${escapeHtml(label)}</span></td>`;
        }),
      ];
      const rows: string[] = [];
      for (let i = 0; i < cells.length; i += 7) rows.push(`<tr>${cells.slice(i, i + 7).join('')}</tr>`);
      return `<table class="cal"><caption>${escapeHtml(title)}</caption><thead><tr>${weekdays}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
    })
    .join('');
}

function renderRates(days: CalendarDay[], facts: PageFacts): string {
  const rates = days.filter((d) => d.available && d.nightly_rate !== null).map((d) => d.nightly_rate as number);
  if (rates.length === 0) return '<p>No open nights in the coming weeks.</p>';
  const lo = formatMoney(Math.min(...rates), facts.currency, facts.currency_minor_digits);
  const hi = formatMoney(Math.max(...rates), facts.currency, facts.currency_minor_digits);
  return `<p class="rates">Nightly rates <strong>${escapeHtml(lo === hi ? lo : `${lo} – ${hi}`)}</strong>, minimum stay ${facts.min_nights} night${facts.min_nights === 1 ? '' : 's'}. The quoted total includes every fee; nothing is added at checkout.</p>`;
}

function renderRefunds(facts: PageFacts): string {
  if (!facts.refund_schedule) return '';
  const rows = [...facts.refund_schedule]
    .sort((a, b) => b.hours_before_checkin - a.hours_before_checkin)
    .map((r) => {
      const refund = r.refund_percent === 0 ? 'No refund' : `${r.refund_percent}% refund`;
      if (r.hours_before_checkin === 0) return `<li>${refund} when cancelled later</li>`;
      const notice = r.hours_before_checkin % 24 === 0 ? `${r.hours_before_checkin / 24} days` : `${r.hours_before_checkin} hours`;
      return `<li>${refund} when cancelled at least ${notice} before check-in</li>`;
    });
  return `<h2>Cancellation</h2><ul>${rows.join('')}</ul>`;
}

/** The page's stylesheet (inline: the CSP allows inline styles, never inline scripts). */
const PAGE_STYLE = `
[hidden]{display:none!important}
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d2a33;background:#f6f4ef}
header{background:#20465a;color:#fff;padding:2rem 1.5rem}
header h1{margin:0 0 .25rem;font-size:2rem}
header p{margin:0;opacity:.85}
main{max-width:60rem;margin:0 auto;padding:1.5rem;display:grid;gap:1.5rem;grid-template-columns:minmax(0,3fr) minmax(16rem,2fr)}
aside{align-self:start}
section,aside{background:#fff;border-radius:.5rem;padding:1.25rem;box-shadow:0 1px 3px #0002}
h2{font-size:1.15rem;margin:1rem 0 .5rem}
.facts{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;padding:0;list-style:none;color:#455}
.cals{display:flex;flex-wrap:wrap;gap:1rem}
.cal{border-collapse:collapse;font-size:.75rem}
.cal caption{font-weight:600;text-align:left;padding:.25rem 0}
.cal th{font-weight:500;color:#667;padding:.15rem}
.cal td{width:3.2rem;height:2.6rem;vertical-align:top;border:1px solid #e4e1da;padding:.15rem}
.cal td.free{background:#eef7ef}.cal td.taken{background:#f3e9e9;color:#a77}.cal td.pad{border:0}
.cal .d{display:block;font-weight:600}.cal .r{display:block;font-size:.65rem}
form{display:grid;gap:.75rem}
label{display:grid;gap:.2rem;font-size:.9rem}
input,button,.book{font:inherit;padding:.5rem;border:1px solid #bbb;border-radius:.35rem}
button,.book{background:#20465a;color:#fff;border:0;cursor:pointer;text-align:center;text-decoration:none;display:block}
.book{background:#2f7d4a;margin-top:.75rem}
.result{padding:.6rem;border-radius:.35rem;margin-top:.75rem}.result.ok{background:#eef7ef}.result.bad{background:#f7eeee}
.note{font-size:.8rem;color:#667}
@media (max-width:44rem){main{grid-template-columns:1fr}}
`;

export async function renderPropertyPage(service: OfferService): Promise<string> {
  const facts: PageFacts = service.property();
  const today = localToday(service.now(), facts.time_zone);
  const days = await service.calendar(today, CALENDAR_DAYS);
  const place = [facts.city, facts.country].filter(Boolean).join(', ');
  const tool = {
    name: OFFER_TOOL_NAME,
    title: OFFER_TOOL_TITLE,
    description: offerToolDescription(service),
    inputSchema: OFFER_TOOL_INPUT_SCHEMA,
    endpoint: OFFER_ENDPOINT_PATH,
    call: WEBMCP_TOOL_CALL_PATH,
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(facts.name)}${place ? ` · ${escapeHtml(place)}` : ''}</title>
<style>${PAGE_STYLE}</style>
<script type="application/json" id="vrp-tool">${scriptJson(tool)}</script>
<script type="module" src="${WEBMCP_SCRIPT_PATH}"></script>
</head>
<body>
<header><h1>${escapeHtml(facts.name)}</h1>${place ? `<p>${escapeHtml(place)}</p>` : ''}</header>
<main>
<section>
<p>${escapeHtml(facts.description)}</p>
<ul class="facts">
<li>Up to ${facts.max_guests} guest${facts.max_guests === 1 ? '' : 's'}</li>
<li>Check-in from ${escapeHtml(facts.check_in_time)}</li>
<li>Check-out by ${escapeHtml(facts.check_out_time)}</li>
</ul>
<h2>Rates</h2>
${renderRates(days, facts)}
<h2>Availability</h2>
<div class="cals">${renderCalendar(days, facts)}</div>
${renderRefunds(facts)}
</section>
<aside>
<h2>Get a quote</h2>
<form id="quote-form" action="${escapeHtml(OFFER_ENDPOINT_PATH)}" method="get" data-minor-digits="${facts.currency_minor_digits}">
<label>Check-in <input type="date" name="check_in" required min="${escapeHtml(today)}"></label>
<label>Check-out <input type="date" name="check_out" required min="${escapeHtml(today)}"></label>
<label>Guests <input type="number" name="guests" required min="1" max="${facts.max_guests}" value="2"></label>
<button type="submit">Check price and availability</button>
</form>
<p id="quote-result" class="result" hidden></p>
<a id="book" class="book" href="#" hidden>Book directly with the host</a>
<p class="note">Quotes are signed by ${escapeHtml(service.canonicalDomain)}; the keys are published at <a href="${escapeHtml(JWKS_PATH)}">${escapeHtml(JWKS_PATH)}</a>.</p>
</aside>
</main>
</body>
</html>
`;
}
