/**
 * The published UCP JSON Schemas (vendored unmodified in `fixtures/ucp/schemas`, Apache-2.0, see
 * `fixtures/ucp/PROVENANCE.md`) loaded into one Ajv 2020-12 instance, so a test checks what a node
 * sends or accepts against the specification's own files. Two files the Lodging booking schema refers
 * to are not in the stored copy of the specification: `fixtures/ucp/standins/` holds vrpkit's loose
 * stand-ins for them (each says so in its title), and PROVENANCE.md names them.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHardenedFetch, type HardenedFetch, verifyBookingReceipt } from '@vrpkit/agent';
import type { Clock } from '@vrpkit/core';
import type { ServedNode } from '@vrpkit/node';
import {
  UCP_BOOKING_SESSIONS,
  UCP_PROFILE_PATH,
  UCP_REST_BASE_PATH,
  type UcpSessionView,
  ucpBookingRequest,
  ucpStayId,
  type VrpJwks,
} from '@vrpkit/protocol';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { serializeDictionary } from 'structured-headers';
import { expect } from 'vitest';
import { startTestSmtp, type TestSmtp } from './mail.js';
import { closeTestNode, type NodeClient, serveTestNode, tempDir } from './node.js';

const SCHEMA_ROOT = fileURLToPath(new URL('../fixtures/ucp/schemas/', import.meta.url));
const STANDIN_ROOT = fileURLToPath(new URL('../fixtures/ucp/standins/', import.meta.url));
/** Every vendored schema's `$id` starts here (`https://ucp.dev/schemas/shopping/checkout.json`). */
export const UCP_SCHEMA_BASE = 'https://ucp.dev/schemas/';
const UCP_SESSIONS = `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`;

function schemaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? schemaFiles(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : [],
  );
}

/** A UCP operation a request is made for (`ucp_request` annotations: create, update, complete). */
export type UcpRequestOp = 'create' | 'update' | 'complete';

/**
 * A schema as a request of `op` sees it, applying UCP's `ucp_request` annotations the way the
 * specification's resolver (`ucp-schema resolve --request --op OP`, a Rust tool this machine cannot
 * fetch) does for the cases these schemas use: on every object's properties, `omit` removes the
 * property, `required` requires it, `optional` makes it optional; a per-operation map names the
 * value for each operation (an operation it does not name leaves the property as it is).
 */
function requestView(node: unknown, op: UcpRequestOp): unknown {
  if (Array.isArray(node)) return node.map((n) => requestView(n, op));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = requestView(v, op);
  const props = out.properties as Record<string, Record<string, unknown>> | undefined;
  if (!props || typeof props !== 'object') return out;
  let required = Array.isArray(out.required) ? [...(out.required as string[])] : [];
  for (const [name, prop] of Object.entries(props)) {
    const a = prop?.ucp_request;
    const rule = typeof a === 'string' ? a : a && typeof a === 'object' ? (a as Record<string, string>)[op] : undefined;
    if (rule === 'omit') {
      delete props[name];
      required = required.filter((r) => r !== name);
    } else if (rule === 'optional') required = required.filter((r) => r !== name);
    else if (rule === 'required' && !required.includes(name)) required.push(name);
  }
  if (required.length > 0) out.required = required;
  else delete out.required;
  return out;
}

/**
 * `lodging/booking.json` refers to `ucp.json#/$defs/response_booking_schema`, a definition newer than
 * the vendored `ucp.json` (main at fdcf8934). In memory only, it is given the composition every other
 * response envelope there has (`response_checkout_schema`: `base` plus `payment_handlers`), which is what
 * the Booking REST examples show (`version`, `capabilities`, `payment_handlers`); the file is not edited.
 */
function withBookingEnvelope(schema: Record<string, unknown>): Record<string, unknown> {
  if (schema.$id !== `${UCP_SCHEMA_BASE}ucp.json`) return schema;
  const defs = schema.$defs as Record<string, unknown>;
  if (defs.response_booking_schema) return schema;
  return {
    ...schema,
    $defs: { ...defs, response_booking_schema: { ...(defs.response_checkout_schema as object), title: 'UCP Booking Response Schema' } },
  };
}

const loaded = new Map<string, Ajv2020>();
/** One Ajv per view: the responses (the schemas as published) and the requests of each operation. */
function ucpAjv(view: 'response' | UcpRequestOp = 'response'): Ajv2020 {
  const cached = loaded.get(view);
  if (cached) return cached;
  // `strict: false`: the schemas carry UCP's own annotation keywords (`ucp_request`, `name`, `requires`).
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  for (const file of [...schemaFiles(SCHEMA_ROOT), ...schemaFiles(STANDIN_ROOT)]) {
    const schema = withBookingEnvelope(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
    ajv.addSchema((view === 'response' ? schema : requestView(schema, view)) as object);
  }
  loaded.set(view, ajv);
  return ajv;
}

function errorsOf(ajv: Ajv2020, ref: string, doc: unknown): ErrorObject[] {
  const validate = ajv.getSchema(new URL(ref, UCP_SCHEMA_BASE).href);
  if (!validate) throw new Error(`no vendored UCP schema ${ref} under ${relative(process.cwd(), SCHEMA_ROOT)}`);
  return validate(doc) ? [] : [...(validate.errors ?? [])];
}

/** A booking session response: Booking composed with the cancellation-policy extension. */
export const UCP_BOOKING_SCHEMA = 'lodging/policy_cancellation.json#/$defs/dev.ucp.lodging.booking';
/** A refusal with no session (`common/types/error_response.json`). */
export const UCP_ERROR_SCHEMA = 'common/types/error_response.json';

/**
 * The errors of `doc` against the vendored schema at `ref`: a path under `schemas/` with an optional
 * fragment (`lodging/booking.json`, `profile.json#/$defs/business_schema`, UCP_BOOKING_SCHEMA). Empty when valid.
 */
export function ucpSchemaErrors(ref: string, doc: unknown): ErrorObject[] {
  return errorsOf(ucpAjv(), ref, doc);
}

/** The errors of the request body `doc` of operation `op` against the schema at `ref` as that request sees it. */
export function ucpRequestErrors(op: UcpRequestOp, ref: string, doc: unknown): ErrorObject[] {
  return errorsOf(ucpAjv(op), ref, doc);
}

/** One operation of the Lodging REST binding's OpenAPI (`fixtures/ucp/services/lodging/rest.openapi.json`). */
export interface UcpRestOperation {
  operationId: string;
  method: string;
  /** Under the REST endpoint, `{id}` as written there. */
  path: string;
  /** The documented answer statuses. */
  statuses: string[];
}

/** The Lodging booking operations as the vendored OpenAPI states them (paths, methods, answer statuses). */
export function ucpLodgingRestOperations(): UcpRestOperation[] {
  const file = fileURLToPath(new URL('../fixtures/ucp/services/lodging/rest.openapi.json', import.meta.url));
  const doc = JSON.parse(readFileSync(file, 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>;
  };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, op]) => typeof op === 'object' && op !== null && 'operationId' in op)
      .map(([method, op]) => ({
        operationId: op.operationId as string,
        method: method.toUpperCase(),
        path,
        statuses: Object.keys(op.responses ?? {}),
      })),
  );
}

/** What a guest-page step answered: the HTTP status, the page, the session status and any refusal code it shows. */
export interface GuestStepAnswer {
  status: number;
  text: string;
  sessionStatus: string | undefined;
  refusal: string | undefined;
}

/**
 * One step on a session's guest page (`continue_url`) as a browser on the node's origin does it:
 * GET the page for its form token, then POST the step with Fetch Metadata and Origin of that origin.
 */
export async function guestStep(
  client: NodeClient,
  domain: string,
  id: string,
  step: 'send_code' | 'confirm',
  code = '',
): Promise<GuestStepAnswer> {
  const page = await client.get(`/ucp/continue/${id}`);
  // A page the server could not answer (a 503 while the store is away) has no form to submit: its answer is the step's.
  if (page.status >= 500) return { status: page.status, text: page.text, sessionStatus: undefined, refusal: undefined };
  const token = /name="form_token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const form = new URLSearchParams({ session_id: id, form_token: token, step, ...(code ? { code } : {}) });
  const res = await client.request('POST', `/ucp/continue/${id}`, {
    body: form.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `https://${domain}`, 'sec-fetch-site': 'same-origin' },
  });
  return {
    status: res.status,
    text: res.text,
    sessionStatus: /data-status="([a-z_]+)"/.exec(res.text)?.[1],
    refusal: /data-refusal="([a-z_]+)"/.exec(res.text)?.[1],
  };
}

/** The one-time code in a mail the node sent (its subject: "Your confirmation code for DOMAIN: NNNNNN"). */
export { mailedCodeOf } from '@vrpkit/node';

/** Ask the page to mail a code to the session's buyer `email` and read it from the test SMTP server. */
export async function mailedCode(client: NodeClient, domain: string, smtp: TestSmtp, id: string, email: string): Promise<string> {
  const before = smtp.received.length;
  const sent = await guestStep(client, domain, id, 'send_code');
  if (sent.refusal) throw new Error(`the page refused to send a code: ${sent.refusal}`);
  return smtp.code(email, before);
}

/** The hidden fields of the form `/book` renders for stay `s` (the signed offer and its form token). */
export async function bookFormFields(client: NodeClient, s: { check_in: string; check_out: string }): Promise<URLSearchParams> {
  const page = await client.get(`/book?check_in=${s.check_in}&check_out=${s.check_out}&guests=2`);
  const hidden = [...page.text.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)].map(([, k, v]) => [k!, v!]);
  expect(hidden.map(([k]) => k)).toEqual(['offer_jws', 'form_token']);
  return new URLSearchParams(hidden);
}

/** POST the `/book` form as a browser on `origin` would (Fetch Metadata and Origin), or as a script sending neither. */
export function postBookForm(client: NodeClient, form: URLSearchParams, browser?: { origin: string; site: string }) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (browser) Object.assign(headers, { origin: browser.origin, 'sec-fetch-site': browser.site });
  // The 303 itself is what is checked: not followed.
  return client.request('POST', '/book', { body: form.toString(), headers, redirect: 'manual' });
}

/**
 * A stay booked the one way a node takes bookings: Create Booking Session from `offerJws` with
 * `booker`, the guest's code mailed to `smtp` and typed back on the session's page (the hold is made
 * then), and Complete. Returns the session id and the booking id of its hold.
 */
export async function bookThroughSession(
  client: NodeClient,
  domain: string,
  smtp: TestSmtp,
  offerJws: string,
  booker: { first_name: string; last_name: string; email: string; phone_number?: string },
): Promise<{ session_id: string; booking_id: string }> {
  const { email } = booker;
  const created = await client.request('POST', UCP_SESSIONS, {
    body: JSON.stringify(ucpBookingRequest(offerJws, { booker })),
    headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST') },
  });
  const id = (JSON.parse(created.text) as { id?: string }).id;
  if (created.status !== 201 || !id) throw new Error(`no session was created: HTTP ${created.status} ${created.text.slice(0, 200)}`);
  const code = await mailedCode(client, domain, smtp, id, email);
  const confirmed = await guestStep(client, domain, id, 'confirm', code);
  if (confirmed.sessionStatus !== 'ready_for_complete') throw new Error(`the guest's code was refused: ${confirmed.refusal}`);
  const done = await client.request('POST', `${UCP_SESSIONS}/${id}/complete`, {
    body: JSON.stringify({ payment: {} }),
    headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST') },
  });
  const booking = (JSON.parse(done.text) as { confirmation?: { id: string } }).confirmation?.id;
  if (!booking) throw new Error(`the session was not completed: ${done.text.slice(0, 200)}`);
  return { session_id: id, booking_id: booking };
}

/** A node serving UCP sessions to a test: its client, a local SMTP server for the guest's code, and an agent's hardened fetch that reaches it. */
export interface UcpTestNode {
  /** A temporary directory for the test's own files, removed by `close`. */
  dir: string;
  node: ServedNode;
  client: NodeClient;
  smtp: TestSmtp;
  fetch: HardenedFetch;
  close(): Promise<void>;
}

/** Serve `domain` over https (dev CA) on `clock`, mailing guests through a local SMTP server, without the rate limit in the way. */
export async function serveUcpTestNode(domain: string, label: string, clock: Clock): Promise<UcpTestNode> {
  const tmp = tempDir(label);
  const smtp = await startTestSmtp();
  const served = await serveTestNode(domain, join(tmp.dir, 'node'), clock, {
    bookingRateLimit: 10_000,
    guestMail: { url: smtp.url, from: `Bookings <bookings@${domain}>` },
  });
  const fetch = createHardenedFetch({ connectTo: [`${domain}:443:127.0.0.1:${served.node.port}`], ca: served.node.caPem! });
  return {
    ...served,
    dir: tmp.dir,
    smtp,
    fetch,
    async close() {
      await fetch.close();
      await closeTestNode(served, tmp);
      await smtp.close();
    },
  };
}

/** The platform profile test requests name in `UCP-Agent` (the node parses it, never fetches it). */
export const TEST_UCP_AGENT_PROFILE = 'https://platform.example/.well-known/ucp';

/**
 * The headers the Booking REST binding requires of a request with `method` (rest.openapi.json):
 * `UCP-Agent` and `Request-Id` on every operation, a fresh `Idempotency-Key` on all but Get.
 */
export function ucpRestHeaders(method: string): Record<string, string> {
  return {
    // RFC 8941 §3.2 Dictionary, `profile` a String: serialized by structured-headers, never by hand.
    'ucp-agent': serializeDictionary({ profile: TEST_UCP_AGENT_PROFILE }),
    'request-id': randomUUID(),
    ...(method === 'GET' ? {} : { 'idempotency-key': randomUUID() }),
  };
}

/** One method of the Lodging MCP binding's OpenRPC: its params and the `meta` keys it requires. */
export interface UcpMcpMethod {
  name: string;
  params: { name: string; required: boolean }[];
  metaRequired: string[];
}

/** The Lodging booking tools as the vendored OpenRPC states them (`fixtures/ucp/services/lodging/mcp.openrpc.json`). */
export function ucpLodgingMcpMethods(): UcpMcpMethod[] {
  const file = fileURLToPath(new URL('../fixtures/ucp/services/lodging/mcp.openrpc.json', import.meta.url));
  type Schema = { $ref?: string; allOf?: Schema[]; required?: string[] };
  const doc = JSON.parse(readFileSync(file, 'utf8')) as {
    components: { schemas: { meta: { required: string[] } } };
    methods: { name: string; params: { name: string; required?: boolean; schema: Schema }[] }[];
  };
  // `meta` is the component (required: ucp-agent) or an allOf of it with more required keys.
  const required = (s: Schema): string[] =>
    s.$ref === '#/components/schemas/meta'
      ? doc.components.schemas.meta.required
      : [...(s.required ?? []), ...(s.allOf ?? []).flatMap(required)];
  return doc.methods.map((m) => ({
    name: m.name,
    params: m.params.map((p) => ({ name: p.name, required: p.required === true })),
    metaRequired: [...new Set(required(m.params.find((p) => p.name === 'meta')?.schema ?? {}))],
  }));
}

/** A stay's lead guest as a UCP booker. */
export interface UcpLead {
  first_name: string;
  last_name: string;
  email: string;
}

/**
 * A UCP session for a stay at the node behind `client`, created from bare dates (the node binds the
 * offer it signs) with `lead` as booker, and confirmed by the guest with the code mailed to them:
 * the session (`ready_for_complete`) and the pending hold its confirmation made.
 */
export async function confirmedUcpSession(
  client: NodeClient,
  domain: string,
  smtp: TestSmtp,
  stay: { check_in: string; check_out: string; guests: number },
  lead: UcpLead,
): Promise<{ sessionId: string; bookingId: string }> {
  const profile = JSON.parse((await client.get(UCP_PROFILE_PATH)).text) as {
    ucp: { capabilities: Record<string, { config?: { property?: { id: string } } }[]> };
  };
  const propertyId = profile.ucp.capabilities['dev.vrpkit.lodging']?.[0]?.config?.property?.id ?? '';
  const created = await client.request('POST', `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`, {
    headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST') },
    body: JSON.stringify({
      property: { id: propertyId },
      stays: [
        {
          id: ucpStayId(propertyId),
          stay_dates: { start_date: stay.check_in, end_date: stay.check_out },
          occupancy: { total: stay.guests },
        },
      ],
      booker: lead,
    }),
  });
  const sessionId = (JSON.parse(created.text) as { id?: string }).id;
  if (!sessionId) throw new Error(`no session: ${created.text.slice(0, 300)}`);
  const code = await mailedCode(client, domain, smtp, sessionId, lead.email);
  const confirmed = await guestStep(client, domain, sessionId, 'confirm', code);
  if (confirmed.sessionStatus !== 'ready_for_complete') throw new Error(`not confirmed: ${confirmed.refusal ?? confirmed.sessionStatus}`);
  const view = JSON.parse(
    (await client.request('GET', `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}/${sessionId}`, { headers: ucpRestHeaders('GET') })).text,
  ) as {
    'dev.vrpkit.lodging': { booking_id?: string };
  };
  const bookingId = view['dev.vrpkit.lodging'].booking_id;
  if (!bookingId) throw new Error('the confirmed session names no hold');
  return { sessionId, bookingId };
}

/** The booking sessions' collection (`/ucp/v1/booking-sessions`). */
export const UCP_SESSIONS_PATH = `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`;

/** The UCP operation a session request is (its body is checked as that request sees it); none for a read or a cancel. */
export function ucpRequestOpOf(method: string, path: string): UcpRequestOp | undefined {
  if (method === 'PUT') return 'update';
  if (method !== 'POST') return undefined;
  return path === UCP_SESSIONS_PATH ? 'create' : path.endsWith('/complete') ? 'complete' : undefined;
}

/** One JSON request to a node's (or tenant's) UCP endpoint and its answer, the body parsed. */
export async function ucpCall<T = Record<string, unknown>>(
  client: NodeClient,
  method: string,
  path: string,
  body?: unknown,
  more: Record<string, string> = {},
): Promise<{ status: number; json: T }> {
  // The Booking REST binding's required headers on every session request (rest.openapi.json); `more` may override them.
  const headers = { ...(path.startsWith(UCP_SESSIONS) ? ucpRestHeaders(method) : {}), ...more };
  const init =
    body === undefined ? { headers } : { body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
  const res = await client.request(method, path, init);
  return { status: res.status, json: JSON.parse(res.text) as T };
}

/** A Create/Update body for one stay (the REST binding's single-stay example) of property `propertyId`, its ids the node's. */
export function ucpStayRequest(
  propertyId: string,
  s: { check_in: string; check_out: string },
  more: { offerJws?: string; email?: string; stay?: object; guests?: number } = {},
) {
  return {
    property: { id: propertyId },
    stays: [
      {
        id: ucpStayId(propertyId),
        stay_dates: { start_date: s.check_in, end_date: s.check_out },
        occupancy: { adults: more.guests ?? 2, total: more.guests ?? 2 },
        ...more.stay,
      },
    ],
    ...(more.email ? { booker: { first_name: 'Ada', last_name: 'Guest', email: more.email } } : {}),
    ...(more.offerJws ? { 'dev.vrpkit.lodging': { offer_jws: more.offerJws } } : {}),
  };
}

/** A session request and its answer, both checked against UCP's Booking (with the cancellation policy) schema. */
export async function ucpSessionChecked<T>(client: NodeClient, method: string, path: string, body?: unknown) {
  const op = ucpRequestOpOf(method, path);
  if (body !== undefined && op) expect(ucpRequestErrors(op, UCP_BOOKING_SCHEMA, body)).toEqual([]);
  const r = await ucpCall<T>(client, method, path, body);
  expect(ucpSchemaErrors(UCP_BOOKING_SCHEMA, r.json), JSON.stringify(r.json).slice(0, 400)).toEqual([]);
  return r;
}

/** A create refused with no session (200 and UCP's error response, checked): the codes of its messages. */
export async function ucpRefusedCodes(client: NodeClient, body: unknown): Promise<string[]> {
  const r = await ucpCall<{ messages?: { code: string }[] }>(client, 'POST', UCP_SESSIONS_PATH, body);
  expect(r.status).toBe(200);
  expect(ucpSchemaErrors(UCP_ERROR_SCHEMA, r.json)).toEqual([]);
  return (r.json.messages ?? []).map((m) => m.code);
}

/** A session as its answer shows it, with the members of `dev.vrpkit.lodging` a completed one carries. */
export type UcpCompletedView = UcpSessionView & {
  'dev.vrpkit.lodging': { booking_id?: string; booking_receipt_jws?: string; offer_jws: string };
};

/** `v` is a completed session: its confirmation the one reservation it names, its booking receipt verifying against the offer it was made from. */
export async function expectCompletedWithReceipt(v: UcpCompletedView, o: { jwks: VrpJwks; domain: string; clock: Clock }): Promise<void> {
  expect(v.status).toBe('completed');
  const lodging = v['dev.vrpkit.lodging'];
  expect(v.confirmation?.id).toBe(lodging.booking_id);
  const verified = await verifyBookingReceipt(lodging.booking_receipt_jws!, { ...o, offerJws: lodging.offer_jws });
  expect(verified.status).toBe('verified');
}

/** No two of `holds` (a calendar's pending and confirmed reservations) share a night. */
export function expectNoNightHeldTwice(holds: readonly { booking_id: string; check_in: string; check_out: string }[]): void {
  for (const a of holds)
    for (const b of holds)
      if (a !== b) expect(a.check_in >= b.check_out || b.check_in >= a.check_out, `${a.booking_id} overlaps ${b.booking_id}`).toBe(true);
}
