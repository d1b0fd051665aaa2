/**
 * `vrp platform sync-worker`: tenants' iCal feeds imported by workers that lease feeds from the
 * database. Real parts throughout: local https feed servers with their own test CA (on 127.0.0.1
 * and on 127.0.0.2, a second loopback host that always fails), the real CLI in child processes,
 * SQLite files and, when `VRPKIT_TEST_PG_URL` is set, PostgreSQL.
 *
 * - SQLite, in process: a failed or stale feed makes THAT tenant's offers non-quoteable (the
 *   single node's `calendar_stale` negative, over the platform's https serving), never another
 *   tenant's; a failure backs off; metrics and logs carry no feed token.
 * - SQLite, two worker processes: each feed is fetched exactly once.
 * - PostgreSQL, two worker processes, 1,000 feeds: each feed fetched exactly once per cycle, the
 *   failing host backs off, the per-host limit holds, and a worker SIGKILLed mid-lease loses nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpGet } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createDevCa, type FeedRecorder, issueServerCertificate, offerFor, type PemKeyPair, sampleProperty, syncFeed } from '@vrpkit/node';
import {
  openTenantNode,
  PlatformStore,
  PublicFeedAgent,
  type ServedPlatform,
  type SyncLogEntry,
  SyncMetrics,
  servePlatform,
  startAdminListener,
  startSyncWorker,
  syncLagSeconds,
  type TenantNode,
} from '@vrpkit/platform';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { type CliRun, runVrpInProcess, vrpCli } from '@vrpkit/testkit/cli';
import { blockingFeed, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMasterKey, openInitialised, sqliteUrl, tempDir, tenantGet } from './helpers.js';

const pgs = pgTestSchemas('platform sync-worker', 'the PostgreSQL run: 1,000 feeds, two worker processes, one SIGKILLed mid-lease');
const NOW = Date.now();
const day = (n: number) => new Date(NOW + n * 86_400_000).toISOString().slice(0, 10);
const compact = (d: string) => d.replaceAll('-', '');
/** Every feed blocks the nights from day +40 to day +42. */
const ICS = blockingFeed(day(40), day(42));
const master = newMasterKey();
const tmp = tempDir('platform-sync');

/**
 * A feed host: counts requests per path and the peak of requests in flight; answers 503 when
 * `failing`; holds the response of a path in `held` until `release()` (for in-flight leases);
 * answers a path in `answers` with that status, body and headers instead of the shared feed.
 */
interface FeedHost {
  host: string;
  port: number;
  counts: Map<string, number>;
  inFlight: number;
  peak: number;
  holding: number;
  hold: Set<string>;
  answers: Map<string, { status: number; body: string; headers?: Record<string, string> }>;
  release(): void;
  url(path: string): string;
  close(): Promise<void>;
}

async function startFeedHost(cert: PemKeyPair, host: string, failing: boolean): Promise<FeedHost> {
  const waiting: (() => void)[] = [];
  const h: FeedHost = {
    host,
    port: 0,
    counts: new Map(),
    inFlight: 0,
    peak: 0,
    holding: 0,
    hold: new Set(),
    answers: new Map(),
    release() {
      h.hold.clear();
      for (const w of waiting.splice(0)) w();
    },
    url: (path) => `https://${host}:${h.port}${path}?token=secret-${path.length}x`,
    close: async () => {},
  };
  const server: Server = createHttpsServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    h.counts.set(path, (h.counts.get(path) ?? 0) + 1);
    h.peak = Math.max(h.peak, ++h.inFlight);
    res.on('close', () => h.inFlight--);
    const own = h.answers.get(path);
    const answer = () =>
      own
        ? res.writeHead(own.status, { 'content-type': 'text/calendar', ...own.headers }).end(own.body)
        : failing
          ? res.writeHead(503).end('down')
          : res.writeHead(200, { 'content-type': 'text/calendar' }).end(ICS);
    if (!h.hold.has(path)) return answer();
    h.holding++;
    waiting.push(() => {
      h.holding--;
      if (!res.destroyed) answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  h.port = (server.address() as AddressInfo).port;
  h.close = () =>
    new Promise<void>((r) => {
      h.release();
      server.closeAllConnections();
      server.close(() => r());
    });
  return h;
}

let caFile = '';
let okHost: FeedHost;
let downHost: FeedHost;
beforeAll(async () => {
  const ca = await createDevCa({ commonName: 'platform feed test CA' });
  caFile = join(tmp, 'feed-ca.pem');
  writeFileSync(caFile, ca.certPem);
  okHost = await startFeedHost(await issueServerCertificate(ca, ['127.0.0.1', 'localhost']), '127.0.0.1', false);
  downHost = await startFeedHost(await issueServerCertificate(ca, ['127.0.0.2']), '127.0.0.2', true);
});
afterAll(async () => {
  await okHost?.close();
  await downHost?.close();
});

const plainGet = (port: number, path: string) =>
  new Promise<string>((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });

async function waitFor(done: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sync worker on SQLite: freshness per tenant, fail closed', () => {
  const dbUrl = sqliteUrl(tmp, 'fresh');
  const clock = testClock(NOW);
  let store: PlatformStore;
  let served: ServedPlatform;
  const A = 'villa-a.example';
  const B = 'villa-b.example';
  const offer = async (domain: string, from: number, to: number) => {
    const r = await tenantGet(
      served.port,
      served.caPem!,
      domain,
      `${OFFER_ENDPOINT_PATH}?check_in=${day(from)}&check_out=${day(to)}&guests=2`,
    );
    expect(r.status).toBe(200);
    return (JSON.parse(r.text) as OfferEnvelope).offer;
  };

  beforeAll(async () => {
    store = await openInitialised(dbUrl, master);
    await store.addTenants(
      master,
      [A, B].map((domain) => ({ domain, property: sampleProperty(NOW) })),
    );
    await store.addTenantFeeds([
      { domain: A, name: 'other-channel', url: downHost.url('/a.ics') },
      { domain: B, name: 'other-channel', url: okHost.url('/b.ics') },
    ]);
    served = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, 'dev-tls') }, clock });
  });
  afterAll(async () => {
    await served?.close();
    await store?.close();
  });

  it('a feed never synced makes its tenant non-quoteable, as on a single node', async () => {
    for (const d of [A, B])
      expect((await offer(d, 20, 23)).availability).toMatchObject({
        available: false,
        reason: 'calendar_stale',
        calendar_freshness: { safe: false, stale_sources: ['other-channel'], reason: 'calendar_feed_stale' },
      });
  });

  it("a failed feed fails closed for its tenant only; the healthy tenant's blocks arrive in one revision bump", async () => {
    const before = (await store.tenantHead(B))!.revision;
    const metrics = new SyncMetrics(() => syncLagSeconds(store));
    expect(await syncLagSeconds(store)).toBeGreaterThanOrEqual(0);
    const logs: SyncLogEntry[] = [];
    const worker = startSyncWorker({
      store,
      once: true,
      allowPrivateFeeds: true,
      ca: [readFileSync(caFile, 'utf8')],
      metrics,
      log: (e) => logs.push(e),
    });
    expect(await worker.done).toEqual({ ok: 1, failed: 1, lease_lost: 0, released: 0 });
    expect((await store.tenantHead(B))!.revision).toBe(before + 1);

    const a = await offer(A, 20, 23);
    expect(a.availability).toMatchObject({
      available: false,
      reason: 'calendar_stale',
      calendar_freshness: { safe: false, error_sources: ['other-channel'], reason: 'calendar_feed_failed' },
    });
    expect(a.agent_permission.may_quote_as_official_direct_offer).toBe(false);
    const b = await offer(B, 20, 23);
    expect(b.availability).toMatchObject({ available: true, calendar_freshness: { safe: true, error_sources: [], stale_sources: [] } });
    expect((await offer(B, 40, 43)).availability).toMatchObject({ available: false, reason: 'not_available' });

    // Logs and metrics: the outcome per feed, the URL without its token.
    expect(logs.map((l) => [l.tenant, l.outcome]).sort()).toEqual([
      [A, 'failed'],
      [B, 'ok'],
    ]);
    expect(JSON.stringify(logs)).not.toContain('secret-');
    expect(logs.find((l) => l.tenant === A)?.error?.code).toBe('feed_http_error');
    const admin = await startAdminListener({ host: '127.0.0.1', port: 0 }, metrics.registry, async () => true);
    try {
      const text = await plainGet(admin.port, '/metrics');
      expect(text).toMatch(/vrp_platform_feed_fetches_total\{outcome="ok"\} 1/);
      expect(text).toMatch(/vrp_platform_feed_fetches_total\{outcome="failed"\} 1/);
      expect(text).toMatch(/vrp_platform_feed_sync_failures_total 1/);
      expect(text).toMatch(/vrp_platform_feed_sync_lag_seconds 0/);
      expect(await plainGet(admin.port, '/healthz')).toContain('ok');
    } finally {
      await admin.close();
    }
  });

  it('the failed feed backs off (not fetched again at once); the healthy one waits its interval', async () => {
    const fetchesA = downHost.counts.get('/a.ics');
    const fetchesB = okHost.counts.get('/b.ics');
    const worker = startSyncWorker({ store, once: true, allowPrivateFeeds: true, ca: [readFileSync(caFile, 'utf8')] });
    expect(await worker.done).toEqual({ ok: 0, failed: 0, lease_lost: 0, released: 0 });
    expect(downHost.counts.get('/a.ics')).toBe(fetchesA);
    expect(okHost.counts.get('/b.ics')).toBe(fetchesB);
    const rows = await store.db.selectFrom('platform_tenant_feed').selectAll().orderBy('domain').execute();
    const due = (r: (typeof rows)[number]) => Date.parse(r.next_due_at) - Date.parse(r.last_attempt_at!);
    // The node's schedule at the default 15 min interval: a first retry after 1/16 of it, jittered down by ≤ 20 %.
    expect(rows[0]).toMatchObject({ domain: A, failures: 1, lease_owner: null });
    expect(due(rows[0]!)).toBeGreaterThanOrEqual(0.8 * 56_250);
    expect(due(rows[0]!)).toBeLessThanOrEqual(56_250);
    expect(rows[1]).toMatchObject({ domain: B, failures: 0, lease_owner: null, event_count: 1 });
    expect(due(rows[1]!)).toBeGreaterThanOrEqual(0.8 * 900_000);
  });

  it("a feed older than the tenant's calendar age turns that tenant stale", async () => {
    clock.advance(181 * 60_000);
    try {
      expect((await offer(B, 20, 23)).availability).toMatchObject({
        available: false,
        reason: 'calendar_stale',
        calendar_freshness: { safe: false, stale_sources: ['other-channel'], error_sources: [], reason: 'calendar_feed_stale' },
      });
    } finally {
      clock.set(NOW);
    }
    expect((await offer(B, 20, 23)).availability.available).toBe(true);
  });

  it('the sync migrations are idempotent: re-run over columns they already added, they keep them and the data', async () => {
    // Every migration after them is forgotten too (Kysely runs none out of order), and re-runs alike.
    await sql`delete from platform_migration where name > '0001_tenants'`.execute(store.db);
    const again = await PlatformStore.open(dbUrl);
    try {
      const rows = await again.db
        .selectFrom('platform_tenant_feed')
        .select(['domain', 'failures', 'next_due_at', 'blocks_digest'])
        .orderBy('domain')
        .execute();
      expect(rows.map((r) => [r.domain, Number(r.failures)])).toEqual([
        [A, 1],
        [B, 0],
      ]);
      expect(rows[1]!.blocks_digest).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await again.close();
    }
  });

  it('refuses a feed that is not https, and bad worker options, with stable codes', async () => {
    await expect(store.addTenantFeeds([{ domain: B, name: 'plain', url: 'http://127.0.0.1/x.ics' }])).rejects.toMatchObject({
      code: 'invalid_feed_url',
    });
    await expect(store.addTenantFeeds([{ domain: B, name: 'other-channel', url: okHost.url('/dup.ics') }])).rejects.toMatchObject({
      code: 'feed_exists',
    });
    await expect(store.addTenantFeeds([{ domain: 'nobody.example', name: 'x', url: okHost.url('/x.ics') }])).rejects.toMatchObject({
      code: 'unknown_tenant',
    });
    expect(() => startSyncWorker({ store, leaseMs: 500 })).toThrow(expect.objectContaining({ code: 'invalid_sync_option' }));
    const addFeed = (url: string) =>
      runVrpInProcess(['platform', 'tenants', 'add-feed', B, '--name', 'second', '--url', url, '--database-url', dbUrl, '--json']);
    const refused = await addFeed('http://127.0.0.1/x.ics');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: { code: 'invalid_feed_url' } });
    expect((await store.db.selectFrom('platform_tenant_feed').select('name').where('domain', '=', B).execute()).length).toBe(1);
    expect((await addFeed(okHost.url('/b2.ics'))).code).toBe(0);
    expect((await offer(B, 20, 23)).availability).toMatchObject({ available: false, calendar_freshness: { stale_sources: ['second'] } });
  });
});

/** The offer `node` serves for nights 20–23 (or `from`–`to`). */
async function offerOf(node: TenantNode, from = 20, to = 23) {
  const r = await offerFor(node.publisher, { check_in: day(from), check_out: day(to), guests: 2 });
  if (!r.ok) throw new Error(r.error.code);
  return (JSON.parse(r.json) as OfferEnvelope).offer;
}

/** The offer of `domain`, from a node opened now (its state as the database has it). */
const tenantOffer = async (store: PlatformStore, domain: string) =>
  offerOf(await openTenantNode(store, domain, [master], { clock: store.clock }));

describe('feed address policy: feeds are fetched from public addresses only, unless the operator allows private ones', () => {
  const clock = testClock(NOW);
  let store: PlatformStore;
  const LITERAL = 'literal.example';
  const NAMED = 'named.example';
  const REDIRECTED = 'redirected.example';
  const NO_FEED = 'no-feed.example';
  const ca = () => [readFileSync(caFile, 'utf8')];
  const lastErrors = async () =>
    Object.fromEntries(
      await Promise.all([LITERAL, NAMED, REDIRECTED].map(async (d) => [d, (await store.showTenant(d)).feeds[0]!.last_error_code])),
    );

  const dbUrl = sqliteUrl(tmp, 'policy');

  beforeAll(async () => {
    store = await openInitialised(dbUrl, master, { clock });
    await store.addTenants(
      master,
      [LITERAL, NAMED, REDIRECTED, NO_FEED].map((domain) => ({ domain, property: sampleProperty(NOW) })),
    );
    // The redirect answers from the feed host itself, to a second path of it: a redirect is never followed.
    okHost.answers.set('/policy/redirect.ics', { status: 302, body: '', headers: { location: okHost.url('/policy/target.ics') } });
    await store.addTenantFeeds([
      { domain: LITERAL, name: 'other-channel', url: okHost.url('/policy/literal.ics') },
      { domain: NAMED, name: 'other-channel', url: okHost.url('/policy/named.ics').replace('127.0.0.1', 'localhost') },
      { domain: REDIRECTED, name: 'other-channel', url: okHost.url('/policy/redirect.ics') },
    ]);
  });
  afterAll(async () => {
    okHost.answers.delete('/policy/redirect.ics');
    await store?.close();
  });

  it('refuses 127.0.0.1, and a name resolving to it (localhost), by default: a failure of that tenant only, before any request', async () => {
    const logs: SyncLogEntry[] = [];
    const worker = startSyncWorker({ store, once: true, ca: ca(), log: (e) => logs.push(e) });
    expect(await worker.done).toEqual({ ok: 0, failed: 3, lease_lost: 0, released: 0 });
    expect(logs.map((l) => l.error?.code)).toEqual(['feed_address_refused', 'feed_address_refused', 'feed_address_refused']);
    expect(await lastErrors()).toEqual({
      [LITERAL]: 'feed_address_refused',
      [NAMED]: 'feed_address_refused',
      [REDIRECTED]: 'feed_address_refused',
    });
    for (const p of ['literal', 'named', 'redirect', 'target']) expect(okHost.counts.get(`/policy/${p}.ics`)).toBeUndefined();
    // Fail closed for the tenants whose feed was refused; a tenant without feeds is not touched.
    expect((await tenantOffer(store, LITERAL)).availability).toMatchObject({
      available: false,
      reason: 'calendar_stale',
      calendar_freshness: { error_sources: ['other-channel'], reason: 'calendar_feed_failed' },
    });
    expect((await tenantOffer(store, NO_FEED)).availability.available).toBe(true);
  });

  it("the policy's agent connects to the address it checked: a feed on an address the policy allows is fetched, over the feed CA", async () => {
    // A policy allowing loopback only: the real server on 127.0.0.1 stands for a public host, 127.0.0.2 for a refused one.
    const agent = new PublicFeedAgent({ isRefused: (a) => a !== '127.0.0.1' && a !== '::1' });
    const recorded: string[] = [];
    const recorder: FeedRecorder = {
      recordFeedSuccess: async (_property, name, ranges) => void recorded.push(`${name} ok ${ranges.length}`),
      recordFeedFailure: async (name, error) => void recorded.push(`${name} ${error.split(':', 1)[0]}`),
    };
    const sync = (name: string, url: string) =>
      syncFeed(recorder, sampleProperty(NOW), { name, url, file: null }, NOW, { agent, ca: ca(), timeoutMs: 5000 });
    try {
      await sync('literal', okHost.url('/policy/agent-literal.ics'));
      await sync('named', okHost.url('/policy/agent-named.ics').replace('127.0.0.1', 'localhost'));
      await sync('other', okHost.url('/policy/agent-other.ics').replace('127.0.0.1', '127.0.0.2'));
    } finally {
      agent.destroy();
    }
    expect(recorded).toEqual(['literal ok 1', 'named ok 1', 'other feed_address_refused']);
    expect(['literal', 'named', 'other'].map((p) => okHost.counts.get(`/policy/agent-${p}.ics`))).toEqual([1, 1, undefined]);
  });

  it('the command refuses them too without --allow-private-feeds (exit 1, the code in its log)', async () => {
    // The command runs on the real clock: the feeds, backed off on the test clock, are made due again.
    await store.db
      .updateTable('platform_tenant_feed')
      .set({ next_due_at: new Date(0).toISOString() })
      .execute();
    const r = await runVrpInProcess(['platform', 'sync-worker', '--database-url', dbUrl, '--feed-ca', caFile, '--once', '--json']);
    expect(r.code).toBe(1);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; outcome?: string; error?: { code: string }; allow_private_feeds?: boolean });
    expect(events[0]).toMatchObject({ event: 'started', allow_private_feeds: false });
    expect(events.filter((e) => e.event === 'feed_sync').map((e) => e.error?.code)).toEqual([
      'feed_address_refused',
      'feed_address_refused',
      'feed_address_refused',
    ]);
    expect(r.stderr).not.toContain('--allow-private-feeds');
  });

  it('with allowPrivateFeeds the same feeds are fetched; a redirect is still not followed (to any address)', async () => {
    clock.advance(16 * 60_000); // past the first retry of the backoff
    const worker = startSyncWorker({ store, once: true, allowPrivateFeeds: true, ca: ca() });
    expect(await worker.done).toEqual({ ok: 2, failed: 1, lease_lost: 0, released: 0 });
    expect(await lastErrors()).toEqual({ [LITERAL]: null, [NAMED]: null, [REDIRECTED]: 'feed_http_error' });
    expect(okHost.counts.get('/policy/redirect.ics')).toBe(1);
    expect(okHost.counts.get('/policy/target.ics')).toBeUndefined();
    expect((await tenantOffer(store, LITERAL)).availability.available).toBe(true);
    expect((await tenantOffer(store, NAMED)).availability.available).toBe(true);
  });
});

describe("a sync bumps the tenant's revision only when what its offers read changed", () => {
  const clock = testClock(NOW);
  let store: PlatformStore;
  const T = 'steady.example';
  const PATH = '/steady/feed.ics';
  const ca = () => [readFileSync(caFile, 'utf8')];
  const revision = async () => (await store.tenantHead(T))!.revision;
  const logs: SyncLogEntry[] = [];
  /** Let the feed fall due (the interval is 15 min, jittered down) and sync it once. */
  const syncAfter = async (minutes: number) => {
    clock.advance(minutes * 60_000);
    return startSyncWorker({ store, once: true, allowPrivateFeeds: true, ca: ca(), log: (e) => logs.push(e) }).done;
  };
  /** Opened once, as a serving process holds a tenant: it reloads the tenant only when its revision moves. */
  let node: TenantNode;
  const feedRow = () => store.db.selectFrom('platform_tenant_feed').selectAll().where('domain', '=', T).executeTakeFirstOrThrow();
  /** The shared feed plus a stay on nights 50–52. */
  const changedIcs = ICS.replace(
    'END:VCALENDAR',
    [
      'BEGIN:VEVENT',
      'UID:stay-2@other',
      'DTSTAMP:20260101T000000Z',
      `DTSTART;VALUE=DATE:${compact(day(50))}`,
      `DTEND;VALUE=DATE:${compact(day(52))}`,
      'END:VEVENT',
      'END:VCALENDAR',
    ].join('\r\n'),
  );

  beforeAll(async () => {
    store = await openInitialised(sqliteUrl(tmp, 'steady'), master, { clock });
    await store.addTenants(master, [{ domain: T, property: sampleProperty(NOW) }]);
    await store.addTenantFeeds([{ domain: T, name: 'other-channel', url: okHost.url(PATH) }]);
    node = await openTenantNode(store, T, [master], { clock });
  });
  afterAll(async () => {
    okHost.answers.delete(PATH);
    await store?.close();
  });

  it('an unchanged feed leaves the revision alone but records its success; a changed one bumps it once', async () => {
    expect(await syncAfter(0)).toMatchObject({ ok: 1 });
    const first = await revision();
    const synced = (await feedRow()).last_success_at;
    expect(await syncAfter(16)).toMatchObject({ ok: 1 });
    expect(await syncAfter(16)).toMatchObject({ ok: 1 });
    expect(await revision()).toBe(first);
    expect(Date.parse((await feedRow()).last_success_at!)).toBe(Date.parse(synced!) + 32 * 60_000);
    expect(okHost.counts.get(PATH)).toBe(3);

    okHost.answers.set(PATH, { status: 200, body: changedIcs });
    expect(await syncAfter(16)).toMatchObject({ ok: 1 });
    expect(await revision()).toBe(first + 1);
    expect((await offerOf(node, 50, 52)).availability).toMatchObject({ available: false, reason: 'not_available' });
    expect(logs.map((l) => l.revision_bumped)).toEqual([true, false, false, true]);
  });

  it('a feed that keeps syncing unchanged stays quoteable past the calendar age: its success is republished at half of it', async () => {
    const before = await revision();
    // 12 syncs 16 min apart: 192 min, past the sample property's 180-minute calendar age.
    for (let i = 0; i < 12; i++) expect(await syncAfter(16)).toMatchObject({ ok: 1 });
    expect((await offerOf(node)).availability).toMatchObject({ available: true, calendar_freshness: { safe: true } });
    // Republished when 90 minutes had passed since the success the revision carried: after 96 and 192 minutes.
    expect(await revision()).toBe(before + 2);
  }, 60_000);

  it('a failing feed turns the offers non-quoteable at once (one bump), stays so past the calendar age, and recovers', async () => {
    okHost.answers.set(PATH, { status: 503, body: 'down' });
    const before = await revision();
    expect(await syncAfter(16)).toMatchObject({ failed: 1 });
    expect(await revision()).toBe(before + 1);
    const failed = { available: false, reason: 'calendar_stale', calendar_freshness: { safe: false, error_sources: ['other-channel'] } };
    expect((await offerOf(node)).availability).toMatchObject(failed);
    // Failing again changes nothing served: no bump.
    expect(await syncAfter(16)).toMatchObject({ failed: 1 });
    expect(await revision()).toBe(before + 1);
    // Past the staleness bound with no success: stale as well as failed.
    clock.advance(181 * 60_000);
    expect((await offerOf(node)).availability).toMatchObject({
      ...failed,
      calendar_freshness: { ...failed.calendar_freshness, stale_sources: ['other-channel'] },
    });
    const [shown] = (await store.showTenant(T)).feeds;
    expect(shown).toMatchObject({ name: 'other-channel', state: 'failed', last_error_code: 'feed_http_error', failures: 2 });
    expect(Date.parse(shown!.stale_at!)).toBe(Date.parse(shown!.last_success_at!) + 180 * 60_000);

    okHost.answers.set(PATH, { status: 200, body: changedIcs });
    expect(await syncAfter(16)).toMatchObject({ ok: 1 });
    expect(await revision()).toBe(before + 2);
    expect((await offerOf(node)).availability.available).toBe(true);
  });
});

/** Tenants `prefix-NNN.example`, each with `perTenant` feeds on `host` under `/prefix/NNN/F.ics`. */
async function addFeeds(store: PlatformStore, prefix: string, tenants: number, perTenant: number, host: FeedHost): Promise<string[]> {
  const domains = Array.from({ length: tenants }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}.example`);
  await store.addTenants(
    master,
    domains.map((domain) => ({ domain, property: sampleProperty(NOW) })),
  );
  const feeds = domains.flatMap((domain, i) =>
    Array.from({ length: perTenant }, (_, f) => ({ domain, name: `feed-${f}`, url: host.url(`/${prefix}/${i}/${f}.ics`) })),
  );
  await store.addTenantFeeds(feeds);
  return feeds.map((f) => new URL(f.url).pathname);
}

interface WorkerRun extends CliRun {
  /** The JSON lines the worker printed so far (stdout is read continuously, so the worker never blocks on it). */
  events(): (Partial<Omit<SyncLogEntry, 'event'>> & { event: string; [field: string]: unknown })[];
  stdout(): string;
}

function worker(dbUrl: string, ...extra: string[]): WorkerRun {
  const run = vrpCli([
    'platform',
    'sync-worker',
    '--database-url',
    dbUrl,
    '--feed-ca',
    caFile,
    '--allow-private-feeds',
    '--json',
    ...extra,
  ]);
  let out = '';
  run.child.stdout!.on('data', (c) => (out += c));
  return {
    ...run,
    stdout: () => out,
    events: () =>
      out
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l)),
  };
}
const okFeeds = (r: WorkerRun) => r.events().filter((e) => e.event === 'feed_sync' && e.outcome === 'ok');

describe('sync worker processes on SQLite', () => {
  it('two workers at once fetch each feed exactly once', async () => {
    const dbUrl = sqliteUrl(tmp, 'two');
    const store = await openInitialised(dbUrl, master);
    let paths: string[];
    try {
      paths = await addFeeds(store, 'lite', 20, 5, okHost);
    } finally {
      await store.close();
    }
    // Responses are held until both workers have their per-host share (4 each) in flight: they really run at once.
    for (const p of paths) okHost.hold.add(p);
    const runs = [worker(dbUrl, '--once', '--concurrency', '8'), worker(dbUrl, '--once', '--concurrency', '8')];
    await waitFor(() => okHost.holding === 8, 30_000, 'both workers to fetch');
    okHost.release();
    expect(await Promise.all(runs.map((r) => r.exited))).toEqual([0, 0]);
    expect(paths.map((p) => okHost.counts.get(p))).toEqual(paths.map(() => 1));
    // The operator's opt-out of the feed address policy is said once, at start.
    for (const r of runs) {
      expect(r.events().find((e) => e.event === 'started')).toMatchObject({ allow_private_feeds: true });
      expect(r.stderr().match(/--allow-private-feeds/g)).toHaveLength(1);
    }
    const [one, two] = runs.map((r) => okFeeds(r).length) as [number, number];
    expect(one).toBeGreaterThan(0);
    expect(two).toBeGreaterThan(0);
    expect(one + two).toBe(paths.length);
    const check = await PlatformStore.open(dbUrl);
    try {
      const rows = await check.db.selectFrom('platform_tenant_feed').select(['last_success_at', 'lease_owner']).execute();
      expect(rows.every((r) => r.last_success_at !== null && r.lease_owner === null)).toBe(true);
    } finally {
      await check.close();
    }
  }, 60_000);
});

describe.skipIf(!pgs)('sync workers on PostgreSQL: 1,000 feeds, two processes, one killed mid-lease', () => {
  const dbUrl = pgs?.schemaUrl('platsync') ?? '';
  const PER_HOST = 8;
  let store: PlatformStore;
  let held: string[] = [];
  let healthy: string[] = [];
  let failing: string[] = [];
  const runs: WorkerRun[] = [];

  beforeAll(async () => {
    store = await openInitialised(dbUrl, master);
    // Sorted first (due at the same instant, claimed in domain order): the feeds both workers claim first, held in flight.
    held = await addFeeds(store, 'aa-held', 8, 5, okHost);
    healthy = await addFeeds(store, 'mm-ok', 190, 5, okHost);
    failing = await addFeeds(store, 'zz-down', 2, 5, downHost);
    for (const p of held) okHost.hold.add(p);
  }, 60_000);
  afterAll(async () => {
    for (const r of runs) r.child.kill('SIGKILL');
    await Promise.all(runs.map((r) => r.exited));
    okHost.release();
    await store?.close();
  });

  it('each feed once per cycle, the per-host limit holds, the failing host backs off, and a SIGKILLed worker loses nothing', async () => {
    const total = held.length + healthy.length + failing.length;
    expect(total).toBe(1000);
    const args = ['--interval', '10m', '--concurrency', '16', '--per-host', String(PER_HOST), '--lease', '8s'];
    runs.push(worker(dbUrl, ...args), worker(dbUrl, ...args, '--admin-listen', '127.0.0.1:0'));
    const [doomed, survivor] = runs as [WorkerRun, WorkerRun];

    // Both workers fill their per-host slots with held feeds: 2 × 8 responses in flight, and no more.
    await waitFor(() => okHost.holding === 2 * PER_HOST, 30_000, 'both workers to hold feeds in flight');
    expect(okHost.peak).toBe(2 * PER_HOST);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    okHost.release();

    const count = async (column: 'last_success_at' | 'last_attempt_at') =>
      Number(
        (
          await store.db
            .selectFrom('platform_tenant_feed')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where(column, 'is not', null)
            .executeTakeFirstOrThrow()
        ).n,
      );
    // The killed worker's leases expire (8 s) and the survivor takes those feeds.
    const allDone = async () =>
      (await count('last_success_at')) === held.length + healthy.length && (await count('last_attempt_at')) === total;
    await waitFor(allDone, 45_000, 'every feed attempted, every healthy feed synced').catch(async (e: Error) => {
      throw new Error(`${e.message}: ${await count('last_success_at')} synced; survivor stderr: ${survivor.stderr().slice(-2000)}`);
    });

    // Exactly once per cycle for every feed no worker died holding; the 8 the killed worker had in flight twice.
    expect(healthy.filter((p) => okHost.counts.get(p) !== 1)).toEqual([]);
    const heldCounts = held.map((p) => okHost.counts.get(p) ?? 0);
    expect(heldCounts.every((n) => n === 1 || n === 2)).toBe(true);
    expect(heldCounts.filter((n) => n === 2)).toHaveLength(PER_HOST);
    expect(okHost.peak).toBeLessThanOrEqual(2 * PER_HOST);
    // The failing host: one fetch per feed, then the backoff (first retry after 1/16 of 10 min, jittered).
    expect(failing.map((p) => downHost.counts.get(p))).toEqual(failing.map(() => 1));
    const down = await store.db.selectFrom('platform_tenant_feed').selectAll().where('domain', 'like', 'zz-down-%').execute();
    expect(down.every((r) => Number(r.failures) === 1 && r.last_error?.startsWith('feed_http_error'))).toBe(true);
    expect(down.every((r) => Date.parse(r.next_due_at) - Date.parse(r.last_attempt_at!) >= 0.8 * 37_500)).toBe(true);
    // Every lease is released; the survivor still runs and nothing is due.
    const leased = await store.db.selectFrom('platform_tenant_feed').select('name').where('lease_owner', 'is not', null).execute();
    expect(leased).toEqual([]);
    expect(survivor.child.exitCode).toBeNull();
    expect(survivor.stderr()).not.toContain('secret-');
    // The logs: one success per feed, each feed once, URLs without their token; the metrics agree.
    expect(survivor.stdout() + doomed.stdout()).not.toContain('secret-');
    const oks = okFeeds(survivor).map((e) => `${e.tenant}/${e.feed}`);
    expect(oks).toHaveLength(held.length + healthy.length);
    expect(new Set(oks).size).toBe(oks.length);
    expect(okFeeds(doomed)).toEqual([]);
    const adminPort = survivor.events().find((e) => e.event === 'started')?.admin_port as number;
    const metrics = await plainGet(adminPort, '/metrics');
    expect(metrics).toContain(`vrp_platform_feed_fetches_total{outcome="ok"} ${oks.length}`);
    expect(metrics).toMatch(/vrp_platform_feed_sync_lag_seconds \d/);

    // The sync migrations re-run over their own columns (PostgreSQL lists every schema's tables: only this one counts).
    await sql`delete from platform_migration where name > '0001_tenants'`.execute(store.db);
    const again = await PlatformStore.open(dbUrl);
    await again.close();
    expect(
      Number(
        (
          await store.db
            .selectFrom('platform_tenant_feed')
            .select((eb) => eb.fn.max('failures').as('f'))
            .executeTakeFirstOrThrow()
        ).f,
      ),
    ).toBe(1);
  }, 90_000);
});
