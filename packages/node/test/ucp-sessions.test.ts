/**
 * UCP Lodging booking sessions (`dev.ucp.lodging.booking`, REST binding) over real https, on SQLite
 * and PostgreSQL: the business profile, every request and every response validate against the
 * vendored UCP Lodging schemas (Ajv 2020-12; Booking with the cancellation-policy extension); the
 * specification's example flows (single stay, update, complete, cancel, inventory exhausted) run; a
 * session is bound to an offer the node signed (or to the one it signs for bare dates) and its totals
 * are that offer's; an altered, expired, foreign or mismatched offer is refused with a stable code and
 * nothing written; an unconfirmed session blocks no night; the guest confirms on the node's page with
 * a code read from a real local SMTP server, and only then are the dates held; complete is idempotent;
 * eight concurrent sessions for overlapping stays end in exactly one reservation.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyBookingReceipt } from '@vrpkit/agent';
import { createJwsSigner, sha256Hex } from '@vrpkit/core';
import { listUcpSessions, type ServedNode, withNodeStore } from '@vrpkit/node';
import {
  JWKS_PATH,
  OFFER_ENDPOINT_PATH,
  type OfferEnvelope,
  UCP_BOOKING_SESSIONS,
  UCP_PROFILE_PATH,
  UCP_REST_BASE_PATH,
  type UcpSessionView,
  ucpStayId,
  type VrpJwks,
} from '@vrpkit/protocol';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { closeTestNode, dayAfter, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import {
  guestStep,
  mailedCode,
  UCP_BOOKING_SCHEMA,
  UCP_ERROR_SCHEMA,
  ucpCall,
  ucpLodgingRestOperations,
  ucpRefusedCodes,
  ucpRequestErrors,
  ucpRestHeaders,
  ucpSchemaErrors,
  ucpSessionChecked,
  ucpStayRequest,
} from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const pg = pgTestSchemas('ucp-sessions', 'the UCP session contract on PostgreSQL');
const START = Date.parse('2027-02-01T09:00:00Z');
const SESSIONS = `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`;
const stay = (from: number, nights: number) => ({ check_in: dayAfter(START, from), check_out: dayAfter(START, from + nights) });
type Stay = ReturnType<typeof stay>;
const booker = (email: string) => ({ first_name: 'Ada', last_name: 'Guest', email });

interface Harness {
  node: ServedNode;
  client: NodeClient;
  clock: ReturnType<typeof testClock>;
  dataDir: string;
  databaseUrl?: string;
  domain: string;
  smtp: TestSmtp;
  propertyId: string;
}

type Json = UcpSessionView & Record<string, unknown>;

const call = (h: Harness, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  ucpCall<Json>(h.client, method, path, body, headers);

const session = (h: Harness, method: string, path: string, body?: unknown) => ucpSessionChecked<Json>(h.client, method, path, body);
const refused = (h: Harness, body: unknown) => ucpRefusedCodes(h.client, body);

/** A Create/Update body for stay `s` (the REST binding's single-stay example, this node's ids). */
const stayRequest = (h: Harness, s: Stay, more: { offer?: OfferEnvelope; email?: string; stay?: object; guests?: number } = {}) => {
  const { offer: o, ...rest } = more;
  return ucpStayRequest(h.propertyId, s, { ...rest, ...(o ? { offerJws: o.signature.jws } : {}) });
};

const COMPLETE = { payment: {} };

async function offer(h: Harness, s: { check_in: string; check_out: string }, guests = 2): Promise<OfferEnvelope> {
  const res = await h.client.get(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=${guests}`);
  expect(res.status).toBe(200);
  return JSON.parse(res.text) as OfferEnvelope;
}

/** What a refusal or an unconfirmed session must leave untouched: sessions, holds, blocked nights, the revision. */
async function written(h: Harness) {
  return withNodeStore({ dataDir: h.dataDir, ...(h.databaseUrl ? { databaseUrl: h.databaseUrl } : {}) }, async (s) => ({
    sessions: (await s.ucpSessions()).length,
    bookings: (await s.bookingRequests()).length,
    blocks: (await s.listBlocks()).length,
    revision: await s.revision(),
  }));
}

const step = (h: Harness, id: string, which: 'send_code' | 'confirm', code = '') => guestStep(h.client, h.domain, id, which, code);
const codeFor = (h: Harness, id: string, email: string) => mailedCode(h.client, h.domain, h.smtp, id, email);

async function createFromOffer(h: Harness, o: OfferEnvelope, email: string, s?: Stay) {
  const st = s ?? { check_in: o.offer.request!.check_in, check_out: o.offer.request!.check_out };
  return session(h, 'POST', SESSIONS, stayRequest(h, st, { offer: o, email }));
}

function sessionContract(label: string, databaseUrl: () => string | undefined) {
  let h: Harness;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const tmp = tempDir(label);
    const clock = testClock(START);
    const dataDir = join(tmp.dir, 'node');
    const domain = `${label}.example`;
    const smtp = await startTestSmtp();
    const url = databaseUrl();
    const served = await serveTestNode(domain, dataDir, clock, {
      bookingRateLimit: 10_000,
      guestMail: { url: smtp.url, from: `Bookings <bookings@${domain}>` },
      ...(url ? { databaseUrl: url } : {}),
    });
    const profile = JSON.parse((await served.client.get(UCP_PROFILE_PATH)).text) as {
      ucp: { capabilities: Record<string, { config?: { property?: { id: string } } }[]> };
    };
    const propertyId = profile.ucp.capabilities['dev.vrpkit.lodging']![0]!.config!.property!.id;
    h = { ...served, clock, dataDir, domain, smtp, propertyId, ...(url ? { databaseUrl: url } : {}) };
    close = async () => {
      await closeTestNode(served, tmp);
      await smtp.close();
    };
  });
  afterAll(() => close?.());

  it('publishes a UCP business profile that validates: the lodging REST service, the Booking capability and the node keys', async () => {
    const res = await h.client.get(UCP_PROFILE_PATH);
    expect(res.status).toBe(200);
    const profile = JSON.parse(res.text) as {
      ucp: Record<string, Record<string, { endpoint?: string; config?: unknown; extends?: unknown }[]>>;
      keys: unknown[];
    };
    expect(ucpSchemaErrors('profile.json#/$defs/business_schema', profile)).toEqual([]);
    expect(Object.keys(profile.ucp.services!)).toEqual(['dev.ucp.lodging']);
    expect(profile.ucp.services!['dev.ucp.lodging']![0]!.endpoint).toBe(`https://${h.domain}${UCP_REST_BASE_PATH}`);
    expect(Object.keys(profile.ucp.capabilities!)).toEqual([
      'dev.ucp.lodging.booking',
      'dev.ucp.lodging.policy.cancellation',
      'dev.vrpkit.lodging',
    ]);
    expect(profile.ucp.capabilities!['dev.vrpkit.lodging']![0]!.config).toMatchObject({
      stays: [{ id: ucpStayId(h.propertyId) }],
      rate_plans: [{ id: 'standard', payment: 'at_property' }],
    });
    // Booking MCP binding, Discovery: the same service over MCP on the node's /mcp.
    expect(profile.ucp.services!['dev.ucp.lodging']![1]).toMatchObject({ transport: 'mcp', endpoint: `https://${h.domain}/mcp` });
    const jwks = JSON.parse((await h.client.get(JWKS_PATH)).text) as VrpJwks;
    expect(profile.keys).toEqual(jwks.keys);
    // One booking path: the Checkout-era sessions are gone.
    expect((await call(h, 'POST', `${UCP_REST_BASE_PATH}/checkout-sessions`, {})).status).toBe(404);
  });

  it('serves the five operations of the Lodging REST binding’s OpenAPI at its paths, answering the statuses it documents', async () => {
    const ops = ucpLodgingRestOperations();
    expect(ops.map((o) => o.operationId).sort()).toEqual([
      'cancel_booking_session',
      'complete_booking_session',
      'create_booking_session',
      'get_booking_session',
      'update_booking_session',
    ]);
    const s = stay(20, 2);
    const o = await offer(h, s);
    const bodies: Record<string, unknown> = {
      create_booking_session: stayRequest(h, s, { offer: o, email: 'openapi@example.org' }),
      update_booking_session: stayRequest(h, s, { offer: o, email: 'openapi@example.org' }),
      complete_booking_session: COMPLETE,
      cancel_booking_session: {},
    };
    let id = '';
    // In the order a platform calls them: create first (its id for the rest), cancel last.
    const order = [
      'create_booking_session',
      'get_booking_session',
      'update_booking_session',
      'complete_booking_session',
      'cancel_booking_session',
    ];
    for (const name of order) {
      const op = ops.find((x) => x.operationId === name)!;
      const path = `${UCP_REST_BASE_PATH}${op.path.replace('{id}', id)}`;
      const r = await session(h, op.method, path, bodies[name]);
      expect(op.statuses, `${op.method} ${op.path}`).toContain(String(r.status));
      if (name === 'create_booking_session') id = r.json.id;
    }
  });

  it('REST headers: UCP-Agent parsed as an RFC 8941 Dictionary, Request-Id echoed, each required as the OpenAPI says, refusals writing nothing', async () => {
    const s = stay(150, 2);
    const body = JSON.stringify(stayRequest(h, s, { email: 'headers@example.org' }));
    const raw = (headers: Record<string, string>, method = 'POST', path = SESSIONS) =>
      h.client.request(method, path, { body, headers: { 'content-type': 'application/json', ...headers } });
    const before = await written(h);
    const { 'ucp-agent': _agent, ...withoutAgent } = ucpRestHeaders('POST');
    const { 'request-id': _id, ...withoutRequestId } = ucpRestHeaders('POST');
    const { 'idempotency-key': _key, ...withoutKey } = ucpRestHeaders('POST');
    const cases: [Record<string, string>, string][] = [
      [withoutAgent, 'invalid_profile_url'],
      // A Token, not a String; a bare URL (not a Dictionary); an http profile; an unterminated String.
      [{ ...withoutAgent, 'ucp-agent': 'profile=https' }, 'invalid_profile_url'],
      [{ ...withoutAgent, 'ucp-agent': 'https://platform.example/.well-known/ucp' }, 'invalid_profile_url'],
      [{ ...withoutAgent, 'ucp-agent': 'profile="http://platform.example/.well-known/ucp"' }, 'invalid_profile_url'],
      [{ ...withoutAgent, 'ucp-agent': 'profile="https://platform.example/' }, 'invalid_profile_url'],
      [withoutRequestId, 'invalid_request_id'],
      [{ ...withoutRequestId, 'request-id': 'not-a-uuid' }, 'invalid_request_id'],
      [withoutKey, 'invalid_idempotency_key'],
      [{ ...withoutKey, 'idempotency-key': 'short' }, 'invalid_idempotency_key'],
    ];
    for (const [headers, code] of cases) {
      const res = await raw(headers);
      const json = JSON.parse(res.text);
      expect([code, res.status, json.messages?.[0]?.code]).toEqual([code, 400, code]);
      expect(ucpSchemaErrors(UCP_ERROR_SCHEMA, json)).toEqual([]);
    }
    expect(await written(h)).toEqual(before);
    // The Dictionary as RFC 8941 allows it: other members, parameters, whitespace; Request-Id echoed.
    const headers: Record<string, string> = {
      ...ucpRestHeaders('POST'),
      'ucp-agent': 'v=1, profile="https://platform.example/.well-known/ucp";sig=?1 ,x=(a b)',
    };
    const ok = await raw(headers);
    expect(ok.status, ok.text).toBe(201);
    expect(ok.headers.get('request-id')).toBe(headers['request-id']);
    // Get takes no Idempotency-Key; a refusal echoes Request-Id too.
    const id = JSON.parse(ok.text).id as string;
    const get = ucpRestHeaders('GET');
    expect((await h.client.request('GET', `${SESSIONS}/${id}`, { headers: get })).headers.get('request-id')).toBe(get['request-id']);
    const missing = await h.client.request('GET', `${SESSIONS}/ucs_nope`, { headers: get });
    expect([missing.status, missing.headers.get('request-id')]).toEqual([404, get['request-id']]);
    await call(h, 'POST', `${SESSIONS}/${id}/cancel`);
  });

  it('Idempotency-Key: a repeated create, update, complete or cancel answers as the first and writes nothing; another body with the key is refused', async () => {
    const s = stay(160, 2);
    const o = await offer(h, s);
    const send = (method: string, path: string, body: unknown, key: string) => call(h, method, path, body, { 'idempotency-key': key });
    const createKey = randomUUID();
    const first = await send('POST', SESSIONS, stayRequest(h, s, { offer: o }), createKey);
    expect(first.status).toBe(201);
    const afterFirst = await written(h);
    const again = await send('POST', SESSIONS, stayRequest(h, s, { offer: o }), createKey);
    expect([again.status, again.json]).toEqual([201, first.json]);
    expect(await written(h)).toEqual(afterFirst);
    // The same key with another body: 409, no session made.
    const other = await send('POST', SESSIONS, stayRequest(h, s, { offer: o, email: 'else@example.org' }), createKey);
    expect([other.status, other.json.messages?.[0]?.code]).toEqual([409, 'idempotency_conflict']);
    expect(ucpSchemaErrors(UCP_ERROR_SCHEMA, other.json)).toEqual([]);
    expect(await written(h)).toEqual(afterFirst);
    // Update: the repeat answers the first update, even after a later one changed the session.
    const id = first.json.id;
    const updateKey = randomUUID();
    const updated = await send('PUT', `${SESSIONS}/${id}`, stayRequest(h, s, { offer: o, email: 'first@example.org' }), updateKey);
    expect(updated.json.status).toBe('requires_escalation');
    await call(h, 'PUT', `${SESSIONS}/${id}`, stayRequest(h, s, { offer: o, email: 'second@example.org' }));
    const replayed = await send('PUT', `${SESSIONS}/${id}`, stayRequest(h, s, { offer: o, email: 'first@example.org' }), updateKey);
    expect(replayed.json).toEqual(updated.json);
    expect(((await call(h, 'GET', `${SESSIONS}/${id}`)).json.booker as { email?: string }).email).toBe('second@example.org');
    // A complete that changed nothing (the guest has not confirmed) is not kept: with the same key it is judged anew later.
    const completeKey = randomUUID();
    const early = await send('POST', `${SESSIONS}/${id}/complete`, COMPLETE, completeKey);
    expect(early.json.status).toBe('requires_escalation');
    const code = await codeFor(h, id, 'second@example.org');
    expect((await step(h, id, 'confirm', code)).sessionStatus).toBe('ready_for_complete');
    const done = await send('POST', `${SESSIONS}/${id}/complete`, COMPLETE, completeKey);
    expect(done.json.status).toBe('completed');
    const afterDone = await written(h);
    const doneAgain = await send('POST', `${SESSIONS}/${id}/complete`, COMPLETE, completeKey);
    // The very same answer, its signed receipt included.
    expect(doneAgain.json).toEqual(done.json);
    expect(await written(h)).toEqual(afterDone);
    // Cancel: a repeat answers as the first, on another session.
    const c = await createFromOffer(h, await offer(h, stay(170, 2)), 'cancel-key@example.org');
    const cancelKey = randomUUID();
    const canceled = await send('POST', `${SESSIONS}/${c.json.id}/cancel`, {}, cancelKey);
    expect(canceled.json.status).toBe('canceled');
    const afterCancel = await written(h);
    expect((await send('POST', `${SESSIONS}/${c.json.id}/cancel`, {}, cancelKey)).json).toEqual(canceled.json);
    const mismatched = await send('POST', `${SESSIONS}/${c.json.id}/cancel`, { note: 1 }, cancelKey);
    expect([mismatched.status, mismatched.json.messages?.[0]?.code]).toEqual([409, 'idempotency_conflict']);
    expect(await written(h)).toEqual(afterCancel);
  });

  it('a hold the host declined is not completed: hold_released, the session unchanged, no receipt', async () => {
    const created = await createFromOffer(h, await offer(h, stay(180, 2)), 'declined@example.org');
    const id = created.json.id;
    const code = await codeFor(h, id, 'declined@example.org');
    expect((await step(h, id, 'confirm', code)).sessionStatus).toBe('ready_for_complete');
    const bookingId = (await call(h, 'GET', `${SESSIONS}/${id}`)).json['dev.vrpkit.lodging'].booking_id!;
    await withNodeStore({ dataDir: h.dataDir, ...(h.databaseUrl ? { databaseUrl: h.databaseUrl } : {}) }, (st) =>
      st.decideHold(bookingId, 'declined', h.clock.now()),
    );
    const r = await session(h, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect([r.json.status, r.json.messages?.map((m) => m.code)]).toEqual(['ready_for_complete', expect.arrayContaining(['hold_released'])]);
    expect(r.json['dev.vrpkit.lodging'].booking_receipt_jws).toBeUndefined();
  });

  it('Idempotency-Key under concurrency: eight simultaneous creates with one key make one session', async () => {
    const s = stay(190, 2);
    const body = stayRequest(h, s, { offer: await offer(h, s) });
    const before = await written(h);
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => call(h, 'POST', SESSIONS, body, { 'idempotency-key': key })));
    // Each is the first answer (201, one id) or, while it runs, 409 idempotency_in_progress.
    const created = answers.filter((a) => a.status === 201);
    expect(new Set(created.map((a) => a.json.id)).size).toBe(1);
    for (const a of answers.filter((x) => x.status !== 201))
      expect([a.status, a.json.messages?.[0]?.code]).toEqual([409, 'idempotency_in_progress']);
    expect((await written(h)).sessions).toBe(before.sessions + 1);
    const again = await call(h, 'POST', SESSIONS, body, { 'idempotency-key': key });
    expect([again.status, again.json.id]).toEqual([201, created[0]!.json.id]);
  });

  it('links[]: the terms and privacy pages, served on the node’s own origin when the property file names none', async () => {
    const created = await createFromOffer(h, await offer(h, stay(175, 2)), 'links@example.org');
    const links = created.json.links as { type: string; url: string }[];
    expect(links.map((l) => l.type)).toEqual(['terms_of_service', 'privacy_policy', 'cancellation_policy', 'dev.vrpkit.property']);
    for (const [type, id] of [
      ['terms_of_service', 'terms'],
      ['privacy_policy', 'privacy'],
    ] as const) {
      const url = new URL(links.find((l) => l.type === type)!.url);
      expect(url.origin).toBe(`https://${h.domain}`);
      const page = await h.client.get(url.pathname);
      expect([page.status, page.text.includes(`id="${id}"`)]).toEqual([200, true]);
    }
    await call(h, 'POST', `${SESSIONS}/${created.json.id}/cancel`);
  });

  it('single stay: binds a session to the signed offer, its totals are the offer’s, and it blocks no night', async () => {
    const s = stay(30, 3);
    const o = await offer(h, s);
    const before = await written(h);
    const r = await createFromOffer(h, o, 'bind@example.org', s);
    expect(r.status).toBe(201);
    expect(r.json.status).toBe('requires_escalation');
    expect(r.json.continue_url).toBe(`https://${h.domain}/ucp/continue/${r.json.id}`);
    const total = r.json.totals.find((t) => t.type === 'total')!.amount;
    expect(total).toBe(o.offer.price.agent_total);
    // Booking, Pricing Scope: exactly one total; the addends (subtotal, fees) sum to it; the stay's own totals too.
    expect(r.json.totals.filter((t) => t.type === 'total')).toHaveLength(1);
    expect(r.json.totals.filter((t) => t.type !== 'total').reduce((a, t) => a + t.amount, 0)).toBe(total);
    const stays = r.json.stays as unknown as { totals: { type: string; amount: number }[]; stay_dates: unknown; occupancy: unknown }[];
    expect(stays[0]!.totals).toEqual(r.json.totals);
    expect(stays[0]!.stay_dates).toEqual({ start_date: s.check_in, end_date: s.check_out });
    // Payment terms: one at-property schedule of the whole total; the cancellation policy is the extension's item.
    const payment = r.json.payment as { terms: { schedules: { type: string; amount: number }[] }[]; selected_term_id: string };
    expect(payment.terms[0]!.schedules).toEqual([expect.objectContaining({ type: 'at_property', amount: total })]);
    const policy = (r.json.policies as { type: string; refundability: string; schedule?: { tiers: unknown[] } }[])[0]!;
    expect(policy.type).toBe('dev.ucp.lodging.policy.cancellation');
    expect(['refundable', 'partially_refundable', 'non_refundable', 'dev.vrpkit.unknown']).toContain(policy.refundability);
    expect(r.json['dev.vrpkit.lodging']).toEqual({ offer_jws: o.signature.jws, offer_jws_sha256: sha256Hex(o.signature.jws) });
    expect(r.json.messages!.map((m) => m.code)).toEqual([
      'guest_confirmation_required',
      'dev.ucp.lodging.policy.cancellation',
      'at_property_payment',
    ]);
    // The validators have teeth: a create without its stays is not one, nor a booking without its one `total` line.
    expect(ucpRequestErrors('create', UCP_BOOKING_SCHEMA, { property: { id: h.propertyId } })).not.toEqual([]);
    expect(ucpSchemaErrors(UCP_BOOKING_SCHEMA, { ...r.json, totals: r.json.totals.filter((t) => t.type !== 'total') })).not.toEqual([]);
    // An unconfirmed session holds nothing: no booking, no blocked range, the revision unmoved, the stay still offered.
    expect(await written(h)).toEqual({ ...before, sessions: before.sessions + 1 });
    expect((await offer(h, s)).offer.availability.available).toBe(true);
    expect((await session(h, 'GET', `${SESSIONS}/${r.json.id}`)).json).toEqual(r.json);
  });

  it('update: from bare stay dates the node re-quotes and binds the offer it signed; the party arrives by Update, guest ids kept', async () => {
    const s = stay(34, 2);
    const r = await session(h, 'POST', SESSIONS, stayRequest(h, s));
    expect(r.status).toBe(201);
    expect(r.json.status).toBe('incomplete');
    expect(r.json.messages!.filter((m) => m.code === 'missing').map((m) => (m as { path?: string }).path)).toEqual(['$.booker']);
    const bound = r.json['dev.vrpkit.lodging'];
    const o = await offer(h, s);
    expect(r.json.totals.find((t) => t.type === 'total')!.amount).toBe(o.offer.price.agent_total);
    expect(bound.offer_jws.split('.')).toHaveLength(3);
    // Update Booking Session (full replacement): the guests and their assignment, the lead a primary guest.
    const assignments = [
      { guest_id: 'gst_01', role: 'primary' },
      { guest_id: 'gst_02', role: 'accompanying' },
    ];
    const party = {
      ...stayRequest(h, s, { stay: { guest_assignments: assignments } }),
      guests: [
        { id: 'gst_01', first_name: 'Jane', last_name: 'Doe', email: 'dates@example.org' },
        { id: 'gst_02', first_name: 'Mary', last_name: 'Doe' },
      ],
      travel_purpose: 'leisure',
    };
    const u = await session(h, 'PUT', `${SESSIONS}/${r.json.id}`, party);
    expect(u.json.status).toBe('requires_escalation');
    expect(u.json.guests).toEqual(party.guests);
    expect((u.json.stays as unknown as { guest_assignments: unknown }[])[0]!.guest_assignments).toEqual(assignments);
    expect(u.json['dev.vrpkit.lodging'].offer_jws).toBe(bound.offer_jws);
    // Another stay is another session: the session is left as it was, with the reason.
    const moved = await session(h, 'PUT', `${SESSIONS}/${r.json.id}`, stayRequest(h, stay(35, 2), { email: 'x@example.org' }));
    expect(moved.json.messages!.map((m) => m.code)).toContain('stay_immutable');
    expect(moved.json.guests).toEqual(party.guests);
    // An assignment to a guest the pool does not hold is refused, nothing changed.
    const orphan = await session(h, 'PUT', `${SESSIONS}/${r.json.id}`, {
      ...party,
      guests: [party.guests[1]],
    });
    expect(orphan.json.messages!.map((m) => m.code)).toContain('guest_not_found');
    expect(orphan.json.guests).toEqual(party.guests);
  });

  it('refuses an altered, expired, foreign or mismatched offer, another stay and an oversized party with a stable code, writing nothing', async () => {
    const s = stay(40, 2);
    const o = await offer(h, s);
    const [head, payload, sig] = o.signature.jws.split('.') as [string, string, string];
    const altered = `${head}.${payload.slice(0, -2)}${payload.endsWith('A') ? 'B' : 'A'}${payload.slice(-1)}.${sig}`;
    // Another node's key, and this node's own key over another domain's offer: both foreign.
    const otherKey = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }) as Parameters<typeof createJwsSigner>[0];
    const foreign = createJwsSigner(otherKey, o.signature.kid).sign(JSON.stringify(o.offer), { typ: 'JWT' });
    const kid = o.signature.kid;
    const ownKey = JSON.parse(readFileSync(join(h.dataDir, 'keys', `${kid}.jwk`), 'utf8')) as Parameters<typeof createJwsSigner>[0];
    const otherDomain = createJwsSigner(ownKey, kid).sign(JSON.stringify({ ...o.offer, canonical_domain: 'another-node.example' }), {
      typ: 'JWT',
    });
    const before = await written(h);
    const withJws = (jws: string) => ({ ...stayRequest(h, s, { email: 'x@example.org' }), 'dev.vrpkit.lodging': { offer_jws: jws } });
    for (const jws of [altered, foreign, otherDomain, 'not-a-jws']) expect(await refused(h, withJws(jws))).toEqual(['offer_invalid']);
    // The signed offer for other dates, or another party size, than the request names.
    expect(await refused(h, stayRequest(h, stay(41, 2), { offer: o, email: 'x@example.org' }))).toEqual(['offer_mismatch']);
    expect(await refused(h, stayRequest(h, s, { offer: o, email: 'x@example.org', guests: 1 }))).toEqual(['offer_mismatch']);
    // Ids that are not this node's; a party over capacity (Standard Errors).
    expect(await refused(h, { ...stayRequest(h, s), property: { id: 'someone-else' } })).toEqual(['stay_not_found']);
    expect(
      await refused(
        h,
        stayRequest(h, s, { stay: { id: undefined, accommodation_type: { id: h.propertyId }, rate_plan: { id: 'promo' } } }),
      ),
    ).toEqual(['stay_not_found']);
    expect(await refused(h, stayRequest(h, s, { guests: 99 }))).toEqual(['occupancy_exceeded_capacity']);
    h.clock.advance(16 * 60_000);
    try {
      expect(await refused(h, withJws(o.signature.jws))).toEqual(['offer_expired']);
    } finally {
      h.clock.set(START);
    }
    const bad = await call(h, 'POST', SESSIONS, {
      ...withJws(o.signature.jws),
      'dev.vrpkit.lodging': { offer_jws: o.signature.jws, total: 1 },
    });
    expect(bad.status).toBe(400);
    expect(ucpSchemaErrors(UCP_ERROR_SCHEMA, bad.json)).toEqual([]);
    const twoStays = await call(h, 'POST', SESSIONS, {
      ...stayRequest(h, s),
      stays: [...stayRequest(h, s).stays, ...stayRequest(h, s).stays],
    });
    expect(twoStays.status).toBe(400);
    expect(await written(h)).toEqual(before);
  });

  it('complete: the guest confirms with the mailed code, only then are the dates held; complete is idempotent with a verifying receipt; inventory exhausted after', async () => {
    const s = stay(50, 3);
    const o = await offer(h, s);
    const email = 'confirm@example.org';
    const created = await createFromOffer(h, o, email, s);
    const id = created.json.id;
    // Complete needs `payment` (Booking, Payments); before the guest confirmed nothing is booked and the session says why.
    const noPayment = await call(h, 'POST', `${SESSIONS}/${id}/complete`, {});
    expect(noPayment.status).toBe(400);
    expect(ucpSchemaErrors(UCP_ERROR_SCHEMA, noPayment.json)).toEqual([]);
    const early = await session(h, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect(early.json.status).toBe('requires_escalation');
    expect(early.json.confirmation).toBeUndefined();
    const wrong = await step(h, id, 'confirm', '000000');
    expect(wrong.refusal).toBe('code_invalid');
    const code = await codeFor(h, id, email);
    expect(code).toMatch(/^\d{6}$/);
    const before = await written(h);
    const ok = await step(h, id, 'confirm', code);
    expect(ok.refusal).toBeUndefined();
    expect(ok.sessionStatus).toBe('ready_for_complete');
    expect((await written(h)).blocks).toBe(before.blocks + 1);
    expect((await offer(h, s)).offer.availability.available).toBe(false);
    // Inventory exhausted (the REST binding's example): a new session for the held stay, from its dates or its old offer, is refused.
    const held = await written(h);
    expect(await refused(h, stayRequest(h, s))).toEqual(['inventory_exhausted']);
    expect(await refused(h, stayRequest(h, s, { offer: o }))).toEqual(['inventory_exhausted']);
    expect(await written(h)).toEqual(held);
    const done = await session(h, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect(done.json.status).toBe('completed');
    expect(done.json.continue_url).toBeUndefined();
    const lodging = done.json['dev.vrpkit.lodging'];
    expect(done.json.confirmation!.id).toBe(lodging.booking_id);
    const jwks = JSON.parse((await h.client.get(JWKS_PATH)).text) as VrpJwks;
    const verified = await verifyBookingReceipt(lodging.booking_receipt_jws!, {
      jwks,
      domain: h.domain,
      offerJws: o.signature.jws,
      clock: h.clock,
    });
    expect(verified.status).toBe('verified');
    // A replayed complete creates nothing new and answers with the same booking.
    const after = await written(h);
    const again = await session(h, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect(again.json.confirmation).toEqual(done.json.confirmation);
    expect(await written(h)).toEqual(after);
    // After completion the session is immutable.
    const late = await session(h, 'PUT', `${SESSIONS}/${id}`, stayRequest(h, s, { email: 'other@example.org' }));
    expect(late.json.messages!.map((m) => m.code)).toContain('invalid_status');
    expect(late.json.booker).toEqual(booker(email));
    // The host's read port lists it by status, without the code digest.
    const listed = await listUcpSessions({
      dataDir: h.dataDir,
      status: 'completed',
      ...(h.databaseUrl ? { databaseUrl: h.databaseUrl } : {}),
    });
    expect(listed.map((x) => x.session_id)).toContain(id);
    expect(listed.every((x) => !('code_sha256' in x))).toBe(true);
  });

  it('counts every code try (five wrong ones end the code), and a double confirmation keeps its one hold', async () => {
    const email = 'tries@example.org';
    const first = await createFromOffer(h, await offer(h, stay(90, 2)), email);
    const code = await codeFor(h, first.json.id, email);
    const wrong = code === '000000' ? '111111' : '000000';
    // Tried at once, each try is counted before it is judged: never more than five are judged.
    const tries = await Promise.all(Array.from({ length: 8 }, () => step(h, first.json.id, 'confirm', wrong)));
    const judged = tries.filter((t) => t.refusal === 'code_invalid').length;
    expect(judged).toBeGreaterThan(0);
    expect(judged).toBeLessThanOrEqual(5);
    for (let i = judged; i < 5; i++) expect((await step(h, first.json.id, 'confirm', wrong)).refusal).toBe('code_invalid');
    const spent = await withNodeStore({ dataDir: h.dataDir, ...(h.databaseUrl ? { databaseUrl: h.databaseUrl } : {}) }, (st) =>
      st.ucpSession(first.json.id),
    );
    expect(Number(spent?.code_attempts)).toBe(5);
    expect((await step(h, first.json.id, 'confirm', code)).refusal).toBe('too_many_attempts');

    const s = stay(95, 2);
    const second = await createFromOffer(h, await offer(h, s), email);
    const right = await codeFor(h, second.json.id, email);
    const before = await written(h);
    const both = await Promise.all([step(h, second.json.id, 'confirm', right), step(h, second.json.id, 'confirm', right)]);
    // One is judged and holds; the other is told to try again or finds the same hold: never a released one.
    expect(both.some((b) => b.sessionStatus === 'ready_for_complete' && b.refusal === undefined)).toBe(true);
    expect((await written(h)).bookings).toBe(before.bookings + 1);
    expect((await offer(h, s)).offer.availability.available).toBe(false);
  });

  it('cancel releases the hold a confirmed session made; a canceled session does not complete', async () => {
    const s = stay(60, 2);
    const email = 'cancel@example.org';
    const created = await createFromOffer(h, await offer(h, s), email);
    const id = created.json.id;
    await step(h, id, 'confirm', await codeFor(h, id, email));
    expect((await offer(h, s)).offer.availability.available).toBe(false);
    const canceled = await session(h, 'POST', `${SESSIONS}/${id}/cancel`, {});
    expect(canceled.json.status).toBe('canceled');
    expect(canceled.json.continue_url).toBeUndefined();
    expect((await offer(h, s)).offer.availability.available).toBe(true);
    const late = await session(h, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect(late.json.status).toBe('canceled');
    expect(late.json.messages!.map((m) => m.code)).toContain('invalid_status');
    // Cancel without a body is the same operation (the binding's example sends `{}`).
    const other = await createFromOffer(h, await offer(h, stay(62, 2)), email);
    expect((await session(h, 'POST', `${SESSIONS}/${other.json.id}/cancel`)).json.status).toBe('canceled');
  });

  it('eight concurrent sessions for overlapping stays end in exactly one reservation', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const email = `race${i}@example.org`;
        const created = await createFromOffer(h, await offer(h, stay(70 + (i % 3), 3)), email);
        return { id: created.json.id, code: await codeFor(h, created.json.id, email) };
      }),
    );
    const before = await written(h);
    const results = await Promise.all(sessions.map((x) => step(h, x.id, 'confirm', x.code)));
    expect(results.filter((r) => r.sessionStatus === 'ready_for_complete')).toHaveLength(1);
    expect(results.filter((r) => r.refusal === 'booking_refused')).toHaveLength(7);
    // Every platform completes at once: one reservation, the others still waiting on a guest who cannot hold.
    const completes = await Promise.all(sessions.map((x) => session(h, 'POST', `${SESSIONS}/${x.id}/complete`, COMPLETE)));
    expect(completes.filter((c) => c.json.status === 'completed')).toHaveLength(1);
    expect((await written(h)).bookings).toBe(before.bookings + 1);
  });

  it('refuses a cross-site post of the guest page and an unknown session', async () => {
    const created = await createFromOffer(h, await offer(h, stay(80, 2)), 'xsite@example.org');
    const res = await h.client.request('POST', `/ucp/continue/${created.json.id}`, {
      body: new URLSearchParams({ session_id: created.json.id, step: 'send_code' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(res.status).toBe(403);
    const missing = await call(h, 'GET', `${SESSIONS}/ucs_nope`);
    expect(missing.status).toBe(404);
    expect(ucpSchemaErrors(UCP_ERROR_SCHEMA, missing.json)).toEqual([]);
  });
}

describe('UCP booking sessions (SQLite)', () => sessionContract('ucp-sqlite', () => undefined));
describe.skipIf(!pg)('UCP booking sessions (PostgreSQL)', () => sessionContract('ucp-pg', () => pg?.schemaUrl('ucp')));
