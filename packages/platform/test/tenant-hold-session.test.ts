/**
 * A tenant's hold made for its UCP session (`TenantBookings.createHold` with a `HoldSession`, node
 * booking/ports.ts): the hold, its nights and the session's move to `ready_for_complete` are one
 * transaction. A write of it refused (a trigger, as a lost connection would at that statement)
 * leaves none of them; a session that moved on (canceled) gets no hold and nothing is written.
 * SQLite and PostgreSQL, the tenant's rows in process.
 */
import { randomBytes } from 'node:crypto';
import { type HoldSession, type NewHold, sampleProperty } from '@vrpkit/node';
import { type PlatformStore, TenantBookings } from '@vrpkit/platform';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { newMasterKey, openInitialised, sqliteUrl, tempDir } from './helpers.js';

const pgs = pgTestSchemas('tenant hold session', 'the PostgreSQL cases (the SQLite cases run)');
const START = Date.parse('2027-02-01T09:00:00Z');
const DOMAIN = 'hold-session.example';
const dir = tempDir('hold-session');

const targets = [
  { name: 'SQLite', skip: false, url: () => sqliteUrl(dir, 'p') },
  { name: 'PostgreSQL', skip: !pgs, url: () => pgs!.schemaUrl('vrp_hold_session') },
];

describe.each(targets)('a tenant’s hold with its session’s move on $name', ({ name, skip, url }) => {
  let store: PlatformStore | undefined;
  let bookings: TenantBookings;
  afterAll(async () => store?.close());

  const setUp = async () => {
    if (store) return;
    const master = newMasterKey();
    store = await openInitialised(url(), master);
    await store.addTenants(master, [{ domain: DOMAIN, property: sampleProperty(START) }]);
    bookings = new TenantBookings(store, DOMAIN, () => {});
  };

  const stay = {
    offer_jws_sha256: '0'.repeat(64),
    property_id: 'p',
    check_in: '2027-03-01',
    check_out: '2027-03-03',
    guests: 2,
    currency: 'EUR',
    total: 20_000,
  };

  /** A session awaiting its guest, and the hold its confirmation would make. */
  async function awaiting(): Promise<{ id: string; hold: NewHold; session: HoldSession }> {
    const id = `ucs_${randomBytes(8).toString('hex')}`;
    const lead = { buyer_email: 'ada@example.org', buyer_name: 'Ada Guest', party_json: null };
    await bookings.insertUcpSession(
      { ...stay, ...lead, session_id: id, status: 'requires_escalation', offer_jws: 'x', expires_at: '2027-12-31T00:00:00Z' },
      START,
    );
    const hold: NewHold = {
      ...stay,
      booking_id: `br_${randomBytes(8).toString('hex')}`,
      idempotency_key: `ucp-${id}`,
      request_sha256: '0'.repeat(64),
      guest_name: lead.buyer_name,
      guest_email: lead.buyer_email,
      guest_phone: null,
      hold_expires_at: '2027-02-02T09:00:00Z',
    };
    const change = { status: 'ready_for_complete', code_sha256: null, code_expires_at: null } as const;
    return { id, hold, session: { id, from: ['requires_escalation'], change } };
  }

  const holds = async () => (await bookings.bookingRequests()).length;

  it.skipIf(skip)('a refused write leaves no hold and the session awaiting; the retry holds and moves it', async () => {
    await setUp();
    const { id, hold, session } = await awaiting();
    const postgres = name === 'PostgreSQL';
    const trigger = postgres
      ? [
          `CREATE OR REPLACE FUNCTION refused_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
          'CREATE TRIGGER refused BEFORE INSERT ON platform_tenant_block FOR EACH ROW EXECUTE FUNCTION refused_write()',
        ]
      : [`CREATE TRIGGER refused BEFORE INSERT ON platform_tenant_block BEGIN SELECT RAISE(ABORT, 'refused'); END`];
    for (const s of trigger) await sql.raw(s).execute(store!.db);
    try {
      await expect(bookings.createHold(hold.idempotency_key, START, () => ({ hold }), session)).rejects.toThrow(/refused/);
    } finally {
      await sql.raw(postgres ? 'DROP TRIGGER refused ON platform_tenant_block' : 'DROP TRIGGER refused').execute(store!.db);
    }
    expect(await bookings.bookingByIdempotencyKey(hold.idempotency_key)).toBeUndefined();
    expect(await bookings.ucpSession(id)).toMatchObject({ status: 'requires_escalation', booking_id: null });
    expect(await bookings.createHold(hold.idempotency_key, START, () => ({ hold }), session)).toMatchObject({ kind: 'created' });
    expect(await bookings.ucpSession(id)).toMatchObject({ status: 'ready_for_complete', booking_id: hold.booking_id });
  });

  it.skipIf(skip)('a session that moved on (canceled) gets no hold: session_moved, nothing written', async () => {
    await setUp();
    const { id, hold, session } = await awaiting();
    await bookings.updateUcpSession(id, ['requires_escalation'], { status: 'canceled' }, START);
    const before = await holds();
    expect(await bookings.createHold(hold.idempotency_key, START, () => ({ hold }), session)).toEqual({ kind: 'session_moved' });
    expect(await holds()).toBe(before);
    expect(await bookings.ucpSession(id)).toMatchObject({ status: 'canceled', booking_id: null });
  });
});
