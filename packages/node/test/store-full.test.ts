/**
 * A store that cannot write (issue 36 defect 13): with the node's SQLite store out of room
 * (`PRAGMA max_page_count` on the node's own connection: SQLITE_FULL, as on a full disk, without
 * filling one), Create Booking Session (`POST /ucp/v1/booking-sessions`) is 503 `store_unavailable`
 * with `Retry-After`, not 500 `internal_error`; the cause is reported once, not per request;
 * `/readyz` says the store cannot write; and once there is room again the next session is written
 * and the node is ready.
 * The node's own app over a real SQLite file, asked in process.
 */
import { join } from 'node:path';
import { createBookingDesk, createNodeApp, createOfferService, initNode, NodeStore, ucpBookingSessions } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope, UCP_BOOKING_SESSIONS, UCP_REST_BASE_PATH, ucpBookingRequest } from '@vrpkit/protocol';
import { dayAfter, tempDir, testClock } from '@vrpkit/testkit/node';
import { ucpRestHeaders } from '@vrpkit/testkit/ucp';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodePaths, storeTargetFor } from '../src/datadir.js';
import { readinessProbe } from '../src/health.js';
import { STORE_OUTAGE_RETRY_AFTER_SECONDS, storeHealth } from '../src/store-health.js';

const DOMAIN = 'store-full.example';
const START = Date.parse('2027-02-01T09:00:00Z');
const clock = testClock(START);
const tmp = tempDir('store-full');
const reported: unknown[] = [];
let store: NodeStore;
let app: ReturnType<typeof createNodeApp>;
let bookings: ReturnType<typeof createBookingDesk>;

beforeAll(async () => {
  const dataDir = join(tmp.dir, 'node');
  await initNode({ domain: DOMAIN, dataDir, clock });
  store = await NodeStore.open(storeTargetFor(dataDir));
  const service = await createOfferService({ store, keys: nodePaths(dataDir).keys, clock });
  const writes = storeHealth(store, clock, (e) => reported.push(e));
  bookings = createBookingDesk({ service, store, clock, holdsPerDay: 0, rateLimitPerMinute: 10_000 });
  app = createNodeApp(service, {
    bookings,
    ucp: ucpBookingSessions({ service, store, desk: bookings, clock }),
    storeHealth: writes,
    readiness: readinessProbe(store, nodePaths(dataDir).keys, clock, writes),
    onError: (e) => reported.push(e),
    canonicalHostOnly: false, // asked in process, without a Host header
  });
});

afterAll(async () => {
  await store?.close();
  tmp.cleanup();
});

const ask = (path: string, init?: RequestInit) => app.request(`https://${DOMAIN}${path}`, init);

/** Ask for the two-night stay (the sample's minimum) `from` days ahead, then create a booking session from it. */
async function bookNight(from: number) {
  const offer = await ask(`${OFFER_ENDPOINT_PATH}?check_in=${dayAfter(START, from)}&check_out=${dayAfter(START, from + 2)}&guests=2`);
  expect(offer.status).toBe(200);
  const { signature } = (await offer.json()) as OfferEnvelope;
  const booker = { first_name: 'Ada', last_name: 'Guest', email: 'ada@example.org' };
  return ask(`${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST') },
    body: JSON.stringify(ucpBookingRequest(signature.jws, { booker })),
  });
}

const setMaxPages = async (pages: number | 'current') => {
  const n = pages === 'current' ? (await sql<{ page_count: number }>`PRAGMA page_count`.execute(store.db)).rows[0]!.page_count : pages;
  await sql.raw(`PRAGMA max_page_count = ${n}`).execute(store.db);
};

describe('a full store (issue 36 defect 13, regression)', () => {
  it('answers 503 store_unavailable with Retry-After, reports the cause once, and /readyz says the store cannot write', async () => {
    expect((await ask('/readyz')).status).toBe(200);
    // No page may be added: sessions fill the pages there are, then the next one needs a new page.
    await setMaxPages('current');
    let night = 10;
    let full: Response | undefined;
    for (; night < 300 && !full; night += 2) {
      const res = await bookNight(night);
      if (res.status !== 201) full = res;
    }
    expect(full?.status).toBe(503);
    expect(full?.headers.get('retry-after')).toBe(String(STORE_OUTAGE_RETRY_AFTER_SECONDS));
    expect(((await full!.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
    // More requests while full: each answered the same, the cause reported only once.
    for (let i = 0; i < 3; i++) expect((await bookNight(night + 2 * i)).status).toBe(503);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ code: 'store_unavailable' });
    expect(String((reported[0] as Error).message)).toContain('SQLITE_FULL');
    const ready = await ask('/readyz');
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { store: unknown } }).checks.store).toEqual({ ok: false, code: 'store_unavailable' });

    // Room again: the next session is written; the hold a guest's confirmation makes (through the
    // node's desk) commits a new store revision, and the store is ready once more.
    await setMaxPages(1_000_000);
    const session = await bookNight(night + 10);
    expect(session.status).toBe(201);
    const { 'dev.vrpkit.lodging': lodging, id } = (await session.json()) as { id: string; 'dev.vrpkit.lodging': { offer_jws: string } };
    const guest = { name: 'Ada Guest', email: 'ada@example.org' };
    expect((await bookings.request({ offer_jws: lodging.offer_jws, guest, idempotency_key: `ucp-${id}` }, '192.0.2.1')).status).toBe(201);
    expect((await ask('/readyz')).status).toBe(200);
  });
});
