/**
 * The UCP routes on the node's app: the business profile (`/.well-known/ucp`), the Lodging Booking
 * REST binding's five operations under `/ucp/v1` (Booking REST binding, Operations: `POST
 * /booking-sessions` answering 201, `GET`/`PUT /booking-sessions/{id}`, `POST …/complete`, `POST
 * …/cancel`), the JSON Schema of vrpkit's `dev.vrpkit.lodging` member, and the guest's page (`continue_url`). The JSON endpoints take
 * `application/json` under a byte cap and count against the booking rate limit per client address
 * (Get excepted: a platform polls it while the guest confirms); every operation checks the headers
 * the binding's OpenAPI requires (metadata.ts) and echoes `Request-Id`; the page's forms pass the
 * node's form guard (cross-site refusal, a token bound to the session).
 */

import { sha256Hex } from '@vrpkit/core';
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
import type { UcpChangeOperation } from './idempotency.js';
import { mountUcpLegal } from './legal.js';
import { isUuid, restMetadata } from './metadata.js';
import { type ContinueView, renderContinuePage } from './page.js';
import { UCP_LODGING_SCHEMA_PATH, ucpBusinessProfile } from './profile.js';
import { admitUcp, refuseUcp, type UcpAnswer, type UcpSessions } from './sessions.js';

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

/** The answer, with the request's `Request-Id` echoed when it is one the binding accepts (a UUID), a refusal's too. */
function json(c: Context, a: UcpAnswer): Response {
  const requestId = c.req.header('request-id');
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, 'cache-control': 'no-store' };
  if (isUuid(requestId)) headers['request-id'] = requestId;
  // RFC 9110 §10.2.3 (and RFC 6585 §4 for 429): when the client may try again.
  if (a.retryAfterSeconds) headers['retry-after'] = String(a.retryAfterSeconds);
  return new Response(JSON.stringify(a.body), { status: a.status, headers });
}

/** A JSON request body under the cap, counted against the rate limit, parsed (with its text, whose digest a repeated Idempotency-Key is compared by); or the refusal. */
async function jsonBody(
  c: Context,
  desk: BookingDesk,
): Promise<{ ok: true; value: unknown; text: string } | { ok: false; answer: UcpAnswer }> {
  if (mediaType(c) !== 'application/json')
    return { ok: false, answer: refuseUcp('unsupported_media_type', 'send the request as application/json', 415) };
  const read = await readBodyCapped(c, MAX_UCP_REQUEST_BYTES);
  if (!read.ok)
    return { ok: false, answer: refuseUcp('body_too_large', `a session request is limited to ${MAX_UCP_REQUEST_BYTES} bytes`, 413) };
  const limited = admitUcp(desk, clientAddress(c));
  if (limited) return { ok: false, answer: limited };
  try {
    return { ok: true, value: JSON.parse(read.text), text: read.text };
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
  app.post(base, restOperation(routesFor, 'create', 'required'));
  app.get(`${base}/:id`, restOperation(routesFor, 'get', 'none'));
  app.put(`${base}/:id`, restOperation(routesFor, 'update', 'required'));
  app.post(`${base}/:id/complete`, restOperation(routesFor, 'complete', 'required'));
  // Cancel's body is `{}` (REST binding example) or none: read when sent, never required.
  app.post(`${base}/:id/cancel`, restOperation(routesFor, 'cancel', 'optional'));
}

/**
 * One REST operation: its body when it has one (media type, cap, rate limit, JSON), the headers its
 * OpenAPI requires (UCP-Agent, Request-Id, Idempotency-Key), then the sessions, the same code the MCP
 * binding runs. A repeated Idempotency-Key is compared by the SHA-256 of the body's bytes (Message
 * Signatures, Replay Protection: "the same digest RFC 9530 mandates as Content-Digest").
 */
function restOperation(routesFor: UcpRoutesFor, operation: UcpChangeOperation | 'get', body: 'required' | 'optional' | 'none') {
  const answer = async (c: Context): Promise<UcpAnswer> => {
    const r = routesFor(c);
    const sent = c.req.header('content-length') !== '0' && (!!c.req.header('content-length') || !!c.req.header('transfer-encoding'));
    let read = { value: {} as unknown, text: '' };
    if (body === 'required' || (body === 'optional' && sent)) {
      const parsed = await jsonBody(c, r.desk);
      if (!parsed.ok) return parsed.answer;
      read = parsed;
    } else if (body === 'optional') {
      const limited = admitUcp(r.desk, clientAddress(c));
      if (limited) return limited;
    }
    const meta = restMetadata((name) => c.req.header(name), operation);
    if (!meta.ok) return refuseUcp(meta.refusal.code, meta.refusal.content, 400);
    const id = c.req.param('id') ?? '';
    if (operation === 'get') return r.sessions.run({ operation, id });
    const key = meta.value.idempotencyKey;
    return r.sessions.run({
      operation,
      id,
      body: read.value,
      requestSha256: sha256Hex(read.text),
      ...(key ? { idempotencyKey: key } : {}),
    });
  };
  return async (c: Context) => json(c, await answer(c));
}

/** The guest's page: GET shows the session; POST sends a code or confirms with one. The node's own terms and privacy pages (legal.ts). */
export function mountUcpContinue(app: Hono, routesFor: UcpRoutesFor): void {
  mountUcpLegal(app, (c) => routesFor(c).publisher);
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
