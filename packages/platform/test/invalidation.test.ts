/**
 * Tenant state kept in memory by two serving processes (two `servePlatform`, each on its own pool
 * and its own LISTEN connection) against one PostgreSQL schema (tenant-watch.ts): a disable and a
 * key revocation made by a third store are honoured by both within the invalidation window and
 * never after `setTenantStatus` / `revokeTenantKey` returns; while a process's listener is down it
 * reads the tenant per request (fail closed), and after it reconnects it serves from memory again.
 */
import { join } from 'node:path';
import { sampleProperty } from '@vrpkit/node';
import { PlatformStore, type ServedPlatform, servePlatform } from '@vrpkit/platform';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMasterKey, openInitialised, tempDir, tenantGet } from './helpers.js';

const pgs = pgTestSchemas('platform invalidation', 'tenant state in memory under LISTEN/NOTIFY, two serving processes');
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
let stay = 0;
/** A fresh stay each time: every answer is signed now, never served from the offer cache. */
const freshOffer = () => {
  stay = (stay + 1) % 300;
  return `${OFFER_ENDPOINT_PATH}?check_in=${day(20 + stay)}&check_out=${day(22 + stay)}&guests=2`;
};
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One answer of a loop: which server, when its request started and ended (performance.now()), its status and the signing kid. */
type Answer = { server: number; started: number; ended: number; status: number; kid?: string };

describe.skipIf(!pgs)('tenant state in memory, two serving processes on one PostgreSQL', () => {
  const tmp = tempDir('platform-invalidation');
  const master = newMasterKey();
  const domains = ['inv-a.example', 'inv-b.example', 'inv-c.example'];
  const stores: PlatformStore[] = [];
  const servers: ServedPlatform[] = [];
  let role = '';
  let writer: PlatformStore;
  const get = (server: number, domain: string, path: string) =>
    tenantGet(servers[server]!.port, servers[0]!.caPem!, domain, path, { keepAlive: true });

  /** Fresh offers for `domain` from both servers in a loop until `stop()`, every answer recorded. */
  const loop = (domain: string) => {
    const answers: Answer[] = [];
    let running = true;
    const lane = async (server: number) => {
      while (running) {
        const started = performance.now();
        const r = await get(server, domain, freshOffer());
        const kid = r.status === 200 ? (JSON.parse(r.text) as OfferEnvelope).signature.kid : undefined;
        answers.push({ server, started, ended: performance.now(), status: r.status, ...(kid ? { kid } : {}) });
      }
    };
    const lanes = Promise.all([0, 1, 0, 1].map(lane));
    return {
      answers,
      async stop() {
        running = false;
        await lanes;
        return answers;
      },
    };
  };

  beforeAll(async () => {
    // A role of its own, so the listener test can lock it out (new connections refused) without touching others.
    const owned = await pgs!.ownedSchema('platinv');
    role = owned.role;
    // Opening a store runs CREATE SCHEMA IF NOT EXISTS, which needs CREATE on the database (revoked after, so the role can be dropped).
    await pgs!.query(`GRANT CREATE ON DATABASE "${new URL(pgs!.url).pathname.slice(1)}" TO "${role}"`);
    const url = `${owned.url}?schema=${owned.schema}`;
    writer = await openInitialised(url, master);
    await writer.addTenants(
      master,
      domains.map((domain) => ({ domain, property: sampleProperty(Date.now()) })),
    );
    for (let i = 0; i < 2; i++) {
      const store = await PlatformStore.open(url, { poolSize: 4 });
      stores.push(store);
      servers.push(await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, 'dev') }, onError: () => {} }));
    }
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const s of [...stores, writer]) await s?.close();
    if (role) await pgs!.query(`REVOKE CREATE ON DATABASE "${new URL(pgs!.url).pathname.slice(1)}" FROM "${role}"`);
  });

  it('a disable is honoured by both processes within the window and never after it returns; an enable brings the tenant back', async () => {
    const domain = domains[0]!;
    for (const s of [0, 1]) expect((await get(s, domain, freshOffer())).status).toBe(200);
    const l = loop(domain);
    await wait(300);
    const called = performance.now();
    await writer.setTenantStatus(domain, 'disabled');
    const returned = performance.now();
    await wait(300);
    const answers = await l.stop();
    // Never after it returned: every request started after that was refused (421, no tenant data).
    const after = answers.filter((a) => a.started >= returned);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((a) => a.status !== 421)).toEqual([]);
    // Within the window: each process refused from a moment well before the wait ended, and served nothing after.
    for (const s of [0, 1]) {
      const mine = answers.filter((a) => a.server === s && a.started >= called);
      const firstRefused = mine.find((a) => a.status === 421)!;
      expect(firstRefused, `server ${s}`).toBeDefined();
      expect(mine.filter((a) => a.started > firstRefused.ended && a.status !== 421)).toEqual([]);
      // Seen by notification, long before the window ran out (the window is the bound for a process whose listener lags).
      expect(firstRefused.ended - called).toBeLessThan(1000);
    }
    await writer.setTenantStatus(domain, 'active');
    for (const s of [0, 1]) expect((await get(s, domain, freshOffer())).status).toBe(200);
  }, 60_000);

  it('a revoked key never signs on either process after `revokeTenantKey` returns; both sign with its replacement', async () => {
    const domain = domains[1]!;
    const first = JSON.parse((await get(0, domain, freshOffer())).text) as OfferEnvelope;
    const kid = first.signature.kid;
    expect((await get(1, domain, freshOffer())).status).toBe(200);
    const l = loop(domain);
    await wait(300);
    const called = performance.now();
    const { new_active_kid } = await writer.revokeTenantKey(master, domain, kid);
    const returned = performance.now();
    await wait(300);
    const answers = await l.stop();
    // A request in flight when a process learnt of the revocation may be refused (503, fail closed); none after it returned.
    expect(answers.filter((a) => a.status !== 200 && (a.status !== 503 || a.ended >= returned))).toEqual([]);
    // Every offer signed by the revoked key was answered before the revocation returned (so signed before it).
    const revoked = answers.filter((a) => a.kid === kid);
    expect(revoked.filter((a) => a.ended >= returned)).toEqual([]);
    for (const s of [0, 1]) {
      const mine = answers.filter((a) => a.server === s && a.started >= called);
      expect(mine.some((a) => a.kid === new_active_kid)).toBe(true);
      expect(mine.filter((a) => a.started >= returned && a.kid !== new_active_kid)).toEqual([]);
    }
  }, 60_000);

  it('while the listener is down each request reads its tenant (a disable is honoured at once); after it reconnects memory serves again', async () => {
    const domain = domains[2]!;
    for (const s of [0, 1]) expect((await get(s, domain, freshOffer())).status).toBe(200);
    // New connections of this role are refused, then its listening connections cut: the listeners cannot come back.
    await pgs!.query(`ALTER ROLE "${role}" NOLOGIN`);
    try {
      await pgs!.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}' and application_name like 'vrpkit_platform_%_listen'`,
      );
      await wait(300);
      // Straight in SQL: no wait for the window, so only a per-request read can honour it.
      const c = await pgs!.client(role);
      await c.query(`update platform_tenant set status = 'disabled', revision = revision + 1 where domain = $1`, [domain]);
      await c.end();
      for (const s of [0, 1]) expect((await get(s, domain, freshOffer())).status).toBe(421);
    } finally {
      await pgs!.query(`ALTER ROLE "${role}" LOGIN`);
    }
    await writer.setTenantStatus(domain, 'active');
    for (const s of [0, 1]) expect((await get(s, domain, freshOffer())).status).toBe(200);
    // Reconnected (within its backoff, at most 2 s): listening again, each process serves the tenant from memory.
    const listening = async () =>
      Number(
        (
          await pgs!.query<{ n: string }>(
            `select count(*) as n from pg_stat_activity where usename = '${role}' and application_name like 'vrpkit_platform_%_listen'`,
          )
        )[0]!.n,
      );
    const until = Date.now() + 10_000;
    while ((await listening()) < 2 && Date.now() < until) await wait(100);
    expect(await listening()).toBe(2);
  }, 60_000);
});
