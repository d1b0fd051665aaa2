/**
 * The booking routes on the node's app: the `/book` landing page (Core VRP v0.1 §5.1, always: the
 * signed offer's `direct_booking_url` points here) and, with UCP booking sessions, its form, a thin
 * client of those sessions: the post creates a session from the signed offer the page showed, with
 * the guest as booker, and answers 303 to the session's `continue_url` where the guest confirms with
 * a mailed code like any agent's guest. One booking path: the node has no other booking endpoint.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import { BOOK_PATH, MAX_BOOKING_REQUEST_BYTES, UcpErrorResponseSchema, ucpBookingRequest } from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import type { ForwardedClientBindings } from '../behind-proxy.js';
import { NODE_CODES, nodeMessage } from '../errors.js';
import type { FormGuard } from '../http/forms.js';
import { HTML_SECURITY_HEADERS } from '../http/html.js';
import { errorResponse } from '../http/json.js';
import type { OfferService } from '../service/index.js';
import type { UcpSessions } from '../ucp/sessions.js';
import type { BookingDesk } from './desk.js';
import { renderBookPage, renderRefusedRequest } from './page.js';

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

/**
 * Where a request's `/book` post goes: its publisher (the origin the form token is bound to, the
 * clock), its UCP sessions and the desk's rate limit (a node's one set, or a platform tenant's: the
 * UCP routes of ucp/http.ts fit).
 */
export type BookFormRoutesFor = (c: Context) => {
  publisher: Pick<OfferService, 'canonicalDomain' | 'now'>;
  sessions: UcpSessions;
  desk: BookingDesk;
};

/**
 * `POST /book`: the page's form, from the node's own page only (issue 36 defect 5: the token of the
 * form it rendered), counted against the booking rate limit per address, then Create Booking Session
 * from the signed offer the page showed (`UcpSessions.create`: this node's keys, unexpired, the live
 * re-quote) with the guest as booker, and 303 to the session's `continue_url` (RFC 9110 §15.4.4: the
 * browser GETs the guest page). A refusal is a page naming the stable code; it writes nothing. On a
 * platform each request is a tenant's (`routesFor`): its sessions, its desk, its origin the token is bound to.
 */
export function mountBookForm(app: Hono, routesFor: BookFormRoutesFor, form: FormGuard): void {
  const refused = (c: Context, canonicalDomain: string, code: string, message: string, status: number, retryAfter?: number) =>
    c.html(renderRefusedRequest(canonicalDomain, code, message), status as 200, {
      ...HTML_SECURITY_HEADERS,
      'cache-control': 'no-store',
      ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
    });
  app.post(BOOK_PATH, async (c) => {
    // The request's own sessions and origin: a node's, or the tenant's its platform router chose.
    const { publisher, sessions, desk } = routesFor(c);
    const domain = publisher.canonicalDomain;
    const posted = await form.read(c, formOrigin(domain), publisher.now());
    if (!posted.ok) {
      const { refusal } = posted;
      const message =
        refusal === 'unsupported_media_type'
          ? 'the booking form is sent as application/x-www-form-urlencoded'
          : nodeMessage(refusal, { what: 'booking form', max: MAX_BOOKING_REQUEST_BYTES });
      return refused(c, domain, refusal, message, NODE_CODES[refusal].status ?? 400);
    }
    const limited = desk.admit(clientAddress(c));
    if (limited && !limited.ok)
      return refused(c, domain, limited.error.code, limited.error.message, limited.status, limited.error.retry_after_seconds);
    const field = (name: string) => (posted.form.getAll(name).length === 1 ? (posted.form.get(name) ?? '') : '');
    const phone = field('guest_phone');
    const booker = {
      first_name: field('guest_first_name'),
      last_name: field('guest_last_name'),
      email: field('guest_email'),
      ...(phone ? { phone_number: phone } : {}),
    };
    // The guest confirms by email on the session's page: without a name and an email there is nothing to confirm.
    if (!booker.first_name || !booker.last_name || !booker.email)
      return refused(c, domain, 'invalid_request', 'give your first name, last name and email', 400);
    const body = ucpBookingRequest(field('offer_jws'), { booker });
    if (!body) return refused(c, domain, 'invalid_request', 'the form does not carry a signed stay offer', 400);
    const answer = await sessions.create(body);
    const continueUrl = answer.status === 201 ? answer.body.continue_url : undefined;
    if (typeof continueUrl === 'string') return c.redirect(continueUrl, 303);
    // UCP's error response (or a session that cannot be confirmed yet): its first message's code.
    const messages = UcpErrorResponseSchema.safeParse(answer.body);
    const first = messages.success ? messages.data.messages[0] : undefined;
    // Create's business refusals are HTTP 200 in UCP (an offer refused, a stay taken); on a page they are 409.
    const status = answer.status === 200 || answer.status === 201 ? 409 : answer.status;
    return refused(c, domain, first?.code ?? 'invalid_request', first?.content ?? 'the stay request was not made', status);
  });
  // `/book` is read (GET) and posted to (the form): every other method is 405 naming both (RFC 9110 §15.5.6).
  app.all(BOOK_PATH, () => errorResponse('method_not_allowed', { methods: 'GET or POST', path: BOOK_PATH }, { allow: 'GET, HEAD, POST' }));
}
