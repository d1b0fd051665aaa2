/**
 * A full disk under an `Idempotency-Key` (Booking REST binding, HTTP Headers; Message Signatures,
 * Replay Protection: "on storage failure, fail closed"): with the node's SQLite store out of room
 * (`PRAGMA max_page_count` on the node's own connection: SQLITE_FULL, as on a full disk, the way
 * store-full.test.ts makes one), Create Booking Session with a key is 503 `store_unavailable`
 * whichever write ran out of room (the key's claim, the session, the stored answer). Nothing is
 * claimed for ever and nothing is doubled: once there is room again, the same request with the same
 * key is answered at once (never 409 `idempotency_in_progress`), each key stands for exactly one
 * session, and a further replay gets the stored answer; a Complete refused for want of room completes
 * when retried with its key, with the one reservation its guest's confirmation made.
 * The node's own app over a real SQLite file, asked in process.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createBookingDesk, createNodeApp, createOfferService, initNode, NodeStore, ucpBookingSessions } from '@vrpkit/node';
import { UCP_BOOKING_SESSIONS, UCP_PROFILE_PATH, UCP_REST_BASE_PATH } from '@vrpkit/protocol';
import { dayAfter, tempDir, testClock } from '@vrpkit/testkit/node';
import { ucpRestHeaders, ucpStayRequest } from '@vrpkit/testkit/ucp';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodePaths, storeTargetFor } from '../src/datadir.js';
import { readinessProbe } from '../src/health.js';
import { storeHealth } from '../src/store-health.js';

const DOMAIN = 'idem-full.example';
const START = Date.parse('2027-02-01T09:00:00Z');
const SESSIONS = `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`;
const clock = testClock(START);
const tmp = tempDir('idem-full');
let store: NodeStore;
let app: ReturnType<typeof createNodeApp>;
let desk: ReturnType<typeof createBookingDesk>;
let propertyId = '';

beforeAll(async () => {
  const dataDir = join(tmp.dir, 'node');
  await initNode({ domain: DOMAIN, dataDir, clock });
  store = await NodeStore.open(storeTargetFor(dataDir));
  const service = await createOfferService({ store, keys: nodePaths(dataDir).keys, clock });
  const writes = storeHealth(store, clock, () => {});
  desk = createBookingDesk({ service, store, clock, holdsPerDay: 0, rateLimitPerMinute: 10_000 });
  app = createNodeApp(service, {
    bookings: desk,
    ucp: ucpBookingSessions({ service, store, desk, clock }),
    storeHealth: writes,
    readiness: readinessProbe(store, nodePaths(dataDir).keys, clock, writes),
    canonicalHostOnly: false, // asked in process, without a Host header
  });
  const profile = (await (await ask(UCP_PROFILE_PATH)).json()) as {
    ucp: { capabilities: Record<string, { config?: { property?: { id: string } } }[]> };
  };
  propertyId = profile.ucp.capabilities['dev.vrpkit.lodging']?.[0]?.config?.property?.id ?? '';
});

afterAll(async () => {
  await store?.close();
  tmp.cleanup();
});

const ask = (path: string, init?: RequestInit) => app.request(`https://${DOMAIN}${path}`, init);

/** One Create with `key` for the two-night stay `from` days ahead (the body the same for every try of one key). */
const body = (from: number) =>
  JSON.stringify(
    ucpStayRequest(propertyId, { check_in: dayAfter(START, from), check_out: dayAfter(START, from + 2) }, { email: 'ada@example.org' }),
  );
const create = (key: string, from: number) =>
  ask(SESSIONS, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST'), 'idempotency-key': key },
    body: body(from),
  });

const count = async (table: 'ucp_session' | 'ucp_idempotency') =>
  Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(store.db)).rows[0]!.n);
/** The keys whose claim is held without an answer (a request still running, or one that failed to settle). */
const unsettled = async () =>
  Number((await sql<{ n: number }>`select count(*) as n from ucp_idempotency where answer_status is null`.execute(store.db)).rows[0]!.n);

const setMaxPages = async (pages: number | 'current') => {
  const n = pages === 'current' ? (await sql<{ page_count: number }>`PRAGMA page_count`.execute(store.db)).rows[0]!.page_count : pages;
  await sql.raw(`PRAGMA max_page_count = ${n}`).execute(store.db);
};

/** A session the guest confirmed (its hold made through the node's desk, as the guest page does): its id and hold. */
async function confirmedSession(from: number): Promise<{ id: string; booking: string }> {
  const created = await create(randomUUID(), from);
  expect(created.status).toBe(201);
  const { id, 'dev.vrpkit.lodging': lodging } = (await created.json()) as { id: string; 'dev.vrpkit.lodging': { offer_jws: string } };
  const guest = { name: 'Ada Guest', email: 'ada@example.org' };
  const held = await desk.request({ offer_jws: lodging.offer_jws, guest, idempotency_key: `ucp-${id}` }, '192.0.2.1');
  expect(held.status, JSON.stringify(held).slice(0, 300)).toBe(201);
  const booking = held.ok ? held.body.booking_request.booking_id : '';
  expect(
    await store.updateUcpSession(id, ['requires_escalation'], { status: 'ready_for_complete', booking_id: booking }, clock.now()),
  ).toBeDefined();
  return { id, booking };
}

const complete = (id: string, key: string) =>
  ask(`${SESSIONS}/${id}/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST'), 'idempotency-key': key },
    body: JSON.stringify({ payment: {} }),
  });

describe('a full disk under an Idempotency-Key claim', () => {
  it('fails closed (503 store_unavailable); once there is room the same key is answered at once, one session per key, replays the stored answer', async () => {
    await setMaxPages('current');
    // Sessions fill the pages there are; then every write that needs a new page fails: the claim, the session or its stored answer.
    const tries: { key: string; from: number; status: number }[] = [];
    let refused = 0;
    for (let from = 10; from < 600 && refused < 6; from += 2) {
      const key = randomUUID();
      const res = await create(key, from);
      tries.push({ key, from, status: res.status });
      if (res.status === 201) continue;
      refused++;
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).not.toBeNull();
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
    }
    expect(refused).toBe(6);
    // Fail closed: no key is left claimed by a request that is no longer running.
    expect(await unsettled()).toBe(0);

    await setMaxPages(1_000_000);
    const sessionsBefore = await count('ucp_session');
    const failed = tries.filter((t) => t.status !== 201);
    const ids: string[] = [];
    for (const t of failed) {
      const retry = await create(t.key, t.from);
      expect(retry.status, await retry.clone().text()).toBe(201);
      ids.push(((await retry.json()) as { id: string }).id);
    }
    // Each refused key is one new session now: none was written twice, none half-written before.
    expect(await count('ucp_session')).toBe(sessionsBefore + failed.length);
    expect(new Set(ids).size).toBe(failed.length);
    // Every key (the ones answered before the disk filled included) replays its stored answer, writing nothing.
    for (const [i, t] of failed.entries()) {
      const again = await create(t.key, t.from);
      expect(again.status).toBe(201);
      expect(((await again.json()) as { id: string }).id).toBe(ids[i]);
    }
    expect(await count('ucp_session')).toBe(sessionsBefore + failed.length);
    expect(await unsettled()).toBe(0);
  });

  it('a Complete refused for want of room completes when retried with its key: the one reservation, its answer stored', async () => {
    const ready = [];
    for (let from = 300; from < 320; from += 4) ready.push(await confirmedSession(from));
    await setMaxPages('current');
    const keys = ready.map(() => randomUUID());
    const first = [];
    // Sessions fill the pages there are, then each Complete needs room for its key, its answer or both.
    for (let from = 320; from < 360 && (await create(randomUUID(), from)).status === 201; from += 2);
    for (const [i, r] of ready.entries()) first.push((await complete(r.id, keys[i]!)).status);
    for (const status of first) expect([200, 503]).toContain(status);
    expect(first).toContain(503);
    expect(await unsettled()).toBe(0);

    await setMaxPages(1_000_000);
    for (const [i, r] of ready.entries()) {
      const again = await complete(r.id, keys[i]!);
      expect(again.status).toBe(200);
      const done = (await again.json()) as { status: string; confirmation: { id: string } };
      expect(done.status).toBe('completed');
      expect(done.confirmation.id).toBe(r.booking);
      expect(((await (await complete(r.id, keys[i]!)).json()) as typeof done).confirmation).toEqual(done.confirmation);
    }
    expect(await unsettled()).toBe(0);
  });
});
