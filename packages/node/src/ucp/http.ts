/**
 * The UCP routes on the node's app: the business profile (`/.well-known/ucp`), the Lodging Booking
 * REST binding's five operations under `/ucp/v1` (Booking REST binding, Operations: `POST
 * /booking-sessions` answering 201, `GET`/`PUT /booking-sessions/{id}`, `POST …/complete`, `POST
 * …/cancel`), the JSON Schema of vrpkit's `dev.vrpkit.lodging` member, and the guest's page (`continue_url`). The JSON endpoints take
 * `application/json` under a byte cap and count against the booking rate limit per client address;
 * the page's forms pass the node's form guard (cross-site refusal, a token bound to the session).
 */
import {
  MAX_UCP_REQUEST_BYTES,
  UCP_BOOKING_SESSIONS,
  UCP_CONTINUE_PATH,
  UCP_PROFILE_PATH,
  UCP_REST_BASE_PATH,
  UcpLodgingRequestSchema,
  UcpLodgingViewSchema,
} from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import * as z from 'zod';
import type { BookingDesk } from '../booking/desk.js';
import { clientAddress, formOrigin, mediaType } from '../booking/http.js';
import { page } from '../booking/page.js';
import { NODE_CODES, nodeMessage } from '../errors.js';
import { readBodyCapped } from '../http/body.js';
import type { FormGuard } from '../http/forms.js';
import { escapeHtml as esc, HTML_SECURITY_HEADERS } from '../http/html.js';
import { JSON_TYPE } from '../http/json.js';
import type { NodePublisher } from '../service/types.js';
import type { GuestConfirmation } from './confirm.js';
import { type ContinueView, renderContinuePage } from './page.js';
import { UCP_LODGING_SCHEMA_PATH, ucpBusinessProfile } from './profile.js';
import { refuseUcp, type UcpAnswer, type UcpSessions } from './sessions.js';

export interface UcpRoutes {
  publisher: NodePublisher;
  sessions: UcpSessions;
  /** The booking desk: its rate limit per address, and the hold a confirmation makes. */
  desk: BookingDesk;
  /** Without a mail transport the page cannot send codes, so no session can be confirmed. */
  confirmation?: GuestConfirmation;
  form: FormGuard;
}

/**
 * The routes a request is answered with: a node's one set, or (a platform) the set of the tenant
 * its router chose, so the routes exist once per process and each tenant's sessions are its own.
 */
export type UcpRoutesFor = (c: Context) => UcpRoutes;

const json = (a: UcpAnswer) =>
  new Response(JSON.stringify(a.body), { status: a.status, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store' } });

/** A JSON request body under the cap, counted against the rate limit, parsed; or the refusal. */
async function jsonBody(c: Context, desk: BookingDesk): Promise<{ ok: true; value: unknown } | { ok: false; answer: UcpAnswer }> {
  if (mediaType(c) !== 'application/json')
    return { ok: false, answer: refuseUcp('unsupported_media_type', 'send the request as application/json', 415) };
  const read = await readBodyCapped(c, MAX_UCP_REQUEST_BYTES);
  if (!read.ok)
    return { ok: false, answer: refuseUcp('body_too_large', `a session request is limited to ${MAX_UCP_REQUEST_BYTES} bytes`, 413) };
  const limited = desk.admit(clientAddress(c));
  if (limited) return { ok: false, answer: refuseUcp('too_many_requests', 'too many requests from this address', 429) };
  try {
    return { ok: true, value: JSON.parse(read.text) };
  } catch {
    return { ok: false, answer: refuseUcp('invalid_request', 'the body is not JSON', 400) };
  }
}

/** The profile, the lodging member's JSON Schema and the five Booking operations. */
export function mountUcpRest(app: Hono, routesFor: UcpRoutesFor): void {
  app.get(UCP_PROFILE_PATH, async (c) => {
    const p = routesFor(c).publisher;
    return c.json(
      ucpBusinessProfile({ origin: p.origin, offerEndpoint: p.offerEndpoint, property: p.property(), jwks: await p.jwks() }),
      200,
      { 'cache-control': 'public, max-age=300' },
    );
  });
  const lodgingSchema = { request: z.toJSONSchema(UcpLodgingRequestSchema), response: z.toJSONSchema(UcpLodgingViewSchema) };
  app.get(UCP_LODGING_SCHEMA_PATH, (c) => c.json(lodgingSchema, 200, { 'cache-control': 'public, max-age=3600' }));

  const base = `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`;
  type Op<A> = (sessions: UcpSessions, c: Context, arg: A) => Promise<UcpAnswer>;
  const withBody = (op: Op<unknown>) => async (c: Context) => {
    const r = routesFor(c);
    const body = await jsonBody(c, r.desk);
    return json(body.ok ? await op(r.sessions, c, body.value) : body.answer);
  };
  const withoutBody = (op: Op<string>) => async (c: Context) => {
    const r = routesFor(c);
    const limited = r.desk.admit(clientAddress(c));
    return json(
      limited
        ? refuseUcp('too_many_requests', 'too many requests from this address', 429)
        : await op(r.sessions, c, c.req.param('id') ?? ''),
    );
  };
  // Cancel's body is `{}` (REST binding example) or none: read when sent, never required.
  const optionalBody = (op: Op<string>) => async (c: Context) =>
    c.req.header('content-length') === '0' || (!c.req.header('content-length') && !c.req.header('transfer-encoding'))
      ? withoutBody(op)(c)
      : withBody((sessions, cc) => op(sessions, cc, cc.req.param('id') ?? ''))(c);
  app.post(
    base,
    withBody((sessions, _c, body) => sessions.create(body)),
  );
  app.get(`${base}/:id`, async (c) => json(await routesFor(c).sessions.get(c.req.param('id'))));
  app.put(
    `${base}/:id`,
    withBody((sessions, c, body) => sessions.update(c.req.param('id') ?? '', body)),
  );
  app.post(
    `${base}/:id/complete`,
    withBody((sessions, c, body) => sessions.complete(c.req.param('id') ?? '', body)),
  );
  app.post(
    `${base}/:id/cancel`,
    optionalBody((sessions, _c, id) => sessions.cancel(id)),
  );
}

/** The guest's page: GET shows the session; POST sends a code or confirms with one. */
export function mountUcpContinue(app: Hono, routesFor: UcpRoutesFor): void {
  const html = (c: Context, body: string, status = 200) =>
    c.html(body, status as 200, { ...HTML_SECURITY_HEADERS, 'cache-control': 'no-store' });
  const render = async (r: UcpRoutes, c: Context, id: string, notice?: string, refusal?: string) => {
    const p = r.publisher;
    const origin = formOrigin(p.canonicalDomain);
    const s = await r.sessions.session(id);
    if (!s) return html(c, renderRefusal(p.canonicalDomain, 'not_found'), 404);
    const view = (await r.sessions.view(s)) as unknown as ContinueView;
    const token = r.form.token(origin, { session_id: id }, p.now());
    const digits = p.property().currency_minor_digits;
    return html(
      c,
      renderContinuePage(p.canonicalDomain, view, {
        token,
        digits,
        email: s.buyer_email ?? '',
        ...(notice ? { notice } : {}),
        ...(refusal ? { refusal } : {}),
      }),
    );
  };
  app.get(`${UCP_CONTINUE_PATH}/:id`, (c) => render(routesFor(c), c, c.req.param('id')));
  app.post(`${UCP_CONTINUE_PATH}/:id`, async (c) => {
    const r = routesFor(c);
    const p = r.publisher;
    const origin = formOrigin(p.canonicalDomain);
    const id = c.req.param('id');
    const posted = await r.form.read(c, origin, p.now());
    // The form guard reads the body itself (form-encoded, capped at MAX_UCP_REQUEST_BYTES).
    if (!posted.ok) return html(c, renderRefusal(p.canonicalDomain, posted.refusal), NODE_CODES[posted.refusal].status ?? 400);
    const field = (name: string) => (posted.form.getAll(name).length === 1 ? (posted.form.get(name) ?? '') : '');
    // The token binds the session it was rendered for: a token of one session never acts on another.
    if (field('session_id') !== id)
      return html(c, renderRefusal(p.canonicalDomain, 'invalid_form_token'), NODE_CODES.invalid_form_token.status ?? 403);
    const client = clientAddress(c);
    const limited = r.desk.admit(client);
    if (limited) return render(r, c, id, 'Too many attempts from your address: wait a minute.', 'too_many_requests');
    if (!r.confirmation) return render(r, c, id, 'This host has not set up email confirmation yet.', 'mail_unavailable');
    const step = field('step');
    const out =
      step === 'send_code'
        ? await r.confirmation.sendCode(id)
        : step === 'confirm'
          ? await r.confirmation.confirm(id, field('code'), client)
          : undefined;
    if (!out) return render(r, c, id, 'Unknown step.', 'invalid_request');
    if (out.ok) return render(r, c, id, step === 'send_code' ? 'We emailed you a code.' : 'Confirmed.');
    return render(r, c, id, out.message, out.code);
  });
}

/** A refused page request: the stable code and the node's wording (the form's own parameters filled in). */
function renderRefusal(canonicalDomain: string, code: keyof typeof NODE_CODES): string {
  const message = nodeMessage(code, { what: 'form', max: MAX_UCP_REQUEST_BYTES });
  return page(
    'Not possible',
    `<p class="note">${esc(canonicalDomain)}</p><p id="session-status" data-refusal="${esc(code)}">${esc(message)} (${esc(code)}).</p>`,
  );
}
