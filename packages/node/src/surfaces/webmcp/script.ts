/**
 * The static `/webmcp.js` module of the property page. It is plain browser JavaScript kept as
 * a string (served byte-for-byte, never through a bundler). It reads the tool definition the
 * server embedded in the page (`#vrp-tool`, built from tool.ts so every surface says the same
 * thing), then:
 *  - registers `get_verified_stay_offer` ONCE through `document.modelContext ??
 *    navigator.modelContext` when the browser has it (Node Tool Binding v0.1 §3, §11 duplicate
 *    registration); `execute(input)` POSTs the input, as the JSON it is, to the node's
 *    same-origin tool-call path and returns the envelope unmodified (§5), or rejects with the
 *    node's `error[code]: message` for a refused request;
 *  - drives the guest quote form through the offer endpoint (GET, the form's own fields).
 *
 * The script validates nothing itself. Browsers do not check `inputSchema`, so a copy of the
 * rules in browser JavaScript would be a second parser that drifts (it did: it preferred
 * `check_in` over `checkIn` where the node answers `duplicate_parameter`). Forwarding the input
 * untouched lets the node's one request parser decide, with the same codes as MCP, A2A and HTTP.
 */
export const WEBMCP_SCRIPT_PATH = '/webmcp.js';

export const WEBMCP_SCRIPT = `// vrpkit property page: quote form + WebMCP tool (Node Tool Binding v0.1 §3-§6)
const tool = JSON.parse(document.getElementById('vrp-tool').textContent);

// The node answers the signed envelope, byte for byte as signed, or {error: {code, message}}.
async function answer(res) {
  const body = await res.json();
  if (!res.ok) {
    const e = body && body.error;
    throw new Error(e && e.code ? 'error[' + e.code + ']: ' + e.message : 'the node answered HTTP ' + res.status);
  }
  return body;
}

// Node Tool Binding v0.1 §4: the input object goes to the node as it is; the node's request parser decides.
async function callTool(input) {
  const res = await fetch(tool.call, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(input === undefined ? null : input),
    credentials: 'omit',
  });
  return answer(res);
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
      execute: callTool,
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
  show('Checking the calendar…', true);
  try {
    const query = new URLSearchParams(new FormData(form));
    const offer = (await answer(await fetch(tool.endpoint + '?' + query, { headers: { accept: 'application/json' }, credentials: 'omit' }))).offer;
    if (!offer.availability.available) {
      show('Not available for these dates' + (offer.availability.reason ? ' (' + offer.availability.reason + ')' : '') + '.', false);
      return;
    }
    const price = offer.price;
    const total = price.agent_total ?? price.public_total;
    const digits = price.minor_unit ? form.dataset.minorDigits | 0 : 0;
    const stay = offer.request;
    show('Available. Total ' + (total == null ? 'on request' : money(total, price.currency, digits)) + (price.exact ? '' : ' (estimate)') + ' for ' + plural(stay.nights, 'night') + ', ' + plural(stay.guests, 'guest') + '.', true);
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
