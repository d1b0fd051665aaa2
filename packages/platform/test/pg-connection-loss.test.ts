/**
 * Issue 36 defect 1: a PostgreSQL restart must not kill a PostgreSQL-backed process. A real
 * `vrp node serve` (with its background calendar sync), a real `vrp platform serve` and a real
 * `vrp platform sync-worker` run on the test PostgreSQL, each through a TCP relay the test can
 * cut. Every connection they hold is then terminated by the server (`pg_terminate_backend`, what
 * a restart or a failover does to a client) and, separately, the database is made unreachable
 * for a while: no process exits, requests fail closed meanwhile (503 `store_unavailable`, never an
 * offer), and each serves again by itself within seconds once the database is back.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { type AddressInfo, connect, createServer, type Server as NetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { addCalendarFeed, createDevCa, ensureDevCa, initNode, issueServerCertificate, sampleProperty } from '@vrpkit/node';
import { generateMasterKeyText, PlatformStore, parseMasterKey } from '@vrpkit/platform';
import { OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { type CliRun, listeningEvent, vrpCli } from '@vrpkit/testkit/cli';
import { blockingFeed, nodeClient } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, tenantGet } from './helpers.js';

const pgs = pgTestSchemas('pg connection loss', 'the PostgreSQL restart test of node serve, platform serve and sync-worker');
/** Every connection of this file's processes carries this `application_name` prefix: the test cuts only its own. */
const APP = `r31loss_${randomBytes(4).toString('hex')}`;
const NODE_DOMAIN = 'loss-node.example';
const TENANT = 'loss-tenant.example';
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const OFFER = `${OFFER_ENDPOINT_PATH}?check_in=${day(30)}&check_out=${day(33)}&guests=2`;
/** How long each process may take to serve again: seconds, with room for a loaded test machine. */
const RECOVERY_MS = 20_000;

/** A TCP relay in front of PostgreSQL: `down()` closes every relayed connection and refuses new ones, `up()` relays again on the same port. */
async function pgRelay(target: URL) {
  const sockets = new Set<Socket>();
  const relay = (client: Socket) => {
    const server = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(server).pipe(client);
  };
  let listener: NetServer = createServer(relay);
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const port = (listener.address() as AddressInfo).port;
  return {
    port,
    async down() {
      await new Promise<void>((r) => {
        listener.close(() => r());
        for (const s of sockets) s.destroy();
      });
    },
    async up() {
      listener = createServer(relay);
      await new Promise<void>((r) => listener.listen(port, '127.0.0.1', r));
    },
    close() {
      for (const s of sockets) s.destroy();
      listener.close();
    },
  };
}

/** `schemaUrl` dialled through the relay, its connections named `APP_<who>`. */
function relayed(schemaUrl: string, relayPort: number, who: string): string {
  const u = new URL(schemaUrl);
  u.hostname = '127.0.0.1';
  u.port = String(relayPort);
  u.searchParams.set('application_name', `${APP}_${who}`);
  return u.toString();
}

/** Poll `probe` until it holds, for at most `ms`; the last value seen otherwise. */
async function eventually<T>(probe: () => Promise<T>, holds: (v: T) => boolean, ms: number): Promise<T> {
  const until = Date.now() + ms;
  let v = await probe();
  while (!holds(v) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    v = await probe();
  }
  return v;
}

describe.skipIf(!pgs)('PostgreSQL connection loss under node serve, platform serve and sync-worker (issue 36 defect 1)', () => {
  const tmp = tempDir('pg-loss');
  const processes: CliRun[] = [];
  let relay: Awaited<ReturnType<typeof pgRelay>>;
  let feedHost: Server | undefined;
  /** Feed fetches the sync worker made. */
  let fetches = 0;
  let nodePort = 0;
  let nodeCa = '';
  let platformPort = 0;
  let platformCa = '';
  let nodeSchemaUrl = '';

  const nodeOffer = async () => {
    const client = nodeClient(NODE_DOMAIN, nodePort, nodeCa);
    try {
      return await client.get(OFFER);
    } catch (e) {
      return { status: 0, text: String(e) };
    } finally {
      await client.close();
    }
  };
  const tenantOffer = () => tenantGet(platformPort, platformCa, TENANT, OFFER).catch((e: unknown) => ({ status: 0, text: String(e) }));
  /** When the node's background sync last tried its feed (read past the relay). */
  const nodeSyncedAt = async () => {
    const u = new URL(nodeSchemaUrl);
    const schema = u.searchParams.get('schema')!;
    u.searchParams.delete('schema');
    const c = new pg.Client({ connectionString: u.toString() });
    await c.connect();
    try {
      const r = await c.query<{ at: string | null }>(`select last_attempt_at as at from "${schema}".calendar_feed`);
      return r.rows[0]?.at ?? '';
    } finally {
      await c.end();
    }
  };
  const alive = () => processes.map((p) => p.child.exitCode);
  /** What the processes wrote to stderr lately, for a failure message. */
  const stderrTails = () => processes.map((p) => p.stderr().slice(-600)).join('\n---\n');

  beforeAll(async () => {
    relay = await pgRelay(new URL(pgs!.url));
    // The node: a PostgreSQL store, background sync of a file feed every second.
    nodeSchemaUrl = pgs!.schemaUrl('loss_node');
    const nodeUrl = relayed(nodeSchemaUrl, relay.port, 'node');
    const dataDir = join(tmp, 'node');
    await initNode({ domain: NODE_DOMAIN, dataDir, databaseUrl: nodeUrl });
    const icsFile = join(tmp, 'node-feed.ics');
    writeFileSync(icsFile, blockingFeed(day(40), day(42)));
    await addCalendarFeed({ dataDir, databaseUrl: nodeUrl, name: 'other-channel', file: icsFile });
    const node = vrpCli(['node', 'serve', '--data-dir', dataDir, '--database-url', nodeUrl, '--dev', '--json', '--sync-interval', '1s']);
    processes.push(node);
    const nodeListening = await listeningEvent(node);
    nodePort = nodeListening.port;
    nodeCa = readFileSync(nodeListening.ca, 'utf8');

    // The platform: one tenant with one https feed, served by one process and synced by one worker.
    const platformSchemaUrl = pgs!.schemaUrl('loss_platform');
    const keyFile = join(tmp, 'master.key');
    writeFileSync(keyFile, generateMasterKeyText(), { mode: 0o600 });
    const feedCa = await createDevCa({ commonName: 'pg-loss feed CA' });
    const feedCaFile = join(tmp, 'feed-ca.pem');
    writeFileSync(feedCaFile, feedCa.certPem);
    const cert = await issueServerCertificate(feedCa, ['127.0.0.1']);
    feedHost = createHttpsServer({ key: cert.keyPem, cert: cert.certPem }, (_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'text/calendar' }).end(blockingFeed(day(40), day(42)));
    });
    await new Promise<void>((r) => feedHost!.listen(0, '127.0.0.1', r));
    const store = await PlatformStore.open(platformSchemaUrl);
    try {
      await store.init(parseMasterKey(readFileSync(keyFile, 'utf8')), null);
      await store.addTenants(parseMasterKey(readFileSync(keyFile, 'utf8')), [{ domain: TENANT, property: sampleProperty(Date.now()) }]);
      await store.addTenantFeeds([
        { domain: TENANT, name: 'other-channel', url: `https://127.0.0.1:${(feedHost.address() as AddressInfo).port}/feed.ics` },
      ]);
    } finally {
      await store.close();
    }
    const devDir = join(tmp, 'dev-ca');
    platformCa = (await ensureDevCa(devDir, 'pg-loss platform CA')).ca.certPem;
    const platformUrl = relayed(platformSchemaUrl, relay.port, 'platform');
    const platform = vrpCli(['platform', 'serve', '--database-url', platformUrl, '--master-key-file', keyFile, '--dev', devDir, '--json']);
    processes.push(platform);
    platformPort = (await listeningEvent(platform)).port;
    const workerUrl = relayed(platformSchemaUrl, relay.port, 'worker');
    processes.push(
      vrpCli([
        'platform',
        'sync-worker',
        '--database-url',
        workerUrl,
        '--feed-ca',
        feedCaFile,
        '--allow-private-feeds',
        '--interval',
        '1s',
      ]),
    );
    await eventually(
      async () => fetches,
      (n) => n > 0,
      30_000,
    );
  }, 120_000);

  afterAll(async () => {
    for (const p of processes) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    relay?.close();
    await new Promise((r) => (feedHost ? feedHost.close(r) : r(undefined)));
  });

  it('every connection terminated by the server: no process exits, and each serves again within seconds', async () => {
    expect((await nodeOffer()).status).toBe(200);
    expect((await tenantOffer()).status).toBe(200);
    const admin = new pg.Client({ connectionString: pgs!.url });
    await admin.connect();
    try {
      const cut = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and application_name like $1',
        [`${APP}%`],
      );
      // The node, the platform and the worker each held at least one pooled connection.
      expect(cut.rowCount).toBeGreaterThanOrEqual(3);
    } finally {
      await admin.end();
    }
    await new Promise((r) => setTimeout(r, 1000));
    expect(alive(), stderrTails()).toEqual([null, null, null]);
    expect((await eventually(nodeOffer, (r) => r.status === 200, RECOVERY_MS)).status).toBe(200);
    expect((await eventually(tenantOffer, (r) => r.status === 200, RECOVERY_MS)).status).toBe(200);
    const fetched = fetches;
    expect(
      await eventually(
        async () => fetches,
        (n) => n > fetched,
        10_000,
      ),
    ).toBeGreaterThan(fetched);
    const synced = await nodeSyncedAt();
    expect(await eventually(nodeSyncedAt, (at) => at > synced, RECOVERY_MS)).not.toBe(synced);
  }, 90_000);

  it('while the database is away requests fail closed (503 store_unavailable, no offer); all serve again once it is back', async () => {
    await relay.down();
    try {
      await new Promise((r) => setTimeout(r, 1500));
      for (const answer of [await nodeOffer(), await tenantOffer()]) {
        expect(answer.status, answer.text).toBe(503);
        expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'store_unavailable' } });
      }
      const client = nodeClient(NODE_DOMAIN, nodePort, nodeCa);
      const ready = await client.get('/readyz').finally(() => client.close());
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.text)).toMatchObject({ ready: false, checks: { store: { ok: false, code: 'store_unavailable' } } });
      expect(alive(), stderrTails()).toEqual([null, null, null]);
    } finally {
      await relay.up();
    }
    expect((await eventually(nodeOffer, (r) => r.status === 200, RECOVERY_MS)).status).toBe(200);
    expect((await eventually(tenantOffer, (r) => r.status === 200, RECOVERY_MS)).status).toBe(200);
    const fetched = fetches;
    expect(
      await eventually(
        async () => fetches,
        (n) => n > fetched,
        10_000,
      ),
    ).toBeGreaterThan(fetched);
    expect(alive(), stderrTails()).toEqual([null, null, null]);
  }, 90_000);
});
