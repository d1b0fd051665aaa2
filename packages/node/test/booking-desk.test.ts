/**
 * The booking desk, the node's internal hold store (a confirmed UCP session makes its hold through
 * it), beside a node served over real https: it takes one of the node's own signed offers,
 * re-quotes it live and holds the dates (one transaction), answering with a receipt signed by the
 * node's offer key; concurrent requests for overlapping dates make exactly one hold (SQLite and
 * PostgreSQL); the same idempotency key returns the same hold; every bad input is refused with its
 * stable code and writes nothing. The limits per client address hold on the UCP endpoints (also
 * behind a trusted proxy), and the `/book` form is a thin client of the sessions.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createHardenedFetch } from '@vrpkit/agent';
import {
  createJwsSigner,
  decodeJwsPayload,
  importEd25519PublicKey,
  jwsPayloadJson,
  parseCompactJws,
  sha256Hex,
  verifyEd25519Signature,
} from '@vrpkit/core';
import {
  addCalendarBlock,
  type BookingDesk,
  createBookingDesk,
  createOfferService,
  initNode,
  type NodePublisher,
  NodeStore,
  removeCalendarBlock,
  revokeKey,
  rotateKey,
  type ServedNode,
  serveNode,
  offerFor as serviceOffer,
  storeTargetFor,
  withNodeStore,
} from '@vrpkit/node';
import {
  BOOKING_RECEIPT_TYP,
  BookingReceiptPayloadSchema,
  type BookingRequestView,
  BookingResponseSchema,
  JWKS_PATH,
  MCP_ENDPOINT_PATH,
  OFFER_ENDPOINT_PATH,
  type OfferEnvelope,
  UCP_BOOKING_SESSIONS,
  UCP_REST_BASE_PATH,
  ucpBookingRequest,
  type VrpJwks,
} from '@vrpkit/protocol';
import { type CliRun, listeningEvent, vrpCli } from '@vrpkit/testkit/cli';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { closeTestNode, dayAfter, type NodeClient, nodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { bookFormFields, guestStep, mailedCode, postBookForm, TEST_UCP_AGENT_PROFILE, ucpRestHeaders } from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FORM_TOKEN_TTL_MS } from '../src/http/forms.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const START = Date.parse('2027-02-01T09:00:00Z');
const stay = (from: number, nights: number) => ({ check_in: dayAfter(START, from), check_out: dayAfter(START, from + nights) });
const guest = { name: 'Ada Guest', email: 'ada@example.org', phone: '+44 20 7946 0000' };
const newKey = () => `k-${randomBytes(9).toString('base64url')}`;

/** A booking answer as the client reads it: a success or an error body. */
interface BookingReply {
  booking_request: BookingRequestView;
  receipt_jws: string;
  error: { code: string; message: string };
  current_offer_jws?: string;
}

interface Harness {
  node: ServedNode;
  client: NodeClient;
  clock: ReturnType<typeof testClock>;
  dataDir: string;
  databaseUrl?: string;
  /** A booking desk on the node's own offer service and store (its own connection), as the node's UCP confirmation uses it. */
  desk: BookingDesk;
}

const SESSIONS = `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`;

async function offer(h: Harness, s: { check_in: string; check_out: string }, guests = 2): Promise<OfferEnvelope> {
  const res = await h.client.get(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=${guests}`);
  expect(res.status).toBe(200);
  return JSON.parse(res.text) as OfferEnvelope;
}

/** One booking request to the desk from client `address`: its status, its body or error, the seconds to wait when limited. */
async function book(h: Harness, body: unknown, address = '192.0.2.1') {
  const a = await h.desk.request(body, address);
  if (a.ok) return { status: a.status, retryAfter: undefined, json: a.body as unknown as BookingReply };
  const { code, message, current_offer_jws, retry_after_seconds } = a.error;
  const json = { error: { code, message }, ...(current_offer_jws ? { current_offer_jws } : {}) } as BookingReply;
  return { status: a.status, retryAfter: retry_after_seconds, json };
}

/** Create Booking Session over https, as an agent platform sends it. */
function createSession(client: NodeClient, body: string, contentType = 'application/json') {
  return client.request('POST', SESSIONS, { body, headers: { 'content-type': contentType, ...ucpRestHeaders('POST') } });
}

/** What a refusal must leave untouched: the booking rows, the blocked ranges and the store revision. */
async function written(h: Harness) {
  return withNodeStore({ dataDir: h.dataDir, ...(h.databaseUrl ? { databaseUrl: h.databaseUrl } : {}) }, async (s) => ({
    bookings: (await s.bookingRequests()).length,
    blocks: (await s.listBlocks()).length,
    revision: await s.revision(),
  }));
}

/** Verify a receipt as an agent would: the node's JWKS, EdDSA over the received bytes, then the payload shape. */
async function verifyReceipt(h: Harness, jws: string) {
  const jwks = JSON.parse((await h.client.get(JWKS_PATH)).text) as VrpJwks;
  const parsed = parseCompactJws(jws);
  expect(parsed.ok).toBe(true);
  if (!parsed.ok) throw new Error('unreachable');
  expect(parsed.jws.header).toMatchObject({ alg: 'EdDSA', typ: BOOKING_RECEIPT_TYP });
  const jwk = jwks.keys.find((k) => k.kid === parsed.jws.header.kid);
  expect(jwk).toBeDefined();
  expect(verifyEd25519Signature(parsed.jws.signingInput, parsed.jws.signature, importEd25519PublicKey(jwk)!)).toBe(true);
  return BookingReceiptPayloadSchema.parse(JSON.parse(decodeJwsPayload(parsed.jws.payloadSegment)!));
}

async function startNode(
  label: string,
  domain: string,
  extra: { databaseUrl?: string; bookingRateLimit?: number; bookingHoldsPerDay?: number } = {},
) {
  const tmp = tempDir(label);
  const clock = testClock(START);
  const dataDir = join(tmp.dir, 'node');
  const served = await serveTestNode(domain, dataDir, clock, {
    bookingRateLimit: extra.bookingRateLimit ?? 10_000,
    ...(extra.databaseUrl ? { databaseUrl: extra.databaseUrl } : {}),
  });
  const store = await NodeStore.open(storeTargetFor(dataDir, extra.databaseUrl));
  const desk = createBookingDesk({
    // The served node's own offer service: its keys, its live re-quote.
    service: served.node.service as NodePublisher,
    store,
    clock,
    rateLimitPerMinute: 10_000,
    holdsPerDay: extra.bookingHoldsPerDay ?? 0,
  });
  const h: Harness = { ...served, clock, dataDir, desk, ...(extra.databaseUrl ? { databaseUrl: extra.databaseUrl } : {}) };
  return {
    h,
    close: async () => {
      await store.close();
      await closeTestNode(served, tmp);
    },
  };
}

/** The behaviour every store must give: one hold per stay under concurrency, one hold per idempotency key. */
function holdContract(label: string, databaseUrl: () => string | undefined) {
  let h: Harness;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ h, close } = await startNode(label, `${label}.example`, { ...(databaseUrl() ? { databaseUrl: databaseUrl()! } : {}) }));
  });
  afterAll(() => close?.());

  it('creates a pending hold with a receipt signed by the node offer key, and blocks the dates at once', async () => {
    const s = stay(30, 3);
    const o = await offer(h, s);
    const r = await book(h, { offer_jws: o.signature.jws, guest, idempotency_key: newKey() });
    expect(r.status).toBe(201);
    const body = BookingResponseSchema.parse(r.json);
    expect(body.booking_request).toMatchObject({
      status: 'pending',
      ...s,
      guests: 2,
      total: o.offer.price.agent_total,
      currency: o.offer.price.currency,
    });
    expect(body.booking_request.offer_jws_sha256).toBe(sha256Hex(o.signature.jws));
    expect(Date.parse(body.booking_request.hold_expires_at)).toBe(START + 24 * 3_600_000);
    const receipt = await verifyReceipt(h, body.receipt_jws);
    expect(receipt).toMatchObject({
      canonical_domain: `${label}.example`,
      booking_id: body.booking_request.booking_id,
      status: 'pending',
      stay: { ...s, guests: 2 },
      total: o.offer.price.agent_total,
      offer_jws_sha256: sha256Hex(o.signature.jws),
    });
    // The signed-offer cache served `o` a moment ago; the hold's write moved the revision, so it is not served again.
    const after = await offer(h, s);
    expect(after.offer.availability).toMatchObject({ available: false, reason: 'not_available' });
  });

  it('the same idempotency key returns the same hold; with another body it is a conflict and writes nothing', async () => {
    const o = await offer(h, stay(40, 2));
    const key = newKey();
    const first = await book(h, { offer_jws: o.signature.jws, guest, idempotency_key: key });
    expect(first.status).toBe(201);
    const again = await book(h, { offer_jws: o.signature.jws, guest, idempotency_key: key });
    expect(again.status).toBe(200);
    expect(again.json.booking_request).toEqual(first.json.booking_request);
    const before = await written(h);
    const other = await book(h, { offer_jws: o.signature.jws, guest: { ...guest, name: 'Someone Else' }, idempotency_key: key });
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('BOOKING_IDEMPOTENCY_CONFLICT');
    expect(await written(h)).toEqual(before);
  });

  it('concurrent requests for overlapping dates make exactly one hold', async () => {
    const a = await offer(h, stay(50, 4));
    const b = await offer(h, stay(52, 4));
    const before = await written(h);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => book(h, { offer_jws: (i % 2 ? b : a).signature.jws, guest, idempotency_key: newKey() })),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(409);
      expect(r.json.error.code).toBe('BOOKING_OFFER_CHANGED');
      expect(typeof r.json.current_offer_jws).toBe('string');
    }
    const after = await written(h);
    expect(after.bookings).toBe(before.bookings + 1);
    expect(after.blocks).toBe(before.blocks + 1);
  });

  it('concurrent requests with one idempotency key make one hold, answered to all', async () => {
    const o = await offer(h, stay(60, 2));
    const key = newKey();
    const before = await written(h);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => book(h, { offer_jws: o.signature.jws, guest, idempotency_key: key })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.json.booking_request.booking_id)).size).toBe(1);
    expect((await written(h)).bookings).toBe(before.bookings + 1);
  });
  it('a hold past its expiry frees its nights on the next read (last: it moves the clock)', async () => {
    const s = stay(80, 2);
    const r = await book(h, { offer_jws: (await offer(h, s)).signature.jws, guest, idempotency_key: newKey() });
    expect(r.status).toBe(201);
    h.clock.set(Date.parse(r.json.booking_request.hold_expires_at));
    expect((await offer(h, s)).offer.availability.available).toBe(true);
    const b = await withNodeStore({ dataDir: h.dataDir, ...(h.databaseUrl ? { databaseUrl: h.databaseUrl } : {}) }, (st) =>
      st.bookingRequest(r.json.booking_request.booking_id),
    );
    expect(b?.status).toBe('expired');
  });
}

describe('booking requests on SQLite', () => holdContract('booking-sqlite', () => undefined));

const pgs = pgTestSchemas('booking-desk', 'the booking desk contract on PostgreSQL');
describe.skipIf(!pgs)('booking requests on PostgreSQL', () => {
  const url = pgs?.schemaUrl('booking') ?? '';
  holdContract('booking-pg', () => url);
});

describe('the live re-quote signs only what the answer carries', () => {
  it('a hold signs its receipt alone; a taken stay signs the current offer alone (no receipt)', async () => {
    const tmp = tempDir('booking-signatures');
    const clock = testClock(START);
    const dataDir = join(tmp.dir, 'node');
    await initNode({ domain: 'booking-signatures.example', dataDir, clock });
    const store = await NodeStore.open(storeTargetFor(dataDir));
    try {
      let signatures = 0;
      const service = await createOfferService({ store, keys: join(dataDir, 'keys'), clock, onSignature: () => signatures++ });
      const desk = createBookingDesk({ service, store, clock });
      const o = await serviceOffer(service, { ...stay(30, 3), guests: 2 }, { fresh: true });
      if (!o.ok) throw new Error(o.error.code);
      const offerJws = o.envelope.signature.jws;
      signatures = 0;
      const held = await desk.request({ offer_jws: offerJws, guest, idempotency_key: newKey() }, '192.0.2.1');
      expect(held.status).toBe(201);
      expect(signatures).toBe(1);
      signatures = 0;
      const taken = await desk.request({ offer_jws: offerJws, guest, idempotency_key: newKey() }, '192.0.2.2');
      expect(taken).toMatchObject({ ok: false, status: 409, error: { code: 'BOOKING_OFFER_CHANGED' } });
      expect(signatures).toBe(1);
      const current = parseCompactJws(!taken.ok ? taken.error.current_offer_jws : undefined);
      if (!current.ok) throw new Error('the refusal carries the current offer');
      expect(jwsPayloadJson(current.jws)).toMatchObject({
        request: { check_in: stay(30, 3).check_in, guests: 2 },
        availability: { available: false },
      });
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });
});

describe('bad booking requests are refused with stable codes and write nothing', () => {
  let h: Harness;
  let close: () => Promise<void>;
  const other = tempDir('booking-other');
  let otherJws: string;
  beforeAll(async () => {
    ({ h, close } = await startNode('booking-bad', 'booking-bad.example'));
    // Another node's offer for the same stay, signed with that node's own key.
    const dataDir = join(other.dir, 'node');
    await initNode({ domain: 'another-node.example', dataDir, clock: h.clock });
    const store = await NodeStore.open(storeTargetFor(dataDir));
    try {
      const service = await createOfferService({ store, keys: join(dataDir, 'keys'), clock: h.clock });
      const o = await serviceOffer(service, { ...stay(30, 3), guests: 2 }, { fresh: true });
      if (!o.ok) throw new Error(o.error.code);
      otherJws = o.envelope.signature.jws;
    } finally {
      await store.close();
    }
  });
  afterAll(async () => {
    await close?.();
    other.cleanup();
  });

  /** Send `body` and expect `status` + `code` with the store untouched. */
  async function refused(body: unknown, status: number, code: string) {
    const before = await written(h);
    const r = await book(h, body);
    expect({ status: r.status, code: r.json.error?.code }).toEqual({ status, code });
    expect(typeof r.json.error.message).toBe('string');
    expect(await written(h)).toEqual(before);
    return r;
  }

  it('missing or malformed fields are BOOKING_BAD_REQUEST', async () => {
    const jws = (await offer(h, stay(30, 3))).signature.jws;
    const ok = { offer_jws: jws, guest, idempotency_key: newKey() };
    await refused({}, 400, 'BOOKING_BAD_REQUEST');
    await refused({ ...ok, guest: { name: 'Ada' } }, 400, 'BOOKING_BAD_REQUEST');
    await refused({ ...ok, guest: { ...guest, email: 'not-an-address' } }, 400, 'BOOKING_BAD_REQUEST');
    await refused({ ...ok, idempotency_key: 'short' }, 400, 'BOOKING_BAD_REQUEST');
    await refused({ ...ok, idempotency_key: 'has spaces in it' }, 400, 'BOOKING_BAD_REQUEST');
    await refused({ ...ok, total: 1 }, 400, 'BOOKING_BAD_REQUEST');
    await refused({ ...ok, offer_jws: 'not a jws' }, 400, 'BOOKING_BAD_REQUEST');
    await refused([ok], 400, 'BOOKING_BAD_REQUEST');
    await refused('{"offer_jws":', 400, 'BOOKING_BAD_REQUEST');
    // The message names the field, never the value it held (it may be the guest's).
    const r = await refused({ ...ok, guest: { ...guest, email: 'secret-value' } }, 400, 'BOOKING_BAD_REQUEST');
    expect(r.json.error.message).toContain('guest.email');
    expect(r.json.error.message).not.toContain('secret-value');
  });

  it('a JWS from another node, or with a broken signature, is BOOKING_OFFER_INVALID', async () => {
    await refused({ offer_jws: otherJws, guest, idempotency_key: newKey() }, 422, 'BOOKING_OFFER_INVALID');
    const jws = (await offer(h, stay(30, 3))).signature.jws;
    const [head, payload, sig] = jws.split('.') as [string, string, string];
    const flipped = `${head}.${payload}.${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    await refused({ offer_jws: flipped, guest, idempotency_key: newKey() }, 422, 'BOOKING_OFFER_INVALID');
    // This node's own key over an offer naming another domain is still not this node's offer.
    const kid = JSON.parse(Buffer.from(head, 'base64url').toString()).kid as string;
    const signer = createJwsSigner(JSON.parse(readFileSync(join(h.dataDir, 'keys', `${kid}.jwk`), 'utf8')), kid);
    const foreign = JSON.parse(decodeJwsPayload(payload)!) as OfferEnvelope['offer'];
    const resigned = signer.sign(JSON.stringify({ ...foreign, canonical_domain: 'another-node.example' }), { typ: 'JWT' });
    await refused({ offer_jws: resigned, guest, idempotency_key: newKey() }, 422, 'BOOKING_OFFER_INVALID');
  });

  it('control and bidi-override characters in guest fields are BOOKING_BAD_REQUEST naming the field', async () => {
    const jws = (await offer(h, stay(30, 3))).signature.jws;
    for (const [field, value] of [
      ['name', 'Ada\x1b[2J'],
      ['name', 'Ada \u202eGuest'],
      ['name', 'Ada\u2066Guest'],
      ['name', 'Ada\u0085Guest'],
      ['name', 'Ada\u007fGuest'],
      ['email', 'ada\u202e@example.org'],
      ['phone', '+44 20\u0007 7946'],
    ] as const) {
      const r = await refused(
        { offer_jws: jws, guest: { ...guest, [field]: value }, idempotency_key: newKey() },
        400,
        'BOOKING_BAD_REQUEST',
      );
      expect(r.json.error.message).toContain(`guest.${field}`);
    }
  });

  it('an offer past its valid_until is BOOKING_OFFER_EXPIRED', async () => {
    const o = await offer(h, stay(30, 3));
    h.clock.set(Date.parse(o.offer.valid_until));
    try {
      await refused({ offer_jws: o.signature.jws, guest, idempotency_key: newKey() }, 422, 'BOOKING_OFFER_EXPIRED');
    } finally {
      h.clock.set(START);
    }
  });

  it('a signed negative is BOOKING_OFFER_NOT_BOOKABLE', async () => {
    const negative = await offer(h, stay(30, 3), 50);
    expect(negative.offer.availability).toMatchObject({ available: false, reason: 'exceeds_max_guests' });
    await refused({ offer_jws: negative.signature.jws, guest, idempotency_key: newKey() }, 422, 'BOOKING_OFFER_NOT_BOOKABLE');
  });

  it('a stay blocked since the offer was signed is BOOKING_OFFER_CHANGED with the current signed offer', async () => {
    const s = stay(70, 3);
    const o = await offer(h, s);
    await addCalendarBlock({ dataDir: h.dataDir, from: s.check_in, to: dayAfter(START, 71), clock: h.clock });
    const r = await refused({ offer_jws: o.signature.jws, guest, idempotency_key: newKey() }, 409, 'BOOKING_OFFER_CHANGED');
    const current = JSON.parse(decodeJwsPayload(r.json.current_offer_jws!.split('.')[1]!)!) as OfferEnvelope['offer'];
    expect(current.availability).toMatchObject({ available: false, reason: 'not_available' });
    expect(current.request).toMatchObject(s);
  });

  it('on the UCP endpoints an oversized body is 413 body_too_large, a body that is not JSON 415 unsupported_media_type, writing nothing', async () => {
    const jws = (await offer(h, stay(30, 3))).signature.jws;
    const before = await written(h);
    const big = await createSession(h.client, JSON.stringify({ ...ucpBookingRequest(jws), pad: 'x'.repeat(17 * 1024) }));
    expect({ status: big.status, code: JSON.parse(big.text).messages[0].code }).toEqual({ status: 413, code: 'body_too_large' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const r = await createSession(h.client, JSON.stringify(ucpBookingRequest(jws)), type);
      expect({ status: r.status, code: JSON.parse(r.text).messages[0].code }).toEqual({ status: 415, code: 'unsupported_media_type' });
    }
    expect(await written(h)).toEqual(before);
  });

  it('past the per-address rate limit the UCP endpoints (REST and MCP) answer 429 too_many_requests with when to retry, writing nothing', async () => {
    const limited = await startNode('booking-limit', 'booking-limit.example', { bookingRateLimit: 3 });
    const lh = limited.h;
    const fetch = createHardenedFetch({ connectTo: [`booking-limit.example:443:127.0.0.1:${lh.node.port}`], ca: lh.node.caPem! });
    const mcp = new Client({ name: 'ucp-platform-test', version: '1.0.0' });
    try {
      const jws = (await offer(lh, stay(30, 3))).signature.jws;
      for (let i = 0; i < 3; i++) expect((await createSession(lh.client, '{}')).status).toBe(400);
      const before = await written(lh);
      const r = await createSession(lh.client, JSON.stringify(ucpBookingRequest(jws)));
      expect({ status: r.status, code: JSON.parse(r.text).messages[0].code }).toEqual({ status: 429, code: 'too_many_requests' });
      // RFC 6585 §4: the seconds until the minute's window ends (no clock advanced since it began).
      expect(r.headers.get('retry-after')).toBe('60');
      // Get, the guest page and the /book form count against the same limit.
      const cancel = await lh.client.request('POST', `${SESSIONS}/ucs_none/cancel`, { headers: ucpRestHeaders('POST') });
      expect({ status: cancel.status, retryAfter: cancel.headers.get('retry-after') }).toEqual({ status: 429, retryAfter: '60' });
      // The MCP binding: a JSON-RPC error whose data carries the same seconds (UCP Overview, Error Codes).
      lh.clock.advance(15_000);
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`https://booking-limit.example${MCP_ENDPOINT_PATH}`), {
          fetch,
          requestInit: { headers: { 'ucp-agent': `profile="${TEST_UCP_AGENT_PROFILE}"` } },
        }),
      );
      const refused = await mcp
        .callTool({
          name: 'cancel_booking_session',
          arguments: { meta: { 'ucp-agent': { profile: TEST_UCP_AGENT_PROFILE }, 'idempotency-key': randomUUID() }, id: 'ucs_none' },
        })
        .then(
          () => undefined,
          (e: unknown) => (e instanceof ProtocolError ? e.data : e),
        );
      expect(refused).toMatchObject({ code: 'too_many_requests', retry_after: 45 });
      expect(await written(lh)).toEqual(before);
      // The window is a minute of the node's clock: after it the address is admitted again.
      lh.clock.advance(60_000);
      expect((await createSession(lh.client, JSON.stringify(ucpBookingRequest((await offer(lh, stay(30, 3))).signature.jws)))).status).toBe(
        201,
      );
    } finally {
      await mcp.close();
      await fetch.close();
      await limited.close();
    }
  });
});

describe('holds per client address per day', () => {
  it('past --booking-holds-per-day an address is refused BOOKING_TOO_MANY_HOLDS with the seconds to wait, writing nothing; replays do not count', async () => {
    const { h, close } = await startNode('booking-holds', 'booking-holds.example', { bookingHoldsPerDay: 2 });
    try {
      const request = async (from: number) =>
        book(h, { offer_jws: (await offer(h, stay(from, 2))).signature.jws, guest, idempotency_key: newKey() });
      const firstBody = { offer_jws: (await offer(h, stay(10, 2))).signature.jws, guest, idempotency_key: newKey() };
      expect((await book(h, firstBody)).status).toBe(201);
      // The same request again is the same hold: answered, not counted.
      expect((await book(h, firstBody)).status).toBe(200);
      // A refused request (here: the dates are held, the offer a signed negative) creates no hold and takes no place under the cap.
      expect((await request(10)).status).toBe(422);
      expect((await request(20)).status).toBe(201);
      const before = await written(h);
      const capped = await request(30);
      expect({ status: capped.status, code: capped.json.error.code }).toEqual({ status: 429, code: 'BOOKING_TOO_MANY_HOLDS' });
      expect(capped.retryAfter).toBe(24 * 3600);
      // Another address has its own cap.
      expect(
        (await book(h, { offer_jws: (await offer(h, stay(30, 2))).signature.jws, guest, idempotency_key: newKey() }, '192.0.2.77')).status,
      ).toBe(201);
      expect((await written(h)).bookings).toBe(before.bookings + 1);
      // A day of the node's clock after the first hold, the address may hold again.
      h.clock.advance(24 * 3_600_000);
      expect((await request(40)).status).toBe(201);
    } finally {
      await close();
    }
  });
});

describe('behind a trusted proxy the booking limits key on the forwarded client address', () => {
  const tmp = tempDir('booking-proxy');
  const domain = 'booking-proxy.example';
  const clock = testClock(START);
  let node: ServedNode;
  beforeAll(async () => {
    const dataDir = join(tmp.dir, 'node');
    await initNode({ domain, dataDir, clock });
    node = await serveNode({
      dataDir,
      clock,
      behindProxy: { trustedProxies: ['127.0.0.1'] },
      bookingRateLimit: 2,
    });
  });
  afterAll(async () => {
    await node?.close();
    tmp.cleanup();
  });

  /** A request as the proxy passes it on for `client`. */
  const viaProxy = (
    path: string,
    client: string,
    init: { method?: string; body?: string; contentType?: string; headers?: Record<string, string> } = {},
  ) =>
    fetch(`http://127.0.0.1:${node.port}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        'x-forwarded-proto': 'https',
        'x-forwarded-host': domain,
        // The client's own claim (left) is not believed; the proxy's appended entry (right) is.
        'x-forwarded-for': `203.0.113.250, ${client}`,
        ...(init.contentType ? { 'content-type': init.contentType } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
  const post = (client: string, body: string, contentType = 'application/json') =>
    viaProxy(SESSIONS, client, { method: 'POST', body, contentType, headers: ucpRestHeaders('POST') });
  const code = async (res: Response) => ((await res.json()) as { messages: { code: string }[] }).messages[0]?.code;
  const offerFor = async (from: number) => {
    const s = stay(from, 2);
    const res = await viaProxy(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=2`, '198.51.100.9');
    expect(res.status).toBe(200);
    return ((await res.json()) as OfferEnvelope).signature.jws;
  };

  it('each forwarded client has its own rate limit on the UCP endpoints; refused media types and sizes are not counted', async () => {
    const a = '198.51.100.1';
    const b = '198.51.100.2';
    // Not counted: the wrong media type, an oversized body.
    for (let i = 0; i < 3; i++) expect((await post(a, '{}', 'text/plain')).status).toBe(415);
    expect((await post(a, JSON.stringify({ pad: 'x'.repeat(17 * 1024) }))).status).toBe(413);
    expect((await post(a, JSON.stringify(ucpBookingRequest(await offerFor(10))))).status).toBe(201);
    expect((await post(a, JSON.stringify(ucpBookingRequest(await offerFor(20))))).status).toBe(201);
    // Client a has now made two counted requests this minute: the third is rate limited.
    const limited = await post(a, '{}');
    expect({ status: limited.status, code: await code(limited) }).toEqual({ status: 429, code: 'too_many_requests' });
    // Client b, through the same proxy, has its own limit.
    expect((await post(b, JSON.stringify(ucpBookingRequest(await offerFor(20))))).status).toBe(201);
  });

  it('IPv6 clients count by their /64: a second address of the same /64 shares the limit (issue 36 defect 6, regression)', async () => {
    for (let i = 0; i < 2; i++)
      expect((await post('2001:db8:36:6::1', JSON.stringify(ucpBookingRequest(await offerFor(40))))).status).toBe(201);
    for (const sameSubnet of ['2001:db8:36:6::2', '2001:db8:36:6:ffff:ffff:ffff:fffe']) {
      const capped = await post(sameSubnet, JSON.stringify(ucpBookingRequest(await offerFor(50))));
      expect(capped.status, sameSubnet).toBe(429);
    }
    expect((await post('2001:db8:36:7::1', JSON.stringify(ucpBookingRequest(await offerFor(50))))).status).toBe(201);
  });
});

describe('holds expire and the /book form', () => {
  let h: Harness;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ h, close } = await startNode('booking-expiry', 'booking-expiry.example'));
  });
  afterAll(() => close?.());

  it('an expired hold frees its dates on the next read, and the expiry moves the store revision', async () => {
    const s = stay(20, 2);
    const r = await book(h, { offer_jws: (await offer(h, s)).signature.jws, guest, idempotency_key: newKey() });
    expect(r.status).toBe(201);
    expect((await offer(h, s)).offer.availability.available).toBe(false);
    const before = await written(h);
    h.clock.set(Date.parse(r.json.booking_request.hold_expires_at));
    const after = await offer(h, s);
    expect(after.offer.availability.available).toBe(true);
    const state = await written(h);
    expect(state.revision).toBeGreaterThan(before.revision);
    expect(state.blocks).toBe(before.blocks - 1);
    const b = await withNodeStore({ dataDir: h.dataDir }, (st) => st.bookingRequest(r.json.booking_request.booking_id));
    expect(b?.status).toBe('expired');
  });

  it('an offer signed by a key retired since is still booked (the key is retained); one by a revoked key is not', async () => {
    const a = await offer(h, stay(100, 2));
    const b = await offer(h, stay(110, 2));
    const oldKid = a.signature.kid;
    const opts = { dataDir: h.dataDir, clock: h.clock };
    await rotateKey(opts);
    const retained = await book(h, { offer_jws: a.signature.jws, guest, idempotency_key: newKey() });
    expect(retained.status).toBe(201);
    await revokeKey({ ...opts, kid: oldKid });
    const before = await written(h);
    const revoked = await book(h, { offer_jws: b.signature.jws, guest, idempotency_key: newKey() });
    expect({ status: revoked.status, code: revoked.json.error.code }).toEqual({ status: 422, code: 'BOOKING_OFFER_INVALID' });
    expect(await written(h)).toEqual(before);
    // The receipt of the retained-key booking is signed with the key signing now.
    expect(await verifyReceipt(h, retained.json.receipt_jws)).toMatchObject({ status: 'pending' });
  });

  it("a hold's blocked range is not removed by `calendar unblock` (declining frees it)", async () => {
    const r = await book(h, { offer_jws: (await offer(h, stay(120, 2))).signature.jws, guest, idempotency_key: newKey() });
    await expect(removeCalendarBlock({ dataDir: h.dataDir, id: r.json.booking_request.booking_id })).rejects.toMatchObject({
      code: 'unknown_block',
    });
    expect((await offer(h, stay(120, 2))).offer.availability.available).toBe(false);
  });

  it('a parameter given twice on /book is named as it was sent', async () => {
    const s = stay(90, 3);
    const twice = await h.client.get(`/book?checkIn=${s.check_in}&checkIn=${s.check_in}&checkOut=${s.check_out}&guests=2`);
    expect(twice.status).toBe(400);
    expect(twice.text).toContain('(duplicate_parameter): checkIn given more than once');
    const both = await h.client.get(`/book?check_in=${s.check_in}&checkIn=${s.check_in}&checkOut=${s.check_out}&guests=2`);
    expect(both.text).toContain('(duplicate_parameter): check_in and checkIn given together');
  });

  it('the /book form creates a UCP session from the signed offer it showed and answers 303 to its continue_url; the session blocks nothing', async () => {
    const s = stay(90, 3);
    const o = await offer(h, s);
    const link = new URL(o.offer.booking.direct_booking_url);
    const page = await h.client.get(link.pathname + link.search);
    expect(page.status).toBe(200);
    const form = await bookFormFields(h.client, s);
    const person = { guest_first_name: 'Ada', guest_last_name: 'Guest', guest_email: guest.email, guest_phone: '' };
    for (const [k, v] of Object.entries(person)) form.set(k, v);
    const before = await written(h);
    const res = await postBookForm(h.client, form, { origin: `https://${h.node.canonicalDomain}`, site: 'same-origin' });
    expect(res.status).toBe(303);
    const continueUrl = new URL(res.headers.get('location')!);
    expect(continueUrl.origin).toBe(`https://${h.node.canonicalDomain}`);
    const id = continueUrl.pathname.split('/').pop()!;
    const session = JSON.parse((await h.client.request('GET', `${SESSIONS}/${id}`, { headers: ucpRestHeaders('GET') })).text);
    expect(session).toMatchObject({
      status: 'requires_escalation',
      booker: { email: guest.email },
      'dev.vrpkit.lodging': { offer_jws: form.get('offer_jws') },
    });
    // Until the guest confirms on that page nothing is held.
    expect((await written(h)).bookings).toBe(before.bookings);
    expect((await offer(h, s)).offer.availability.available).toBe(true);
    const incomplete = new URLSearchParams(form);
    incomplete.delete('guest_email');
    const bad = await postBookForm(h.client, incomplete);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('data-code="invalid_request"');
  });

  it('refuses cross-site form posts and posts without the token of a rendered form, writing nothing (issue 36 defect 5, regression)', async () => {
    const s = stay(150, 3);
    const form = await bookFormFields(h.client, s);
    for (const [k, v] of Object.entries({ guest_first_name: 'Ada', guest_last_name: 'Guest', guest_email: guest.email })) form.set(k, v);
    const sessions = async () => withNodeStore({ dataDir: h.dataDir }, async (st) => (await st.ucpSessions()).length);
    const before = { written: await written(h), sessions: await sessions() };
    const refusedWith = async (res: { status: number; text: string }, code: string) => {
      expect({ status: res.status, code: /data-code="([^"]+)"/.exec(res.text)?.[1] }).toEqual({ status: 403, code });
    };
    // The attack: another site's page posts the form (its own, or one rendered for it) in the visitor's browser.
    await refusedWith(await postBookForm(h.client, form, { origin: 'https://evil.example', site: 'cross-site' }), 'cross_site_request');
    await refusedWith(await postBookForm(h.client, form, { origin: 'https://evil.example', site: 'same-site' }), 'cross_site_request');
    await refusedWith(await postBookForm(h.client, form, { origin: 'null', site: 'cross-site' }), 'cross_site_request');
    // Without a form this node rendered: no token, a token of another offer, a forged one, an expired one.
    const noToken = new URLSearchParams(form);
    noToken.delete('form_token');
    await refusedWith(await postBookForm(h.client, noToken), 'invalid_form_token');
    const otherOffer = new URLSearchParams(form);
    otherOffer.set('offer_jws', (await offer(h, stay(160, 2))).signature.jws);
    await refusedWith(await postBookForm(h.client, otherOffer), 'invalid_form_token');
    const forged = new URLSearchParams(form);
    forged.set('form_token', `${form.get('form_token')!.split('.').slice(0, 2).join('.')}.${'A'.repeat(43)}`);
    await refusedWith(await postBookForm(h.client, forged), 'invalid_form_token');
    expect({ written: await written(h), sessions: await sessions() }).toEqual(before);
    h.clock.advance(FORM_TOKEN_TTL_MS + 1000);
    try {
      await refusedWith(
        await postBookForm(h.client, form, { origin: `https://${h.node.canonicalDomain}`, site: 'same-origin' }),
        'invalid_form_token',
      );
    } finally {
      h.clock.advance(-(FORM_TOKEN_TTL_MS + 1000));
    }
    // The node's own page, as the browser reports it, is accepted.
    expect((await postBookForm(h.client, form, { origin: `https://${h.node.canonicalDomain}`, site: 'same-origin' })).status).toBe(303);
  });
});

describe('vrp node serve --workers 2: a hold ends the cached available offer in every worker', () => {
  const tmp = tempDir('booking-workers');
  const dataDir = join(tmp.dir, 'node');
  const domain = 'booking-workers.example';
  let run: CliRun;
  let port: number;
  let ca: string;
  let smtp: TestSmtp;
  beforeAll(async () => {
    await initNode({ domain, dataDir });
    smtp = await startTestSmtp();
    run = vrpCli(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', '--workers', '2', '--smtp-url', smtp.url]);
    const listening = await listeningEvent(run);
    port = listening.port;
    ca = readFileSync(listening.ca, 'utf8');
  }, 120_000);
  afterAll(async () => {
    run?.child.kill('SIGTERM');
    await run?.exited;
    await smtp?.close();
    tmp.cleanup();
  });

  /** GET the stay over `n` fresh connections (the primary hands connections to the workers in turn). */
  async function offersOverFreshConnections(s: { check_in: string; check_out: string }, n: number): Promise<OfferEnvelope[]> {
    const out: OfferEnvelope[] = [];
    for (let i = 0; i < n; i++) {
      const c = nodeClient(domain, port, ca);
      try {
        out.push(JSON.parse((await c.get(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=2`)).text));
      } finally {
        await c.close();
      }
    }
    return out;
  }

  it('after the hold no worker answers with the available offer it cached', async () => {
    const s = { check_in: dayAfter(Date.now(), 25), check_out: dayAfter(Date.now(), 28) };
    const cached = await offersOverFreshConnections(s, 4);
    expect(cached.every((o) => o.offer.availability.available)).toBe(true);
    // The hold a guest's confirmation makes: a session from the cached offer, the mailed code typed back.
    const c = nodeClient(domain, port, ca);
    try {
      const booker = { first_name: 'Ada', last_name: 'Guest', email: guest.email };
      const res = await createSession(c, JSON.stringify(ucpBookingRequest(cached[0]!.signature.jws, { booker })));
      expect(res.status).toBe(201);
      const id = JSON.parse(res.text).id as string;
      const code = await mailedCode(c, domain, smtp, id, guest.email);
      expect((await guestStep(c, domain, id, 'confirm', code)).sessionStatus).toBe('ready_for_complete');
    } finally {
      await c.close();
    }
    const after = await offersOverFreshConnections(s, 4);
    expect(after.map((o) => o.offer.availability.reason)).toEqual(['not_available', 'not_available', 'not_available', 'not_available']);
  });
});
