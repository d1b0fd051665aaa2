/**
 * The booking-request endpoint (vrpkit booking-request extension) and the `/book` page's form,
 * both on the one booking desk: `POST /api/booking-requests` takes JSON and answers JSON;
 * `POST /book` takes the page's form and answers an HTML page. Same checks, same codes.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import { BOOKING_REQUESTS_PATH, MAX_BOOKING_REQUEST_BYTES } from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import type { ForwardedClientBindings } from '../behind-proxy.js';
import { renderBookingResult } from '../http/book.js';
import { errorBody, JSON_TYPE } from '../request.js';
import { readBodyCapped } from '../surfaces/body.js';
import { HTML_SECURITY_HEADERS } from '../surfaces/page.js';
import type { BookingAnswer, BookingDesk } from './desk.js';

/** Where the `/book` form posts (the page itself). */
export const BOOK_FORM_PATH = '/book';

/**
 * The client's address, the key of the rate limit and the hold cap: behind a trusted proxy the
 * address it forwarded for (behind-proxy.ts), otherwise the connecting peer's.
 */
function clientAddress(c: Context): string {
  const forwarded = (c.env as ForwardedClientBindings | undefined)?.forwardedClient;
  if (forwarded) return forwarded;
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function mediaType(c: Context): string | undefined {
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

/** Read the body under the byte cap, or the 413 answer. */
async function cappedBody(c: Context): Promise<{ ok: true; text: string } | { ok: false; answer: BookingAnswer }> {
  const read = await readBodyCapped(c, MAX_BOOKING_REQUEST_BYTES);
  if (read.ok) return read;
  return {
    ok: false,
    answer: {
      ok: false,
      status: 413,
      error: { code: 'BOOKING_BODY_TOO_LARGE', message: `a booking request is limited to ${MAX_BOOKING_REQUEST_BYTES} bytes` },
    },
  };
}

/** Mount `POST /api/booking-requests` and `POST /book` on the node's app. */
export function mountBookingRequests(app: Hono, desk: BookingDesk): void {
  app.post(BOOKING_REQUESTS_PATH, async (c) => {
    if (mediaType(c) !== 'application/json')
      return jsonAnswer({
        ok: false,
        status: 415,
        error: { code: 'BOOKING_UNSUPPORTED_MEDIA_TYPE', message: 'send the booking request as application/json' },
      });
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
      return jsonAnswer({ ok: false, status: 400, error: { code: 'BOOKING_BAD_REQUEST', message: 'the body is not JSON' } });
    }
    return jsonAnswer(await desk.request(input, client));
  });
  app.all(BOOKING_REQUESTS_PATH, (c) =>
    c.body(errorBody('method_not_allowed', `use POST on ${BOOKING_REQUESTS_PATH}`), 405, { 'content-type': JSON_TYPE, allow: 'POST' }),
  );

  // The page's form: the same desk; the fields are the JSON body's, the guest's flattened.
  app.post(BOOK_FORM_PATH, async (c) => {
    const html = (a: BookingAnswer) =>
      c.html(renderBookingResult(desk.canonicalDomain, a), a.status as 200, {
        ...HTML_SECURITY_HEADERS,
        'cache-control': 'no-store',
        ...(!a.ok && a.error.retry_after_seconds !== undefined ? { 'retry-after': String(a.error.retry_after_seconds) } : {}),
      });
    if (mediaType(c) !== 'application/x-www-form-urlencoded')
      return html({
        ok: false,
        status: 415,
        error: { code: 'BOOKING_UNSUPPORTED_MEDIA_TYPE', message: 'the booking form is sent as application/x-www-form-urlencoded' },
      });
    const read = await cappedBody(c);
    if (!read.ok) return html(read.answer);
    const client = clientAddress(c);
    const limited = desk.admit(client);
    if (limited) return html(limited);
    const form = new URLSearchParams(read.text);
    const field = (name: string) => (form.getAll(name).length === 1 ? form.get(name) : undefined);
    const phone = field('guest_phone');
    const input = {
      offer_jws: field('offer_jws'),
      guest: { name: field('guest_name'), email: field('guest_email'), ...(phone ? { phone } : {}) },
      idempotency_key: field('idempotency_key'),
    };
    return html(await desk.request(input, client));
  });
  // `/book` is read (GET) and posted to (the form): every other method is 405 naming both (RFC 9110 §15.5.6).
  app.all(BOOK_FORM_PATH, (c) =>
    c.body(errorBody('method_not_allowed', `use GET or POST on ${BOOK_FORM_PATH}`), 405, {
      'content-type': JSON_TYPE,
      allow: 'GET, HEAD, POST',
    }),
  );
}
