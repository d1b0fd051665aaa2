/**
 * PostgreSQL connections lost under a tenant's UCP booking sessions: while an agent creates sessions
 * and completes confirmed ones (each with an Idempotency-Key) and guests confirm on the tenant's
 * page, the server terminates every connection the platform holds (`pg_terminate_backend`, what a
 * restart or a failover does to a client), again and again. Each request is answered as if nothing
 * happened or fails closed with a stable code (503 `store_unavailable`, or the tenant's
 * `tenant_state_stale`), never 500; once the database is back each request retried as a client
 * would (the same key) goes through: each key stands for one session, each Complete for the one
 * reservation its confirmation made, with a receipt that verifies; no night is held twice and
 * nothing is half-written (every hold is its session's, no key left claimed).
 * A platform served in process over https (dev CA) on the test PostgreSQL, a real local SMTP server.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { sampleProperty } from '@vrpkit/node';
import type { PlatformStore, ServedPlatform } from '@vrpkit/platform';
import { JWKS_PATH, UCP_PROFILE_PATH, type VrpJwks } from '@vrpkit/protocol';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { dayAfter, type NodeClient, nodeClient, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import {
  expectCompletedWithReceipt,
  expectNoNightHeldTwice,
  guestStep,
  mailedCode,
  UCP_SESSIONS_PATH,
  type UcpCompletedView,
  ucpCall,
  ucpStayRequest,
} from '@vrpkit/testkit/ucp';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMasterKey, openInitialised, serveBookingPlatform, tempDir } from './helpers.js';

const pgs = pgTestSchemas('pg booking loss', 'the PostgreSQL connection loss test of a tenant’s booking sessions');
/** Every connection of this file's platform carries this `application_name`: the test cuts only its own. */
const APP = `bookloss_${randomBytes(4).toString('hex')}`;
const TENANT = 'bookloss.example';
const START = Date.parse('2027-02-01T09:00:00Z');
const COMPLETE = { payment: {} };
/** A claim older than this is taken over (node ucp/idempotency.ts IDEMPOTENCY_STALE_CLAIM_MS, with a second to spare). */
const STALE_CLAIM_MS = 61_000;
const stayAt = (from: number) => ({ check_in: dayAfter(START, from), check_out: dayAfter(START, from + 2) });
const email = (n: number) => `guest${n}@example.org`;

type View = UcpCompletedView;
/** What one request ended with: its status and text, or the error of a request that got no answer. */
type Outcome = { status: number; text: string };

describe.skipIf(!pgs)('PostgreSQL connections lost under a tenant’s booking sessions', () => {
  const clock = testClock(START);
  let store: PlatformStore;
  let served: ServedPlatform;
  let smtp: TestSmtp;
  let client: NodeClient;
  let propertyId = '';

  beforeAll(async () => {
    const dir = tempDir('pg-booking-loss');
    const master = newMasterKey();
    smtp = await startTestSmtp();
    const url = new URL(pgs!.schemaUrl('bookloss'));
    url.searchParams.set('application_name', APP);
    store = await openInitialised(url.toString(), master, { clock });
    await store.addTenants(master, [{ domain: TENANT, property: sampleProperty(START) }]);
    served = await serveBookingPlatform(store, master, dir, clock, smtp.url);
    client = nodeClient(TENANT, served.port, served.caPem!);
    const profile = JSON.parse((await client.get(UCP_PROFILE_PATH)).text) as {
      ucp: { capabilities: Record<string, { config?: { property?: { id: string } } }[]> };
    };
    propertyId = profile.ucp.capabilities['dev.vrpkit.lodging']![0]!.config!.property!.id;
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await served?.close();
    await store?.close();
    await smtp?.close();
  });

  const create = (n: number, from: number, key: string) =>
    ucpCall<View>(client, 'POST', UCP_SESSIONS_PATH, ucpStayRequest(propertyId, stayAt(from), { email: email(n) }), {
      'idempotency-key': key,
    });
  const complete = (id: string, key: string) =>
    ucpCall<View>(client, 'POST', `${UCP_SESSIONS_PATH}/${id}/complete`, COMPLETE, { 'idempotency-key': key });
  const getSession = async (id: string) => (await ucpCall<View>(client, 'GET', `${UCP_SESSIONS_PATH}/${id}`)).json;
  const confirm = async (id: string, n: number, code?: string) =>
    guestStep(client, TENANT, id, 'confirm', code ?? (await mailedCode(client, TENANT, smtp, id, email(n))));

  /** Terminate every connection the platform holds now: the number cut. */
  async function cut(): Promise<number> {
    const rows = await pgs!.query<{ n: string }>(
      `select count(pg_terminate_backend(pid)) as n from pg_stat_activity where application_name = '${APP}' and pid <> pg_backend_pid()`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** A request's outcome, a lost answer included (a request never gets to the store without an answer here). */
  const outcome = (p: Promise<{ status: number; text?: string; json?: unknown }>): Promise<Outcome> =>
    p.then(
      (r) => ({ status: r.status, text: r.text ?? JSON.stringify(r.json) }),
      (e: unknown) => ({ status: 0, text: String(e) }),
    );

  /** Answered, or failed closed with a stable code: never 500, never a lost answer. */
  const expectAnsweredOrFailedClosed = (o: Outcome) => {
    if (o.status === 200 || o.status === 201) return;
    expect(o.status, o.text.slice(0, 300)).toBe(503);
    expect(o.text).toMatch(/store_unavailable|tenant_state_stale/);
  };

  /** Retry `fn` while it fails closed (503), as the answer's Retry-After asks, for at most ~10 s. */
  async function untilServed<T extends { status: number }>(fn: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      const r = await fn();
      if (r.status !== 503 || i === 50) return r;
      await new Promise((done) => setTimeout(done, 200));
    }
  }

  it('fails closed while its connections are cut; after recovery every session completes once, nothing doubled or half-written', async () => {
    // Before the loss: three sessions confirmed (to complete), three awaiting their guest's code (to confirm).
    const waiting: { id: string; code: string; n: number }[] = [];
    for (let n = 0; n < 6; n++) {
      const c = await create(n, 10 + 3 * n, randomUUID());
      expect(c.status).toBe(201);
      waiting.push({ id: c.json.id, code: await mailedCode(client, TENANT, smtp, c.json.id, email(n)), n });
    }
    const ready = waiting.slice(0, 3);
    for (const s of ready) expect((await confirm(s.id, s.n, s.code)).sessionStatus).toBe('ready_for_complete');
    const completeKeys = ready.map(() => randomUUID());
    const creates = Array.from({ length: 6 }, (_, i) => ({ n: 20 + i, from: 40 + 3 * i, key: randomUUID() }));

    // The burst, with every platform connection terminated at its start and every 20 ms while it runs.
    let running = true;
    let cuts = 0;
    const cutter = (async () => {
      for (let i = 0; running && i < 100; i++) {
        cuts += await cut();
        await new Promise((done) => setTimeout(done, 20));
      }
    })();
    const answers = await Promise.all([
      ...creates.map((c) => outcome(create(c.n, c.from, c.key))),
      ...ready.map((s, i) => outcome(complete(s.id, completeKeys[i]!))),
      ...waiting.slice(3).map((s) => outcome(confirm(s.id, s.n, s.code))),
    ]);
    running = false;
    await cutter;
    expect(cuts).toBeGreaterThan(0);
    for (const o of answers) expectAnsweredOrFailedClosed(o);

    // Back: a claim the loss left unsettled is stale a minute on (the test's clock), and every retry goes through.
    clock.advance(STALE_CLAIM_MS);
    const jwks = JSON.parse((await untilServed(() => client.get(JWKS_PATH))).text) as VrpJwks;
    const assertCompleted = (v: View) => expectCompletedWithReceipt(v, { jwks, domain: TENANT, clock });
    for (const [i, c] of creates.entries()) {
      const again = await untilServed(() => create(c.n, c.from, c.key));
      expect(again.status).toBe(201);
      if (answers[i]!.status === 201) expect(again.json.id).toBe((JSON.parse(answers[i]!.text) as View).id);
    }
    for (const [i, s] of ready.entries()) {
      const again = await untilServed(() => complete(s.id, completeKeys[i]!));
      expect(again.status).toBe(200);
      await assertCompleted(again.json);
    }
    for (const s of waiting.slice(3)) {
      if ((await getSession(s.id)).status === 'requires_escalation')
        expect((await untilServed(() => confirm(s.id, s.n))).sessionStatus).toBe('ready_for_complete');
      await assertCompleted((await untilServed(() => complete(s.id, randomUUID()))).json);
    }

    // In the store: one session per key (per stay asked), no night held twice, every hold its session's, no key left claimed.
    const sessions = await store.db
      .selectFrom('platform_tenant_ucp_session')
      .select(['session_id', 'status', 'booking_id', 'check_in'])
      .where('domain', '=', TENANT)
      .execute();
    for (const c of creates) expect(sessions.filter((s) => s.check_in === stayAt(c.from).check_in)).toHaveLength(1);
    const holds = await store.db
      .selectFrom('platform_tenant_booking')
      .select(['booking_id', 'idempotency_key', 'check_in', 'check_out'])
      .where('domain', '=', TENANT)
      .where('status', 'in', ['pending', 'confirmed'])
      .execute();
    expectNoNightHeldTwice(holds);
    for (const h of holds) {
      const s = sessions.find((x) => `ucp-${x.session_id}` === h.idempotency_key);
      expect(s?.booking_id).toBe(h.booking_id);
      expect(s?.status).toBe('completed');
    }
    const claimed = await sql<{ n: string }>`select count(*) as n from platform_tenant_ucp_idempotency where answer_status is null`.execute(
      store.db,
    );
    expect(Number(claimed.rows[0]!.n)).toBe(0);
  }, 90_000);
});
