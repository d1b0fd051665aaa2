/**
 * The static `/webmcp.js` module of the property page. It is plain browser JavaScript kept as
 * a string (served byte-for-byte, never through a bundler). It reads the tool definition the
 * server embedded in the page (`#vrp-tool`, built from tool.ts so every surface says the same
 * thing), then:
 *  - registers `get_verified_stay_offer` ONCE through `document.modelContext ??
 *    navigator.modelContext` when the browser has it (Node Tool Binding §3, §11 duplicate
 *    registration); `execute()` validates the input itself (browsers do not check
 *    `inputSchema`), fetches the same-origin offer endpoint and returns the envelope unmodified
 *    (§5) — a rejected promise for bad input or an endpoint error;
 *  - drives the guest quote form with the same validation and fetch.
 */
export const WEBMCP_SCRIPT_PATH = '/webmcp.js';

export const WEBMCP_SCRIPT = `// vrpkit property page: quote form + WebMCP tool (Node Tool Binding §3-§6)
const tool = JSON.parse(document.getElementById('vrp-tool').textContent);
const DATE = /^\\d{4}-\\d{2}-\\d{2}$/;

function isCalendarDate(s) {
  if (typeof s !== 'string' || !DATE.test(s)) return false;
  const d = new Date(s + 'T00:00:00Z');
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

// Node Tool Binding §4: snake_case keys, camelCase check-in/out aliases; nothing else required.
function offerArguments(input) {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new TypeError('arguments must be an object {check_in, check_out, guests}');
  const checkIn = input.check_in ?? input.checkIn;
  const checkOut = input.check_out ?? input.checkOut;
  const guests = input.guests;
  if (!isCalendarDate(checkIn)) throw new TypeError('check_in must be a date YYYY-MM-DD');
  if (!isCalendarDate(checkOut)) throw new TypeError('check_out must be a date YYYY-MM-DD');
  if (checkOut <= checkIn) throw new TypeError('check_out must be after check_in');
  if (!Number.isInteger(guests) || guests < 1) throw new TypeError('guests must be an integer of at least 1');
  return { check_in: checkIn, check_out: checkOut, guests };
}

// The same-origin offer endpoint; the body is returned exactly as the node signed and sent it.
async function fetchOffer(args) {
  const query = new URLSearchParams({ check_in: args.check_in, check_out: args.check_out, guests: String(args.guests) });
  const res = await fetch(tool.endpoint + '?' + query, { headers: { accept: 'application/json' }, credentials: 'omit' });
  const body = await res.json();
  if (!res.ok) {
    const e = body && body.error;
    throw new Error(e && e.code ? 'error[' + e.code + ']: ' + e.message : 'offer endpoint answered HTTP ' + res.status);
  }
  return body;
}

const modelContext = document.modelContext ?? navigator.modelContext;
if (modelContext && typeof modelContext.registerTool === 'function') {
  modelContext
    .registerTool({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: { readOnlyHint: true },
      execute: async (input) => fetchOffer(offerArguments(input)),
    })
    .catch((e) => console.warn('WebMCP registration failed:', e && e.name));
}

// Guest quote form.
const form = document.getElementById('quote-form');
const out = document.getElementById('quote-result');
const book = document.getElementById('book');

function money(minor, currency, digits) {
  return new Intl.NumberFormat(document.documentElement.lang || 'en', { style: 'currency', currency }).format(minor / 10 ** digits);
}

function onCanonicalDomain(url, domain) {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && (u.hostname === domain || u.hostname.endsWith('.' + domain));
  } catch {
    return false;
  }
}

function nights(args) {
  return Math.round((Date.parse(args.check_out) - Date.parse(args.check_in)) / 86400000);
}

function plural(n, word) {
  return n + ' ' + word + (n === 1 ? '' : 's');
}

function show(text, ok) {
  out.textContent = text;
  out.className = ok ? 'result ok' : 'result bad';
  out.hidden = false;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  book.hidden = true;
  const data = new FormData(form);
  let args;
  try {
    args = offerArguments({ check_in: data.get('check_in'), check_out: data.get('check_out'), guests: Number(data.get('guests')) });
  } catch (e) {
    show(e.message, false);
    return;
  }
  show('Checking the calendar…', true);
  try {
    const offer = (await fetchOffer(args)).offer;
    if (!offer.availability.available) {
      show('Not available for these dates' + (offer.availability.reason ? ' (' + offer.availability.reason + ')' : '') + '.', false);
      return;
    }
    const price = offer.price;
    const total = price.agent_total ?? price.public_total;
    const digits = price.minor_unit ? form.dataset.minorDigits | 0 : 0;
    show('Available. Total ' + (total == null ? 'on request' : money(total, price.currency, digits)) + (price.exact ? '' : ' (estimate)') + ' for ' + plural(nights(args), 'night') + ', ' + plural(args.guests, 'guest') + '.', true);
    const url = offer.booking.direct_booking_url;
    if (onCanonicalDomain(url, offer.canonical_domain)) {
      book.href = url;
      book.hidden = false;
    }
  } catch (e) {
    show(e.message, false);
  }
});
`;
