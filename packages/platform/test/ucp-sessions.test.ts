/**
 * Every platform tenant is a UCP lodging business (issue 34 item 1), over real https on SQLite and
 * PostgreSQL: each tenant's business profile; the specification's example flows (single stay,
 * update, complete, cancel, inventory exhausted) with every request and answer validated against the
 * vendored UCP Lodging schemas; the guest confirms on the tenant's own page with a code read from a
 * real local SMTP server, and only then are the tenant's nights held (in the platform's store, its
 * other tenants untouched; eight racing confirmations make one reservation); a tenant's `/book` form
 * creates its session (another tenant refusing its token); the operator decides a hold (a decline
 * with its reason cancels the hold's session); a session of one tenant is never read, confirmed, completed or canceled through another
 * tenant's Host; a disabled tenant takes no session.
 */
import { verifyBookingReceipt } from '@vrpkit/agent';
import { sampleProperty } from '@vrpkit/node';
import type { PlatformStore, ServedPlatform } from '@vrpkit/platform';
import {
  JWKS_PATH,
  OFFER_ENDPOINT_PATH,
  type OfferEnvelope,
  UCP_PROFILE_PATH,
  UCP_REST_BASE_PATH,
  type UcpSessionView,
  type VrpJwks,
} from '@vrpkit/protocol';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { dayAfter, type NodeClient, nodeClient, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import {
  bookFormFields,
  guestStep,
  mailedCode,
  postBookForm,
  UCP_SESSIONS_PATH as SESSIONS,
  UCP_ERROR_SCHEMA,
  ucpCall,
  ucpRefusedCodes,
  ucpSchemaErrors,
  ucpSessionChecked,
  ucpStayRequest,
} from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newMasterKey, openInitialised, serveBookingPlatform, sqliteUrl, tempDir } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const pg = pgTestSchemas('platform ucp-sessions', 'the platform tenants’ UCP sessions on PostgreSQL');
const START = Date.parse('2027-02-01T09:00:00Z');
const COMPLETE = { payment: {} };
const stay = (from: number, nights: number) => ({ check_in: dayAfter(START, from), check_out: dayAfter(START, from + nights) });
type Stay = ReturnType<typeof stay>;
type Json = UcpSessionView & Record<string, unknown>;

interface Tenant {
  domain: string;
  client: NodeClient;
  propertyId: string;
}

const call = (t: Tenant, method: string, path: string, body?: unknown) => ucpCall<Json>(t.client, method, path, body);

const session = (t: Tenant, method: string, path: string, body?: unknown) => ucpSessionChecked<Json>(t.client, method, path, body);
const refused = (t: Tenant, body: unknown) => ucpRefusedCodes(t.client, body);

const stayRequest = (t: Tenant, s: Stay, more: { offer?: OfferEnvelope; email?: string } = {}) =>
  ucpStayRequest(t.propertyId, s, {
    ...(more.email ? { email: more.email } : {}),
    ...(more.offer ? { offerJws: more.offer.signature.jws } : {}),
  });

async function offer(t: Tenant, s: Stay): Promise<OfferEnvelope> {
  const res = await t.client.get(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=2`);
  expect(res.status).toBe(200);
  return JSON.parse(res.text) as OfferEnvelope;
}

/** A client of tenant `domain` (SNI and Host its name) and its property's id from its UCP profile. */
async function tenant(served: ServedPlatform, domain: string): Promise<Tenant> {
  const client = nodeClient(domain, served.port, served.caPem!);
  const profile = JSON.parse((await client.get(UCP_PROFILE_PATH)).text) as {
    ucp: { capabilities: Record<string, { config?: { property?: { id: string } } }[]> };
  };
  return { domain, client, propertyId: profile.ucp.capabilities['dev.vrpkit.lodging']![0]!.config!.property!.id };
}

const available = async (t: Tenant, s: Stay) => (await offer(t, s)).offer.availability.available;

function platformContract(label: string, databaseUrl: (dir: string) => string) {
  const A = `${label}-a.example`;
  const B = `${label}-b.example`;
  const C = `${label}-off.example`;
  let store: PlatformStore;
  let dbUrl: string;
  let served: ServedPlatform;
  let smtp: TestSmtp;
  let a: Tenant;
  let b: Tenant;
  const clock = testClock(START);

  /** The tenant's session, hold and blocked-night rows in the platform's store. */
  const rows = async (domain: string) => ({
    sessions: (await store.db.selectFrom('platform_tenant_ucp_session').select('session_id').where('domain', '=', domain).execute()).length,
    bookings: (await store.db.selectFrom('platform_tenant_booking').select('booking_id').where('domain', '=', domain).execute()).length,
    blocks: (await store.db.selectFrom('platform_tenant_block').select('id').where('domain', '=', domain).execute()).length,
  });
  const codeFor = (t: Tenant, id: string, email: string) => mailedCode(t.client, t.domain, smtp, id, email);

  beforeAll(async () => {
    const dir = tempDir(label);
    const master = newMasterKey();
    smtp = await startTestSmtp();
    dbUrl = databaseUrl(dir);
    store = await openInitialised(dbUrl, master, { clock });
    await store.addTenants(
      master,
      [A, B, C].map((domain) => ({ domain, property: sampleProperty(START) })),
    );
    served = await serveBookingPlatform(store, master, dir, clock, smtp.url);
    a = await tenant(served, A);
    b = await tenant(served, B);
  });
  afterAll(async () => {
    await a?.client.close();
    await b?.client.close();
    await served?.close();
    await store?.close();
    await smtp?.close();
  });

  it('every tenant publishes its own UCP business profile: its origin’s REST endpoint and its own keys', async () => {
    const keys: string[] = [];
    for (const t of [a, b]) {
      const res = await t.client.get(UCP_PROFILE_PATH);
      expect(res.status).toBe(200);
      const profile = JSON.parse(res.text) as { ucp: { services: Record<string, { endpoint?: string }[]> }; keys: { kid: string }[] };
      expect(ucpSchemaErrors('profile.json#/$defs/business_schema', profile)).toEqual([]);
      expect(profile.ucp.services['dev.ucp.lodging']![0]!.endpoint).toBe(`https://${t.domain}${UCP_REST_BASE_PATH}`);
      const jwks = JSON.parse((await t.client.get(JWKS_PATH)).text) as VrpJwks;
      expect(profile.keys).toEqual(jwks.keys);
      keys.push(...profile.keys.map((k) => k.kid));
    }
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('single stay and update: a session bound to the tenant’s signed offer, its totals the offer’s, blocking no night', async () => {
    const s = stay(30, 3);
    const o = await offer(a, s);
    const before = await rows(A);
    const r = await session(a, 'POST', SESSIONS, stayRequest(a, s, { offer: o, email: 'bind@example.org' }));
    expect(r.status).toBe(201);
    expect(r.json.status).toBe('requires_escalation');
    expect(r.json.continue_url).toBe(`https://${A}/ucp/continue/${r.json.id}`);
    expect(r.json.totals.find((t) => t.type === 'total')!.amount).toBe(o.offer.price.agent_total);
    expect(await rows(A)).toEqual({ ...before, sessions: before.sessions + 1 });
    expect(await available(a, s)).toBe(true);
    expect((await session(a, 'GET', `${SESSIONS}/${r.json.id}`)).json).toEqual(r.json);

    // Update (the binding's example): from bare dates the tenant binds the offer it signs; the lead arrives by Update.
    const bare = await session(a, 'POST', SESSIONS, stayRequest(a, stay(34, 2)));
    expect(bare.json.status).toBe('incomplete');
    const u = await session(a, 'PUT', `${SESSIONS}/${bare.json.id}`, stayRequest(a, stay(34, 2), { email: 'update@example.org' }));
    expect(u.json.status).toBe('requires_escalation');
    expect(u.json['dev.vrpkit.lodging'].offer_jws).toBe(bare.json['dev.vrpkit.lodging'].offer_jws);
    // Another tenant's offer is foreign here: refused, nothing written.
    const foreign = await offer(b, s);
    const kept = await rows(A);
    expect(await refused(a, stayRequest(a, s, { offer: foreign, email: 'x@example.org' }))).toEqual(['offer_invalid']);
    expect(await rows(A)).toEqual(kept);
  });

  it('complete: the guest confirms on the tenant’s page with the mailed code, only then are its nights held; idempotent with a verifying receipt; inventory exhausted after', async () => {
    const s = stay(50, 3);
    const o = await offer(a, s);
    const email = 'confirm@example.org';
    const id = (await session(a, 'POST', SESSIONS, stayRequest(a, s, { offer: o, email }))).json.id;
    const early = await session(a, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect(early.json.status).toBe('requires_escalation');
    const received = smtp.received.length;
    const code = await codeFor(a, id, email);
    // The mail went by the platform's transport, from the tenant's own default sender.
    expect(smtp.received.slice(received).some((m) => m.raw.includes(`bookings@${A}`))).toBe(true);
    const beforeA = await rows(A);
    const beforeB = await rows(B);
    const ok = await guestStep(a.client, A, id, 'confirm', code);
    expect(ok.refusal).toBeUndefined();
    expect(ok.sessionStatus).toBe('ready_for_complete');
    expect(await rows(A)).toEqual({ ...beforeA, bookings: beforeA.bookings + 1, blocks: beforeA.blocks + 1 });
    expect(await rows(B)).toEqual(beforeB);
    expect(await available(a, s)).toBe(false);
    // The other tenant's calendar is its own: the same dates are still offered there.
    expect(await available(b, s)).toBe(true);
    // Inventory exhausted: a new session for the held stay, from its dates or its old offer, is refused, nothing written.
    const held = await rows(A);
    expect(await refused(a, stayRequest(a, s))).toEqual(['inventory_exhausted']);
    expect(await refused(a, stayRequest(a, s, { offer: o }))).toEqual(['inventory_exhausted']);
    expect(await rows(A)).toEqual(held);
    const done = await session(a, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect(done.json.status).toBe('completed');
    const lodging = done.json['dev.vrpkit.lodging'];
    expect(done.json.confirmation!.id).toBe(lodging.booking_id);
    const jwks = JSON.parse((await a.client.get(JWKS_PATH)).text) as VrpJwks;
    const verified = await verifyBookingReceipt(lodging.booking_receipt_jws!, { jwks, domain: A, offerJws: o.signature.jws, clock });
    expect(verified.status).toBe('verified');
    // A replayed complete creates nothing new and answers with the same booking.
    const again = await session(a, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect(again.json.confirmation).toEqual(done.json.confirmation);
    expect(await rows(A)).toEqual(held);
  });

  it('the operator decides a tenant’s hold (vrp platform tenants bookings, confirm-booking): a confirmed one stays booked past its hold time', async () => {
    const s = stay(100, 2);
    const email = 'operator@example.org';
    const id = (await session(a, 'POST', SESSIONS, stayRequest(a, s, { offer: await offer(a, s), email }))).json.id;
    await guestStep(a.client, A, id, 'confirm', await codeFor(a, id, email));
    const done = await session(a, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    const bookingId = done.json['dev.vrpkit.lodging'].booking_id!;
    const db = ['--database-url', dbUrl, '--json'];
    const failed = async (args: string[]) => {
      const r = await runVrpInProcess([...args, ...db]);
      expect(r.code).not.toBe(0);
      return `${r.stdout}${r.stderr}`;
    };
    const listed = await runVrpInProcess(['platform', 'tenants', 'bookings', A, '--status', 'pending', ...db]);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { bookings: { booking_id: string }[] }).bookings.map((x) => x.booking_id)).toContain(bookingId);
    // Another tenant has no such booking; a bad status is refused with its code.
    expect(await failed(['platform', 'tenants', 'confirm-booking', B, bookingId])).toContain('booking_not_found');
    expect(await failed(['platform', 'tenants', 'bookings', A, '--status', 'held'])).toContain('invalid_booking_status');
    const confirmed = await runVrpInProcess(['platform', 'tenants', 'confirm-booking', A, bookingId, ...db]);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect((JSON.parse(confirmed.stdout) as { booking: { status: string } }).booking.status).toBe('confirmed');
    expect(await failed(['platform', 'tenants', 'decline-booking', A, bookingId, '--reason', 'late'])).toContain('booking_not_pending');
    clock.advance(25 * 3_600_000);
    try {
      expect(await available(a, s)).toBe(false);
    } finally {
      clock.set(START);
    }
  });

  it('the operator declines a tenant’s hold with a reason (decline-booking --reason): kept, the nights freed, the session canceled with declined_by_host', async () => {
    const s = stay(104, 2);
    const email = 'declined@example.org';
    const id = (await session(a, 'POST', SESSIONS, stayRequest(a, s, { offer: await offer(a, s), email }))).json.id;
    await guestStep(a.client, A, id, 'confirm', await codeFor(a, id, email));
    const bookingId = (await session(a, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE)).json['dev.vrpkit.lodging'].booking_id!;
    expect(await available(a, s)).toBe(false);
    const decline = (...more: string[]) =>
      runVrpInProcess(['platform', 'tenants', 'decline-booking', A, bookingId, ...more, '--database-url', dbUrl, '--json']);
    const held = await rows(A);
    // Without a reason, a blank one or one too long: refused with the node's codes, nothing written.
    for (const [more, code] of [
      [[], 'reason'],
      [['--reason', '   '], 'decline_reason_required'],
      [['--reason', 'x'.repeat(501)], 'decline_reason_too_long'],
    ] as const) {
      const r = await decline(...more);
      expect({ code: r.code === 0 ? 0 : 1, out: `${r.stdout}${r.stderr}`.includes(code) }).toEqual({ code: 1, out: true });
    }
    expect(await rows(A)).toEqual(held);
    expect(await available(a, s)).toBe(false);
    const declined = await decline('--reason', ' the roof is being repaired ');
    expect(declined.code, declined.stderr).toBe(0);
    expect((JSON.parse(declined.stdout) as { booking: unknown }).booking).toMatchObject({
      status: 'declined',
      decision_reason: 'the roof is being repaired',
    });
    const row = await store.db
      .selectFrom('platform_tenant_booking')
      .select(['status', 'decision_reason'])
      .where('domain', '=', A)
      .where('booking_id', '=', bookingId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'declined', decision_reason: 'the roof is being repaired' });
    expect(await available(a, s)).toBe(true);
    // The completed session the hold stood for is canceled with the reason, as on a node (view.ts).
    const view = await session(a, 'GET', `${SESSIONS}/${id}`);
    expect(view.json.status).toBe('canceled');
    expect(view.json.messages).toContainEqual({
      type: 'info',
      code: 'declined_by_host',
      content: 'The host declined this stay: the roof is being repaired',
    });
  });

  it('cancel releases the hold a confirmed session made; a canceled session does not complete', async () => {
    const s = stay(60, 2);
    const email = 'cancel@example.org';
    const id = (await session(a, 'POST', SESSIONS, stayRequest(a, s, { offer: await offer(a, s), email }))).json.id;
    expect((await guestStep(a.client, A, id, 'confirm', await codeFor(a, id, email))).sessionStatus).toBe('ready_for_complete');
    expect(await available(a, s)).toBe(false);
    const canceled = await session(a, 'POST', `${SESSIONS}/${id}/cancel`, {});
    expect(canceled.json.status).toBe('canceled');
    expect(await available(a, s)).toBe(true);
    const late = await session(a, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE);
    expect(late.json.status).toBe('canceled');
    expect(late.json.messages!.map((m) => m.code)).toContain('invalid_status');
  });

  it('a pending hold that lapses frees the tenant’s nights at the next read', async () => {
    const s = stay(70, 2);
    const email = 'lapse@example.org';
    const id = (await session(a, 'POST', SESSIONS, stayRequest(a, s, { offer: await offer(a, s), email }))).json.id;
    await guestStep(a.client, A, id, 'confirm', await codeFor(a, id, email));
    expect(await available(a, s)).toBe(false);
    clock.advance(25 * 3_600_000);
    try {
      expect(await available(a, s)).toBe(true);
      const hold = await store.db
        .selectFrom('platform_tenant_booking')
        .select('status')
        .where('domain', '=', A)
        .where('check_in', '=', s.check_in)
        .executeTakeFirst();
      expect(hold?.status).toBe('expired');
    } finally {
      clock.set(START);
    }
  });

  it('eight concurrent confirmations for overlapping stays of one tenant end in exactly one reservation', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const email = `race${i}@example.org`;
        const s = stay(110 + (i % 3), 3);
        const id = (await session(b, 'POST', SESSIONS, stayRequest(b, s, { offer: await offer(b, s), email }))).json.id;
        return { id, code: await codeFor(b, id, email) };
      }),
    );
    const before = await rows(B);
    const results = await Promise.all(sessions.map((x) => guestStep(b.client, B, x.id, 'confirm', x.code)));
    expect(results.filter((r) => r.sessionStatus === 'ready_for_complete')).toHaveLength(1);
    expect(results.filter((r) => r.refusal === 'booking_refused')).toHaveLength(7);
    const completes = await Promise.all(sessions.map((x) => session(b, 'POST', `${SESSIONS}/${x.id}/complete`, COMPLETE)));
    expect(completes.filter((c) => c.json.status === 'completed')).toHaveLength(1);
    expect(await rows(B)).toEqual({ ...before, bookings: before.bookings + 1, blocks: before.blocks + 1 });
  });

  it('a tenant’s /book form creates a session of that tenant and answers 303 to its continue_url; another tenant refuses its form token', async () => {
    const s = stay(90, 2);
    const form = await bookFormFields(a.client, s);
    for (const [k, v] of Object.entries({ guest_first_name: 'Ada', guest_last_name: 'Guest', guest_email: 'form@example.org' }))
      form.set(k, v);
    const before = { a: await rows(A), b: await rows(B) };
    // A's rendered form posted on B's origin: the token is bound to A's origin (http/forms.ts), so B takes nothing.
    const foreign = await postBookForm(b.client, form, { origin: `https://${B}`, site: 'same-origin' });
    expect({ status: foreign.status, code: /data-code="([^"]+)"/.exec(foreign.text)?.[1] }).toEqual({
      status: 403,
      code: 'invalid_form_token',
    });
    expect(await rows(B)).toEqual(before.b);
    const res = await postBookForm(a.client, form, { origin: `https://${A}`, site: 'same-origin' });
    expect(res.status).toBe(303);
    const continueUrl = new URL(res.headers.get('location')!);
    expect(continueUrl.origin).toBe(`https://${A}`);
    const created = await session(a, 'GET', `${SESSIONS}/${continueUrl.pathname.split('/').pop()}`);
    expect(created.json).toMatchObject({
      status: 'requires_escalation',
      continue_url: continueUrl.href,
      booker: { email: 'form@example.org' },
      'dev.vrpkit.lodging': { offer_jws: form.get('offer_jws') },
    });
    // One session of A, holding nothing until the guest confirms on its page.
    expect(await rows(A)).toEqual({ ...before.a, sessions: before.a.sessions + 1 });
    expect(await rows(B)).toEqual(before.b);
  });

  it('a session of one tenant is never read, confirmed, completed or canceled through another tenant’s Host', async () => {
    const s = stay(80, 2);
    const email = 'isolated@example.org';
    const id = (await session(a, 'POST', SESSIONS, stayRequest(a, s, { offer: await offer(a, s), email }))).json.id;
    const beforeA = await rows(A);
    for (const [method, path, body] of [
      ['GET', `${SESSIONS}/${id}`, undefined],
      ['PUT', `${SESSIONS}/${id}`, stayRequest(b, s, { email: 'thief@example.org' })],
      ['POST', `${SESSIONS}/${id}/complete`, COMPLETE],
      ['POST', `${SESSIONS}/${id}/cancel`, {}],
    ] as const) {
      const r = await call(b, method, path, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(ucpSchemaErrors(UCP_ERROR_SCHEMA, r.json)).toEqual([]);
      expect(r.json.messages!.map((m) => m.code)).toEqual(['not_found']);
    }
    // Nor on B's guest page: no page; a form token of A's page is refused on B's origin; no code mailed.
    expect((await b.client.get(`/ucp/continue/${id}`)).status).toBe(404);
    const mails = smtp.received.length;
    expect((await guestStep(b.client, B, id, 'send_code')).refusal).toBe('invalid_form_token');
    const token = /name="form_token" value="([^"]+)"/.exec((await a.client.get(`/ucp/continue/${id}`)).text)?.[1];
    expect(token).toBeDefined();
    const replayed = await b.client.request('POST', `/ucp/continue/${id}`, {
      body: new URLSearchParams({ session_id: id, form_token: token!, step: 'send_code' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `https://${B}`, 'sec-fetch-site': 'same-origin' },
    });
    expect(/data-refusal="([a-z_]+)"/.exec(replayed.text)?.[1]).toBe('invalid_form_token');
    expect(smtp.received.length).toBe(mails);
    // A's session is as it was, and still A's to confirm.
    expect(await rows(A)).toEqual(beforeA);
    expect((await session(a, 'GET', `${SESSIONS}/${id}`)).json.status).toBe('requires_escalation');
    expect((await guestStep(a.client, A, id, 'confirm', await codeFor(a, id, email))).sessionStatus).toBe('ready_for_complete');
  });

  it('a disabled tenant takes no session and its sessions answer nothing', async () => {
    const t = await tenant(served, C);
    const off = t.client;
    try {
      const s = stay(40, 2);
      const id = (await session(t, 'POST', SESSIONS, stayRequest(t, s, { offer: await offer(t, s), email: 'off@example.org' }))).json.id;
      await store.setTenantStatus(C, 'disabled');
      const before = await rows(C);
      expect((await call(t, 'POST', SESSIONS, stayRequest(t, s))).status).toBe(421);
      expect((await call(t, 'GET', `${SESSIONS}/${id}`)).status).toBe(421);
      expect((await call(t, 'POST', `${SESSIONS}/${id}/complete`, COMPLETE)).status).toBe(421);
      expect((await off.get(`/ucp/continue/${id}`)).status).toBe(421);
      expect(await rows(C)).toEqual(before);
    } finally {
      await off.close();
    }
  });
}

describe('platform tenants as UCP lodging businesses (SQLite)', () => platformContract('ucp-sqlite', (dir) => sqliteUrl(dir, 'p')));
describe.skipIf(!pg)('platform tenants as UCP lodging businesses (PostgreSQL)', () =>
  platformContract('ucp-pg', () => pg!.schemaUrl('ucpplat')),
);
