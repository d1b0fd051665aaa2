/**
 * The booking-request extension over real https: `POST /api/booking-requests` takes one of the
 * node's own signed offers, re-quotes it live and holds the dates (one transaction), answering with
 * a receipt signed by the node's offer key; concurrent requests for overlapping dates make exactly
 * one hold (SQLite and PostgreSQL); the same idempotency key returns the same hold; every bad input
 * is refused with its stable code and writes nothing.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { decodeJwsPayload, importEd25519PublicKey, parseCompactJws, sha256Hex, verifyEd25519Signature } from '@vrpkit/core';
import { type ServedNode, withNodeStore } from '@vrpkit/node';
import {
  BOOKING_RECEIPT_TYP,
  BOOKING_REQUESTS_PATH,
  BookingReceiptPayloadSchema,
  type BookingRequestView,
  BookingResponseSchema,
  JWKS_PATH,
  OFFER_ENDPOINT_PATH,
  type OfferEnvelope,
  type VrpJwks,
} from '@vrpkit/protocol';
import { closeTestNode, dayAfter, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { testPgUrl } from '@vrpkit/testkit/pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

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
}

async function offer(h: Harness, s: { check_in: string; check_out: string }, guests = 2): Promise<OfferEnvelope> {
  const res = await h.client.get(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=${guests}`);
  expect(res.status).toBe(200);
  return JSON.parse(res.text) as OfferEnvelope;
}

async function book(h: Harness, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await h.client.request('POST', BOOKING_REQUESTS_PATH, {
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers,
  });
  return { status: res.status, headers: res.headers, json: JSON.parse(res.text) as BookingReply };
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

async function startNode(label: string, domain: string, extra: { databaseUrl?: string; bookingRateLimit?: number } = {}) {
  const tmp = tempDir(label);
  const clock = testClock(START);
  const dataDir = join(tmp.dir, 'node');
  const served = await serveTestNode(domain, dataDir, clock, {
    bookingRateLimit: extra.bookingRateLimit ?? 10_000,
    ...(extra.databaseUrl ? { databaseUrl: extra.databaseUrl } : {}),
  });
  const h: Harness = { ...served, clock, dataDir, ...(extra.databaseUrl ? { databaseUrl: extra.databaseUrl } : {}) };
  return { h, close: () => closeTestNode(served, tmp) };
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
}

describe('booking requests on SQLite', () => holdContract('booking-sqlite', () => undefined));

const pgUrl = testPgUrl('booking-requests', 'the booking-request contract on PostgreSQL');
describe.skipIf(!pgUrl)('booking requests on PostgreSQL', () => {
  const schema = `booking_${randomBytes(6).toString('hex')}`;
  holdContract('booking-pg', () => `${pgUrl}${pgUrl?.includes('?') ? '&' : '?'}schema=${schema}`);
});
