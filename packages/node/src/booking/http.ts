/**
 * The booking routes on the node's app: the `/book` landing page (Core VRP v0.1 §5.1, always),
 * and with a booking desk the booking-request endpoint (vrpkit booking-request extension) and the
 * page's form, both on the one desk: `POST /api/booking-requests` takes JSON and answers JSON;
 * `POST /book` takes the page's form and answers an HTML page. Same checks, same codes.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import { BOOK_PATH, BOOKING_REQUESTS_PATH, MAX_BOOKING_REQUEST_BYTES } from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import type { ForwardedClientBindings } from '../behind-proxy.js';
import { NODE_CODES, nodeMessage } from '../errors.js';
import { readBodyCapped } from '../http/body.js';
import type { FormGuard } from '../http/forms.js';
import { HTML_SECURITY_HEADERS } from '../http/html.js';
import { errorBody, errorResponse, JSON_TYPE } from '../http/json.js';
import type { OfferService } from '../service/index.js';
import { type BookingAnswer, type BookingDesk, refuse } from './desk.js';
import { renderBookingResult, renderBookPage, renderRefusedRequest } from './page.js';

/** The origin a node's forms are served from and posted back to (Core VRP v0.1 §2: its canonical domain). */
export const formOrigin = (canonicalDomain: string) => `https://${canonicalDomain}`;

/**
 * Core VRP v0.1 §5.1: the booking landing page `direct_booking_url` points at, which re-quotes
 * live and fails closed (an HTML page: the pages' CSP); its form carries a token of `form`.
 */
export function mountBookPage(app: Hono, serviceOf: (c: Context) => OfferService, form: FormGuard): void {
  app.get(BOOK_PATH, async (c) => {
    const service = serviceOf(c);
    const tokenFor = (values: Readonly<Record<string, string>>) => form.token(formOrigin(service.canonicalDomain), values, service.now());
    const r = await renderBookPage(service, c.req.url, tokenFor);
    return c.html(r.html, r.status, { ...HTML_SECURITY_HEADERS, 'cache-control': 'no-store' });
  });
}

/**
 * The client's address, the key of the rate limit and the hold cap: behind a trusted proxy the
 * address it forwarded for (behind-proxy.ts), otherwise the connecting peer's.
 */
export function clientAddress(c: Context): string {
  const forwarded = (c.env as ForwardedClientBindings | undefined)?.forwardedClient;
  if (forwarded) return forwarded;
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function mediaType(c: Context): string | undefined {
  return c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase();
}

function jsonAnswer(a: BookingAnswer): Response {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, 'cache-control': 'no-store' };
  if (a.ok) return new Response(JSON.stringify(a.body), { status: a.status, headers });
  const { code, message, current_offer_jws, retry_after_seconds } = a.error;
  if (retry_after_seconds !== undefined) headers['retry-after'] = String(retry_after_seconds);
  const body = current_offer_jws ? JSON.stringify({ error: { code, message }, current_offer_jws }) : errorBody(code, message);
  return new Response(body, { status: a.status, headers });
}

const tooLarge = () => refuse('BOOKING_BODY_TOO_LARGE', `a booking request is limited to ${MAX_BOOKING_REQUEST_BYTES} bytes`);

/** Read the body under the byte cap, or the 413 answer. */
async function cappedBody(c: Context): Promise<{ ok: true; text: string } | { ok: false; answer: BookingAnswer }> {
  const read = await readBodyCapped(c, MAX_BOOKING_REQUEST_BYTES);
  return read.ok ? read : { ok: false, answer: tooLarge() };
}

/** Mount `POST /api/booking-requests` and `POST /book` on the node's app; the form posts pass `form`'s guard first. */
export function mountBookingRequests(app: Hono, desk: BookingDesk, form: FormGuard, now: (c: Context) => number): void {
  app.post(BOOKING_REQUESTS_PATH, async (c) => {
    if (mediaType(c) !== 'application/json')
      return jsonAnswer(refuse('BOOKING_UNSUPPORTED_MEDIA_TYPE', 'send the booking request as application/json'));
    const read = await cappedBody(c);
    if (!read.ok) return jsonAnswer(read.answer);
    // Counted only once the media type and size passed: a refused request costs the client nothing.
    const client = clientAddress(c);
    const limited = desk.admit(client);
    if (limited) return jsonAnswer(limited);
    let input: unknown;
    try {
      input = JSON.parse(read.text);
    } catch {
      return jsonAnswer(refuse('BOOKING_BAD_REQUEST', 'the body is not JSON'));
    }
    return jsonAnswer(await desk.request(input, client));
  });
  app.all(BOOKING_REQUESTS_PATH, () =>
    errorResponse('method_not_allowed', { methods: 'POST', path: BOOKING_REQUESTS_PATH }, { allow: 'POST' }),
  );

  // The page's form: the same desk; the fields are the JSON body's, the guest's flattened.
  app.post(BOOK_PATH, async (c) => {
    const html = (a: BookingAnswer) =>
      c.html(renderBookingResult(desk.canonicalDomain, a), a.status as 200, {
        ...HTML_SECURITY_HEADERS,
        'cache-control': 'no-store',
        ...(!a.ok && a.error.retry_after_seconds !== undefined ? { 'retry-after': String(a.error.retry_after_seconds) } : {}),
      });
    // Issue 36 defect 5: from the node's own page only, with the token of the form it rendered.
    const posted = await form.read(c, formOrigin(desk.canonicalDomain), now(c));
    if (!posted.ok) {
      const { refusal } = posted;
      if (refusal === 'unsupported_media_type')
        return html(refuse('BOOKING_UNSUPPORTED_MEDIA_TYPE', 'the booking form is sent as application/x-www-form-urlencoded'));
      if (refusal === 'body_too_large') return html(tooLarge());
      return c.html(renderRefusedRequest(desk.canonicalDomain, refusal, nodeMessage(refusal)), NODE_CODES[refusal].status, {
        ...HTML_SECURITY_HEADERS,
        'cache-control': 'no-store',
      });
    }
    const client = clientAddress(c);
    const limited = desk.admit(client);
    if (limited) return html(limited);
    const field = (name: string) => (posted.form.getAll(name).length === 1 ? posted.form.get(name) : undefined);
    const phone = field('guest_phone');
    const input = {
      offer_jws: field('offer_jws'),
      guest: { name: field('guest_name'), email: field('guest_email'), ...(phone ? { phone } : {}) },
      idempotency_key: field('idempotency_key'),
    };
    return html(await desk.request(input, client));
  });
  // `/book` is read (GET) and posted to (the form): every other method is 405 naming both (RFC 9110 §15.5.6).
  app.all(BOOK_PATH, () => errorResponse('method_not_allowed', { methods: 'GET or POST', path: BOOK_PATH }, { allow: 'GET, HEAD, POST' }));
}
