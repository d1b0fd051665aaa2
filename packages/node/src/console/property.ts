/**
 * Prices and property (issue 35 item 1): what the node will quote for a stay, computed by the
 * offer service's own judgement (`NodePublisher.preview`: the same stay window, guest and stay
 * rules, calendar and pricing as a signed offer, nothing signed), and a new property file checked
 * before the host publishes it — its errors listed the way `vrp node init` reports them
 * (`InvalidPropertyError`), its quote for the same stay beside today's — then published through
 * `vrp node property update`'s own function.
 */
import { type ParsedOfferRequest, parseOfferRequest } from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import { InvalidPropertyError } from '../errors.js';
import type { FormSpec } from '../http/forms.js';
import { escapeHtml as e } from '../http/html.js';
import { currencyMinorDigits, MAX_PROPERTY_FILE_BYTES, type PropertyDescription, parsePropertyText } from '../property.js';
import type { PropertyView, StayPreview } from '../service/types.js';
import { type ConsoleDeps, mountChange, pageContext, readForm } from './context.js';
import { money } from './inbox.js';
import { formFields, link, type PageContext, page, scrollable } from './pages.js';

/** A pasted property file is larger than a note: the file reader's own limit, plus the form's other fields. */
const DOCUMENT_FORM_BYTES = 3 * MAX_PROPERTY_FILE_BYTES;
export const CHECK_FORM: FormSpec = { action: '/property/check', bound: [], maxBytes: DOCUMENT_FORM_BYTES };
export const PUBLISH_FORM: FormSpec = { action: '/property/publish', bound: [], maxBytes: DOCUMENT_FORM_BYTES };

/** What a checked document is called in its error lines. */
const DRAFT_LABEL = 'pasted property';

/**
 * The posted document with LF line ends: a browser posts a textarea's lines with CRLF (HTML form
 * submission), and the page shows a CR as a visible escape (app.ts), which the next post would carry.
 */
const documentOf = (form: URLSearchParams) => (form.get('document') ?? '').replace(/\r\n?/g, '\n');

const REASONS: Readonly<Record<string, string>> = {
  not_available: 'not available: a night is booked, held or blocked',
  below_minimum_stay: 'shorter than the minimum stay',
  above_maximum_stay: 'longer than the maximum stay',
  exceeds_max_guests: 'more guests than the property takes',
  calendar_stale: 'the calendar is stale: a feed has not synced recently enough to quote',
};

/** The stay asked for (the HTTP query reader of the one parser: `guests` as digits), or its refusal. */
function stayOf(form: URLSearchParams): { stay: ParsedOfferRequest } | { error: string } | null {
  const asked = new URLSearchParams();
  for (const k of ['check_in', 'check_out', 'guests']) {
    const v = form.get(k);
    if (v) asked.set(k, v);
  }
  if ([...asked.keys()].length === 0) return null;
  const r = parseOfferRequest(asked);
  return r.ok ? { stay: r.request } : { error: `${r.error.code}: ${r.error.message}` };
}

function stayFields(form: URLSearchParams): string {
  const v = (k: string) => e(form.get(k) ?? '');
  return `<label for="check_in">Check-in</label><input id="check_in" name="check_in" type="date" value="${v('check_in')}">
<label for="check_out">Check-out</label><input id="check_out" name="check_out" type="date" value="${v('check_out')}">
<label for="guests">Guests</label><input id="guests" name="guests" type="number" min="1" inputmode="numeric" value="${v('guests')}">`;
}

/** One judged stay as a table: the nightly lines, the fees and the total, or why no offer would be available. */
function quoteTable(caption: string, q: StayPreview): string {
  if (!q.ok) return `<p><strong>${e(caption)}:</strong> refused (${e(q.error.code)}): ${e(q.error.message)}</p>`;
  if (!q.available || !q.price)
    return `<p><strong>${e(caption)}:</strong> a signed offer would say ${e(REASONS[q.reason ?? ''] ?? q.reason)} (<code>${e(q.reason)}</code>).</p>`;
  const digits = currencyMinorDigits(q.currency);
  const m = (n: number) => e(money(n, q.currency, digits));
  const nights = q.price.breakdown
    .map(
      (n) =>
        `<tr><td>${e(n.date)}</td><td>${e(n.season_name ?? n.season_type)}${n.is_weekend ? ', weekend' : ''}</td><td>${m(n.nightly_rate)}</td></tr>`,
    )
    .join('');
  const fees = q.price.adjustments.map((a) => `<tr><td colspan="2">${e(a.label)}</td><td>${m(a.amount)}</td></tr>`).join('');
  return scrollable(
    caption,
    `<table><caption>${e(caption)}</caption><thead><tr><th scope="col">Night or fee</th><th scope="col">Rate</th><th scope="col">Amount</th></tr></thead>
<tbody>${nights}${fees}<tr><th scope="row" colspan="2">Total</th><td><strong>${m(q.price.total)}</strong></td></tr></tbody></table>
<p>${q.mayQuote ? 'Agents may quote it as the official direct offer.' : 'Agents may not quote it as an official direct offer.'}</p>`,
  );
}

function currentProperty(p: PropertyView): string {
  const digits = currencyMinorDigits(p.currency);
  const m = (n: number | null | undefined) => (n === null || n === undefined ? '—' : e(money(n, p.currency, digits)));
  const seasons = p.rates.seasons
    .map(
      (s) =>
        `<li>${e(s.name ?? s.type)}: ${e(s.start)} → ${e(s.end)}, ${m(s.nightly)} a night${s.weekend ? `, ${m(s.weekend)} at weekends` : ''}</li>`,
    )
    .join('');
  const fees = p.fees.map((f) => `<li>${e(f.label)}: ${m(f.amount)} a stay</li>`).join('');
  return `<h2>Published now</h2><p>${e(p.name)} · ${e(p.max_guests)} guests at most · ${e(p.min_nights)} to ${e(p.max_nights)} nights ·
${m(p.rates.nightly)} a night${p.rates.weekend ? `, ${m(p.rates.weekend)} at weekends` : ''}</p>
${seasons ? `<h3>Seasons</h3><ul>${seasons}</ul>` : ''}${fees ? `<h3>Fees</h3><ul>${fees}</ul>` : '<p>No stay fees.</p>'}`;
}

function checkForm(p: PageContext, form: URLSearchParams): string {
  return `<h2>Check a new property file</h2>
<p>Paste the property file (YAML or JSON, as <code>vrp node init --property</code> takes it). It is checked and quoted for the stay above; nothing changes until you publish it.</p>
<form method="post" action="${link(p, CHECK_FORM.action)}">${formFields(p, CHECK_FORM)}${stayFields(form)}
<label for="document">Property file</label><textarea id="document" name="document" rows="14" spellcheck="false" required>${e(documentOf(form))}</textarea>
<p><button type="submit">Check</button></p></form>`;
}

/** The checked draft: its errors, or its quote beside today's and the form that publishes exactly this text. */
async function checked(x: ConsoleDeps, p: PageContext, form: URLSearchParams): Promise<string> {
  const text = documentOf(form);
  let draft: PropertyDescription;
  try {
    draft = parsePropertyText(text, DRAFT_LABEL, 'yaml');
  } catch (err) {
    if (!(err instanceof InvalidPropertyError)) throw err;
    const lines = err.issues.map((i) => `<li><code>${e(i.field || '(root)')}</code>: ${e(i.reason)}</li>`).join('');
    return `<h2>Not valid</h2><p role="alert">The property file has ${err.issues.length} problem${err.issues.length === 1 ? '' : 's'}; nothing was published.</p><ul>${lines}</ul>`;
  }
  const asked = stayOf(form);
  const quotes =
    asked && 'stay' in asked
      ? quoteTable('Today', await x.publisher.preview(asked.stay)) +
        quoteTable('With this file', await x.publisher.preview(asked.stay, draft))
      : '<p>Give a stay above to compare the quotes.</p>';
  return `<h2>Valid</h2><p role="status">The file is valid (${e(draft.property_id)}).</p>${quotes}
<form method="post" action="${link(p, PUBLISH_FORM.action)}">${formFields(p, PUBLISH_FORM)}
<label for="published">The file to publish</label><textarea id="published" name="document" rows="6" readonly>${e(text)}</textarea>
<p><button type="submit">Publish this property</button></p></form>`;
}

async function propertyPage(c: Context, x: ConsoleDeps, form: URLSearchParams, result = ''): Promise<string> {
  const p = pageContext(c, 'property');
  const asked = stayOf(form);
  const quote =
    asked === null
      ? ''
      : 'error' in asked
        ? `<p role="alert">${e(asked.error)}</p>`
        : quoteTable('The offer now', await x.publisher.preview(asked.stay));
  // The stay form reads with GET: a quote changes nothing, so it needs no form token and its URL can be kept.
  return page(
    p,
    'Prices and property',
    `${currentProperty(x.publisher.property())}
<h2>Quote a stay</h2><form method="get" action="${e(link(p, '/property'))}">${stayFields(form)}<p><button type="submit">Quote</button></p></form>${quote}
${result}${checkForm(p, form)}`,
  );
}

export function mountProperty(app: Hono, x: ConsoleDeps): void {
  app.get('/property', async (c) => c.html(await propertyPage(c, x, new URLSearchParams(c.req.query()))));
  app.post(CHECK_FORM.action, async (c) => {
    const form = await readForm(c, CHECK_FORM);
    if (!(form instanceof URLSearchParams)) return form;
    return c.html(await propertyPage(c, x, form, await checked(x, pageContext(c, 'property'), form)));
  });
  mountChange(app, x, PUBLISH_FORM, (form) => ({
    action: 'property_update',
    target: null,
    // Parsed again here: the text posted is what is published, whatever the check page showed.
    run: () => x.actions.publishProperty(parsePropertyText(documentOf(form), DRAFT_LABEL, 'yaml')),
    done: '/property',
    back: '/property',
  }));
}
