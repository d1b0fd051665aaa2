/**
 * UCP booking sessions over real https, on SQLite and PostgreSQL: the business profile and every
 * Checkout response validate against the vendored UCP JSON Schemas (Ajv 2020-12); a session is bound
 * to an offer the node signed (or to the one it signs for bare dates) and its totals are that offer's;
 * an altered, expired or foreign offer is refused with a stable code and nothing written; an
 * unconfirmed session blocks no night; the guest confirms on the node's page with a code read from a
 * real local SMTP server, and only then are the dates held; complete is idempotent; eight concurrent
 * confirmations for overlapping stays make exactly one hold.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyBookingReceipt } from '@vrpkit/agent';
import { createJwsSigner, sha256Hex } from '@vrpkit/core';
import { listUcpSessions, type ServedNode, withNodeStore } from '@vrpkit/node';
import {
  JWKS_PATH,
  OFFER_ENDPOINT_PATH,
  type OfferEnvelope,
  UCP_PROFILE_PATH,
  UCP_REST_BASE_PATH,
  type UcpSessionView,
  type VrpJwks,
} from '@vrpkit/protocol';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { closeTestNode, dayAfter, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { guestStep, mailedCode, type UcpRequestOp, ucpRequestErrors, ucpSchemaErrors } from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const pg = pgTestSchemas('ucp-sessions', 'the UCP session contract on PostgreSQL');
const START = Date.parse('2027-02-01T09:00:00Z');
const SESSIONS = `${UCP_REST_BASE_PATH}/checkout-sessions`;
/** Checkout composed with the payment-terms extension: the schema every session response must meet. */
const CHECKOUT_SCHEMA = 'shopping/payment_terms.json#/$defs/dev.ucp.shopping.checkout';
const ERROR_SCHEMA = 'common/types/error_response.json';
const stay = (from: number, nights: number) => ({ check_in: dayAfter(START, from), check_out: dayAfter(START, from + nights) });
const buyer = (email: string) => ({ email, first_name: 'Ada', last_name: 'Guest' });
const stayLine = [{ item: { id: 'stay' }, quantity: 1 }];

interface Harness {
  node: ServedNode;
  client: NodeClient;
  clock: ReturnType<typeof testClock>;
  dataDir: string;
  databaseUrl?: string;
  domain: string;
  smtp: TestSmtp;
}

async function call(h: Harness, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const init =
    body === undefined ? { headers } : { body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
  const res = await h.client.request(method, path, init);
  return { status: res.status, json: JSON.parse(res.text) as UcpSessionView & Record<string, unknown> };
}

/** The UCP operation a session request is (its body is checked against the Checkout schema as that request sees it). */
const OPS: Record<string, UcpRequestOp> = { POST: 'create', PUT: 'update' };

/** A session request and its answer, both checked against UCP's Checkout (with payment terms) schema. */
async function session(h: Harness, method: string, path: string, body?: unknown) {
  const op = OPS[method];
  if (body !== undefined && op) expect(ucpRequestErrors(op, CHECKOUT_SCHEMA, body)).toEqual([]);
  const r = await call(h, method, path, body);
  expect(ucpSchemaErrors(CHECKOUT_SCHEMA, r.json), JSON.stringify(r.json).slice(0, 400)).toEqual([]);
  return r;
}

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

async function createFromOffer(h: Harness, o: OfferEnvelope, email: string) {
  return session(h, 'POST', SESSIONS, { line_items: stayLine, buyer: buyer(email), 'dev.vrpkit.lodging': { offer_jws: o.signature.jws } });
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
    h = { ...served, clock, dataDir, domain, smtp, ...(url ? { databaseUrl: url } : {}) };
    close = async () => {
      await closeTestNode(served, tmp);
      await smtp.close();
    };
  });
  afterAll(() => close?.());

  it('publishes a UCP business profile that validates, with the REST endpoint, the capabilities and the node keys', async () => {
    const res = await h.client.get(UCP_PROFILE_PATH);
    expect(res.status).toBe(200);
    const profile = JSON.parse(res.text) as {
      ucp: Record<string, Record<string, { endpoint?: string; config?: unknown }[]>>;
      keys: unknown[];
    };
    expect(ucpSchemaErrors('profile.json#/$defs/business_schema', profile)).toEqual([]);
    expect(profile.ucp.services!['dev.ucp.shopping']![0]!.endpoint).toBe(`https://${h.domain}${UCP_REST_BASE_PATH}`);
    expect(Object.keys(profile.ucp.capabilities!)).toEqual([
      'dev.ucp.shopping.checkout',
      'dev.ucp.shopping.payment_terms',
      'dev.vrpkit.lodging',
    ]);
    expect(profile.ucp.capabilities!['dev.vrpkit.lodging']![0]!.config).toMatchObject({ rate_plans: [{ payment: 'at_property' }] });
    const jwks = JSON.parse((await h.client.get(JWKS_PATH)).text) as VrpJwks;
    expect(profile.keys).toEqual(jwks.keys);
  });

  it('binds a session to the signed offer: its totals are the offer’s, and it blocks no night', async () => {
    const s = stay(30, 3);
    const o = await offer(h, s);
    const before = await written(h);
    const r = await createFromOffer(h, o, 'bind@example.org');
    expect(r.status).toBe(201);
    expect(r.json.status).toBe('requires_escalation');
    expect(r.json.continue_url).toBe(`https://${h.domain}/ucp/continue/${r.json.id}`);
    const total = r.json.totals.find((t) => t.type === 'total')!.amount;
    expect(total).toBe(o.offer.price.agent_total);
    // UCP totals: the addends (subtotal, fees) sum to exactly the one total.
    expect(r.json.totals.filter((t) => t.type !== 'total').reduce((a, t) => a + t.amount, 0)).toBe(total);
    expect(r.json['dev.vrpkit.lodging']).toMatchObject({
      ...s,
      guests: 2,
      offer_jws: o.signature.jws,
      offer_jws_sha256: sha256Hex(o.signature.jws),
    });
    expect(r.json.messages!.map((m) => m.code)).toEqual(['guest_confirmation_required', 'dev.vrpkit.lodging.policy.cancellation']);
    // The validators have teeth: a create without its line items is not one, nor a Checkout without its one `total` line.
    expect(ucpRequestErrors('create', CHECKOUT_SCHEMA, { buyer: buyer('x@example.org') })).not.toEqual([]);
    expect(ucpSchemaErrors(CHECKOUT_SCHEMA, { ...r.json, totals: r.json.totals.filter((t) => t.type !== 'total') })).not.toEqual([]);
    // An unconfirmed session holds nothing: no booking, no blocked range, the revision unmoved, the stay still offered.
    expect(await written(h)).toEqual({ ...before, sessions: before.sessions + 1 });
    expect((await offer(h, s)).offer.availability.available).toBe(true);
    expect((await session(h, 'GET', `${SESSIONS}/${r.json.id}`)).json).toEqual(r.json);
  });

  it('from bare stay dates, re-quotes and answers with the signed offer it bound', async () => {
    const s = stay(34, 2);
    const r = await session(h, 'POST', SESSIONS, { line_items: stayLine, 'dev.vrpkit.lodging': { ...s, guests: 2 } });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe('incomplete');
    expect(r.json.messages!.filter((m) => m.code === 'missing').map((m) => (m as { path?: string }).path)).toEqual([
      '$.buyer.email',
      '$.buyer.first_name',
    ]);
    const bound = r.json['dev.vrpkit.lodging'];
    const o = await offer(h, s);
    expect(r.json.totals.find((t) => t.type === 'total')!.amount).toBe(o.offer.price.agent_total);
    expect(bound.offer_jws.split('.')).toHaveLength(3);
    // Update Checkout: the buyer arrives, the session now waits for the guest.
    const u = await session(h, 'PUT', `${SESSIONS}/${r.json.id}`, { line_items: stayLine, buyer: buyer('dates@example.org') });
    expect(u.json.status).toBe('requires_escalation');
    expect(u.json['dev.vrpkit.lodging'].offer_jws).toBe(bound.offer_jws);
  });

  it('refuses an altered, expired or foreign offer with a stable code, writing nothing', async () => {
    const o = await offer(h, stay(40, 2));
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
    for (const [jws, code] of [
      [altered, 'offer_invalid'],
      [foreign, 'offer_invalid'],
      [otherDomain, 'offer_invalid'],
      ['not-a-jws', 'offer_invalid'],
    ] as const) {
      const r = await call(h, 'POST', SESSIONS, {
        line_items: stayLine,
        buyer: buyer('x@example.org'),
        'dev.vrpkit.lodging': { offer_jws: jws },
      });
      expect(ucpSchemaErrors(ERROR_SCHEMA, r.json)).toEqual([]);
      expect(r.json.messages!.map((m) => m.code)).toEqual([code]);
    }
    h.clock.advance(16 * 60_000);
    try {
      const r = await call(h, 'POST', SESSIONS, {
        line_items: stayLine,
        buyer: buyer('x@example.org'),
        'dev.vrpkit.lodging': { offer_jws: o.signature.jws },
      });
      expect(ucpSchemaErrors(ERROR_SCHEMA, r.json)).toEqual([]);
      expect(r.json.messages!.map((m) => m.code)).toEqual(['offer_expired']);
    } finally {
      h.clock.set(START);
    }
    const bad = await call(h, 'POST', SESSIONS, { line_items: stayLine, 'dev.vrpkit.lodging': { offer_jws: o.signature.jws, total: 1 } });
    expect(bad.status).toBe(400);
    expect(ucpSchemaErrors(ERROR_SCHEMA, bad.json)).toEqual([]);
    expect(await written(h)).toEqual(before);
  });

  it('the guest confirms with the mailed code: only then are the dates held; complete is idempotent and carries a verifying receipt', async () => {
    const s = stay(50, 3);
    const o = await offer(h, s);
    const email = 'confirm@example.org';
    const created = await createFromOffer(h, o, email);
    const id = created.json.id;
    // Complete before the guest confirmed: nothing booked, the session says why.
    const early = await session(h, 'POST', `${SESSIONS}/${id}/complete`);
    expect(early.json.status).toBe('requires_escalation');
    expect(early.json.order).toBeUndefined();
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
    // Inventory exhausted (the UCP example flow): a new session for the held stay, from its dates or its old offer, is refused.
    const held = await written(h);
    for (const lodging of [{ ...s, guests: 2 }, { offer_jws: o.signature.jws }]) {
      const r = await call(h, 'POST', SESSIONS, { line_items: stayLine, 'dev.vrpkit.lodging': lodging });
      expect(ucpSchemaErrors(ERROR_SCHEMA, r.json)).toEqual([]);
      expect(r.json.messages!.map((m) => m.code)).toEqual(['item_unavailable']);
    }
    expect(await written(h)).toEqual(held);
    const done = await session(h, 'POST', `${SESSIONS}/${id}/complete`);
    expect(done.json.status).toBe('completed');
    const lodging = done.json['dev.vrpkit.lodging'];
    expect(done.json.order!.id).toBe(lodging.booking_id);
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
    const again = await session(h, 'POST', `${SESSIONS}/${id}/complete`);
    expect(again.json.order).toEqual(done.json.order);
    expect(await written(h)).toEqual(after);
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

  it('cancel releases the hold a confirmed session made', async () => {
    const s = stay(60, 2);
    const email = 'cancel@example.org';
    const created = await createFromOffer(h, await offer(h, s), email);
    const id = created.json.id;
    await step(h, id, 'confirm', await codeFor(h, id, email));
    expect((await offer(h, s)).offer.availability.available).toBe(false);
    const canceled = await session(h, 'POST', `${SESSIONS}/${id}/cancel`);
    expect(canceled.json.status).toBe('canceled');
    expect((await offer(h, s)).offer.availability.available).toBe(true);
    const late = await session(h, 'POST', `${SESSIONS}/${id}/complete`);
    expect(late.json.status).toBe('canceled');
    expect(late.json.messages!.map((m) => m.code)).toContain('invalid_status');
  });

  it('eight concurrent sessions for overlapping stays confirm into exactly one hold', async () => {
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
    expect(ucpSchemaErrors(ERROR_SCHEMA, missing.json)).toEqual([]);
  });
}

describe('UCP booking sessions (SQLite)', () => sessionContract('ucp-sqlite', () => undefined));
describe.skipIf(!pg)('UCP booking sessions (PostgreSQL)', () => sessionContract('ucp-pg', () => pg?.schemaUrl('ucp')));
