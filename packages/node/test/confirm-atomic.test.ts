/**
 * A guest's confirmation of a UCP booking session (ucp/confirm.ts) failing part way: the store
 * refuses one of the confirmation's writes (a trigger in the node's own database, as a lost
 * connection or a full disk would at that statement), one write at a time. Whichever it was, what
 * is left is either no hold and the session still awaiting its guest (the retry with the code holds
 * the nights), or the hold and the session `ready_for_complete` with it: never nights held for a
 * session still awaiting or ended. A session canceled while its guest confirms gets no hold; a hold
 * made without its session's move (by a version that moved the session in a second transaction, its
 * process stopped between the two) is taken by the session at its guest's retry. A Cancel whose
 * session's end is refused after its hold was released leaves an open session with no night held
 * (Complete refuses it), which the retried Cancel ends. SQLite and PostgreSQL, the node's own store
 * in process.
 */
import { join } from 'node:path';
import {
  type BookingDesk,
  type ConfirmationMail,
  createBookingDesk,
  createOfferService,
  type GuestConfirmation,
  guestConfirmation,
  initNode,
  NodeStore,
  ucpBookingSessions,
} from '@vrpkit/node';
import { dayAfter, tempDir, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { ucpStayRequest } from '@vrpkit/testkit/ucp';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { nodePaths, storeTargetFor } from '../src/datadir.js';

const pgs = pgTestSchemas('confirm atomic', 'the PostgreSQL cases (the SQLite cases run)');
const tmp = tempDir('confirm-atomic');
afterAll(() => tmp.cleanup());

const START = Date.parse('2027-03-01T09:00:00Z');
const ADDRESS = '192.0.2.7';
const EMAIL = 'ada@example.org';

/** The confirmation's writes, each refused in turn: the hold's three rows and the session's move. */
const FAULTS = {
  'the hold': { table: 'booking_request', when: 'INSERT', where: null },
  'its nights': { table: 'blocked_range', when: 'INSERT', where: null },
  'the session’s move': { table: 'ucp_session', when: 'UPDATE', where: `NEW.status = 'ready_for_complete'` },
  'its event': { table: 'booking_event', when: 'INSERT', where: null },
} as const;
interface Fault {
  table: string;
  when: 'INSERT' | 'UPDATE';
  where: string | null;
}

const targets = [
  { name: 'SQLite', skip: false, url: () => undefined },
  { name: 'PostgreSQL', skip: !pgs, url: () => pgs!.schemaUrl('vrp_confirm') },
];

describe.each(targets)('a guest’s confirmation failing part way on $name', ({ name, skip, url }) => {
  const clock = testClock(START);
  const codes = new Map<string, string>();
  const postgres = name === 'PostgreSQL';
  let store: NodeStore;
  let desk: BookingDesk;
  let ucp: ReturnType<typeof ucpBookingSessions>;
  let propertyId = '';
  let nextStay = 10;

  const setUp = async () => {
    if (store) return;
    const dataDir = join(tmp.dir, name);
    const databaseUrl = url();
    await initNode({ domain: `confirm-${name.toLowerCase()}.example`, dataDir, clock, ...(databaseUrl ? { databaseUrl } : {}) });
    store = await NodeStore.open(storeTargetFor(dataDir, databaseUrl));
    const service = await createOfferService({ store, keys: nodePaths(dataDir).keys, clock });
    desk = createBookingDesk({ service, store, clock, holdsPerDay: 0, rateLimitPerMinute: 10_000 });
    const mailer = { sendConfirmationCode: async (m: ConfirmationMail) => void codes.set(m.sessionId, m.code) };
    ucp = ucpBookingSessions({ service, store, desk, clock, mailer });
    propertyId = service.property().property_id;
  };
  afterAll(async () => store?.close());

  /** A new session awaiting its guest, its code mailed. */
  async function awaiting(confirmation: GuestConfirmation = ucp.confirmation!): Promise<{ id: string; code: string }> {
    const stay = { check_in: dayAfter(START, nextStay), check_out: dayAfter(START, nextStay + 2) };
    nextStay += 3;
    const body = ucpStayRequest(propertyId, stay, { email: EMAIL });
    const created = await ucp.sessions.run({ operation: 'create', body, requestSha256: '0' });
    expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBe(201);
    const id = (created.body as { id: string }).id;
    expect((await confirmation.sendCode(id)).ok).toBe(true);
    return { id, code: codes.get(id)! };
  }

  /** Refuse `f`'s write from now on (until the returned function runs). */
  async function refuse(f: Fault): Promise<() => Promise<void>> {
    const when = f.where ? ` WHEN (${f.where})` : '';
    if (postgres) {
      await sql
        .raw(`CREATE OR REPLACE FUNCTION refused_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`)
        .execute(store.db);
      await sql
        .raw(`CREATE TRIGGER refused BEFORE ${f.when} ON ${f.table} FOR EACH ROW${when} EXECUTE FUNCTION refused_write()`)
        .execute(store.db);
      return async () => void (await sql.raw(`DROP TRIGGER refused ON ${f.table}`).execute(store.db));
    }
    await sql
      .raw(`CREATE TRIGGER refused BEFORE ${f.when} ON ${f.table}${when} BEGIN SELECT RAISE(ABORT, 'refused'); END`)
      .execute(store.db);
    return async () => void (await sql.raw('DROP TRIGGER refused').execute(store.db));
  }

  /** What the session and its hold are: `none` (no hold, the session awaiting) or `held` (the hold pending, the session ready with it). */
  async function state(id: string): Promise<'none' | 'held'> {
    const session = await store.ucpSession(id);
    const hold = await store.bookingByIdempotencyKey(`ucp-${id}`);
    const nights = (await store.listBlocks()).filter((b) => b.id === hold?.booking_id);
    if (!hold) {
      expect(session).toMatchObject({ status: 'requires_escalation', booking_id: null });
      return 'none';
    }
    expect(hold.status).toBe('pending');
    expect(nights).toHaveLength(1);
    expect(session).toMatchObject({ status: 'ready_for_complete', booking_id: hold.booking_id, code_sha256: null });
    return 'held';
  }

  for (const [write, fault] of Object.entries(FAULTS))
    it.skipIf(skip)(`${write} refused: no hold and the session awaiting; the retry with the code holds the nights for it`, async () => {
      await setUp();
      const { id, code } = await awaiting();
      const restore = await refuse(fault);
      try {
        await expect(ucp.confirmation!.confirm(id, code, ADDRESS)).rejects.toThrow(/refused/);
      } finally {
        await restore();
      }
      expect(await state(id)).toBe('none');
      const retried = await ucp.confirmation!.confirm(id, code, ADDRESS);
      expect(retried.ok, JSON.stringify(retried)).toBe(true);
      expect(await state(id)).toBe('held');
    });

  it.skipIf(skip)('a session canceled while its guest confirms gets no hold (not_awaiting_guest), nothing written', async () => {
    await setUp();
    let cancel = '';
    const canceling = guestConfirmation({
      store,
      desk: {
        canonicalDomain: desk.canonicalDomain,
        admit: (address) => desk.admit(address),
        request: async (...a) => {
          await ucp.sessions.cancel(cancel);
          return desk.request(...a);
        },
      },
      mailer: { sendConfirmationCode: async (m) => void codes.set(m.sessionId, m.code) },
      origin: 'https://confirm.example',
      clock,
      summary: () => 'a stay',
    });
    const { id, code } = await awaiting(canceling);
    cancel = id;
    const blocks = (await store.listBlocks()).length;
    expect(await canceling.confirm(id, code, ADDRESS)).toMatchObject({ ok: false, code: 'not_awaiting_guest' });
    expect(await store.bookingByIdempotencyKey(`ucp-${id}`)).toBeUndefined();
    expect(await store.ucpSession(id)).toMatchObject({ status: 'canceled', booking_id: null });
    expect((await store.listBlocks()).length).toBe(blocks);
  });

  it.skipIf(skip)('a hold made without its session’s move (a process stopped between the two) is the session’s at the retry', async () => {
    await setUp();
    const { id, code } = await awaiting();
    const s = (await store.ucpSession(id))!;
    const guest = { name: s.buyer_name, email: s.buyer_email };
    const held = await desk.request({ offer_jws: s.offer_jws, guest, idempotency_key: `ucp-${id}` }, ADDRESS);
    expect(held.status).toBe(201);
    expect(await store.ucpSession(id)).toMatchObject({ status: 'requires_escalation', booking_id: null });
    const retried = await ucp.confirmation!.confirm(id, code, ADDRESS);
    expect(retried).toMatchObject({ ok: true, session: { status: 'ready_for_complete' } });
    expect(await state(id)).toBe('held');
    expect((await store.ucpSession(id))?.booking_id).toBe(held.ok ? held.body.booking_request.booking_id : '');
  });

  it.skipIf(skip)('a Cancel failing after its hold was released: no night held, Complete refused, the retried Cancel ends it', async () => {
    await setUp();
    const { id, code } = await awaiting();
    expect((await ucp.confirmation!.confirm(id, code, ADDRESS)).ok).toBe(true);
    expect(await state(id)).toBe('held');
    const restore = await refuse({ table: 'ucp_session', when: 'UPDATE', where: `NEW.status = 'canceled'` });
    try {
      await expect(ucp.sessions.cancel(id)).rejects.toThrow(/refused/);
    } finally {
      await restore();
    }
    const hold = (await store.bookingByIdempotencyKey(`ucp-${id}`))!;
    expect(hold.status).toBe('declined');
    expect((await store.listBlocks()).filter((b) => b.id === hold.booking_id)).toHaveLength(0);
    expect(await store.ucpSession(id)).toMatchObject({ status: 'ready_for_complete', booking_id: hold.booking_id });
    const complete = await ucp.sessions.run({ operation: 'complete', id, body: { payment: {} }, requestSha256: '1' });
    expect(JSON.stringify(complete.body)).toContain('hold_released');
    expect((await store.ucpSession(id))?.status).toBe('ready_for_complete');
    const canceled = await ucp.sessions.cancel(id);
    expect(canceled).toMatchObject({ status: 200, applied: true });
    expect(await store.ucpSession(id)).toMatchObject({ status: 'canceled' });
  });
});
