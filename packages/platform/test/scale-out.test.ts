/**
 * Two `vrp platform serve` processes and two `vrp platform sync-worker` processes on one
 * PostgreSQL: every tenant's feed is fetched once and its blocks reach both serving processes;
 * every tenant verifies through `vrp verify` over http, MCP and A2A against its own JWKS from
 * either process; no offer verifies under another tenant's key; unknown hosts get 421; each name
 * gets its own certificate; a disabled tenant is gone from both processes at its next request.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { verifyOffer } from '@vrpkit/agent';
import { createDevCa, ensureDevCa, issueServerCertificate, sampleProperty } from '@vrpkit/node';
import { generateMasterKeyText, PlatformStore, parseMasterKey } from '@vrpkit/platform';
import { JWKS_PATH, OFFER_ENDPOINT_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { type CliRun, listeningEvent, runVrpInProcess, vrpCli } from '@vrpkit/testkit/cli';
import { blockingFeed } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, tenantGet } from './helpers.js';

const pgs = pgTestSchemas('platform scale-out', 'two platform serve processes on one PostgreSQL');
const TENANTS = 50;
const domains = Array.from({ length: TENANTS }, (_, i) => `villa-${i}.example`);
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const stay = { check_in: day(30), check_out: day(33), guests: 2 };
/** Every tenant's feed blocks the nights from day +40 to day +42. */
const ICS = blockingFeed(day(40), day(42));

const get = (port: number, ca: string, servername: string, host: string, path: string) => tenantGet(port, ca, servername, path, { host });

function peerCertificate(port: number, ca: string, servername: string): Promise<PeerCertificate | Error> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, servername, ca }, () => {
      resolve(s.getPeerCertificate());
      s.end();
    });
    s.on('error', (e) => resolve(e));
  });
}

describe.skipIf(!pgs)('platform mode on PostgreSQL, two serving processes', () => {
  const tmp = tempDir('platform-scale');
  const url = pgs?.schemaUrl('platscale') ?? '';
  const keyFile = join(tmp, 'master.key');
  const devDir = join(tmp, 'dev-ca');
  const servers: CliRun[] = [];
  const workers: CliRun[] = [];
  const ports: number[] = [];
  /** Feed fetches per path, counted at the feed host. */
  const fetches = new Map<string, number>();
  let feedHost: Server | undefined;
  let ca = '';

  beforeAll(async () => {
    writeFileSync(keyFile, generateMasterKeyText(), { mode: 0o600 });
    const key = parseMasterKey(readFileSync(keyFile, 'utf8'));
    const store = await PlatformStore.open(url);
    try {
      await store.init(key, null);
      await store.addTenants(
        key,
        domains.map((domain) => ({ domain, property: sampleProperty(Date.now()) })),
      );
    } finally {
      await store.close();
    }
    // The dev CA exists before either process starts, so both issue from the same one.
    ca = (await ensureDevCa(devDir, 'vrpkit platform test CA')).ca.certPem;
    for (let i = 0; i < 2; i++) {
      const run = vrpCli(['platform', 'serve', '--database-url', url, '--master-key-file', keyFile, '--dev', devDir, '--json']);
      servers.push(run);
      ports.push((await listeningEvent(run)).port);
    }

    // One feed per tenant on a local https host with a CA of its own; two sync workers lease them from the same PostgreSQL.
    const feedCa = await createDevCa({ commonName: 'platform scale-out feed CA' });
    const feedCaFile = join(tmp, 'feed-ca.pem');
    writeFileSync(feedCaFile, feedCa.certPem);
    const cert = await issueServerCertificate(feedCa, ['127.0.0.1']);
    feedHost = createHttpsServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      fetches.set(path, (fetches.get(path) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'text/calendar' }).end(ICS);
    });
    await new Promise<void>((r) => feedHost!.listen(0, '127.0.0.1', r));
    const feedPort = (feedHost.address() as AddressInfo).port;
    const feedStore = await PlatformStore.open(url);
    try {
      await feedStore.addTenantFeeds(
        domains.map((domain, i) => ({ domain, name: 'other-channel', url: `https://127.0.0.1:${feedPort}/feed/${i}.ics` })),
      );
    } finally {
      await feedStore.close();
    }
    for (let i = 0; i < 2; i++)
      workers.push(
        vrpCli([
          'platform',
          'sync-worker',
          '--database-url',
          url,
          '--feed-ca',
          feedCaFile,
          '--allow-private-feeds',
          '--interval',
          '10m',
          '--json',
        ]),
      );
    await waitForSynced(url, TENANTS, 60_000, () => workers.map((w) => w.stderr().slice(-500)).join('\n'));
  }, 180_000);

  afterAll(async () => {
    for (const s of [...servers, ...workers]) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
    await new Promise((r) => (feedHost ? feedHost.close(r) : r(undefined)));
  });

  it('two sync workers fetch each feed once; its blocks reach both serving processes as signed negatives', async () => {
    expect(domains.map((_, i) => fetches.get(`/feed/${i}.ics`))).toEqual(domains.map(() => 1));
    const blocked = `${OFFER_ENDPOINT_PATH}?check_in=${day(40)}&check_out=${day(43)}&guests=2`;
    for (const [i, d] of domains.entries()) {
      const port = ports[i % 2]!;
      const envelope = JSON.parse((await get(port, ca, d, d, blocked)).text) as OfferEnvelope;
      expect(envelope.offer.availability, d).toMatchObject({ available: false, reason: 'not_available' });
      const jwks = JSON.parse((await get(ports[(i + 1) % 2]!, ca, d, d, JWKS_PATH)).text);
      expect(verifyOffer({ envelope, jwks, now: Date.now() }).status).toBe('verified');
    }
  }, 120_000);

  it('every tenant verifies through vrp verify from either process under its own JWKS, over http and over MCP and A2A', async () => {
    const caFile = join(devDir, 'ca.pem');
    for (const [i, domain] of domains.entries()) {
      const port = ports[i % 2]!;
      // Every tenant over http; every fifth (on both processes) over the MCP and A2A surfaces too.
      for (const via of i % 5 === 0 ? ['http', 'mcp', 'a2a'] : ['http']) {
        const r = await runVrpInProcess([
          'verify',
          `https://${domain}`,
          '--check-in',
          stay.check_in,
          '--check-out',
          stay.check_out,
          '--guests',
          '2',
          '--via',
          via,
          '--connect-to',
          `${domain}:443:127.0.0.1:${port}`,
          '--cacert',
          caFile,
          '--json',
        ]);
        expect(r.code, `${domain} via ${via}: ${r.stdout.slice(0, 300)}`).toBe(0);
        expect(r.stdout).toContain(domain);
      }
    }
  }, 180_000);

  it("no tenant's offer verifies under another tenant's JWKS, whichever process served either", async () => {
    const query = `${OFFER_ENDPOINT_PATH}?check_in=${stay.check_in}&check_out=${stay.check_out}&guests=2`;
    const offers: unknown[] = [];
    const jwks: unknown[] = [];
    for (const [i, d] of domains.entries()) {
      offers.push(JSON.parse((await get(ports[i % 2]!, ca, d, d, query)).text));
      jwks.push(JSON.parse((await get(ports[(i + 1) % 2]!, ca, d, d, JWKS_PATH)).text));
    }
    const now = Date.now();
    for (let i = 0; i < TENANTS; i++) {
      expect(verifyOffer({ envelope: offers[i], jwks: jwks[i], now }).status).toBe('verified');
      for (const j of [(i + 1) % TENANTS, (i + 7) % TENANTS]) {
        expect(verifyOffer({ envelope: offers[i], jwks: jwks[j], now }).status, `${domains[i]} under ${domains[j]}`).not.toBe('verified');
      }
    }
  }, 120_000);

  it('an unknown host gets 421 and each name its own certificate, on both processes', async () => {
    for (const port of ports) {
      const r = await get(port, ca, domains[0]!, 'unknown.example', JWKS_PATH);
      expect(r.status).toBe(421);
      expect(r.text).not.toContain('villa');
      const cert = await peerCertificate(port, ca, domains[3]!);
      expect((cert as PeerCertificate).subjectaltname).toBe(`DNS:${domains[3]}`);
      expect(await peerCertificate(port, ca, 'unknown.example')).toBeInstanceOf(Error);
    }
  });

  it('a disabled tenant disappears from both processes at once', async () => {
    const d = domains[5]!;
    for (const port of ports) expect((await get(port, ca, d, d, JWKS_PATH)).status).toBe(200);
    const r = await runVrpInProcess(['platform', 'tenants', 'disable', d, '--database-url', url]);
    expect(r.code).toBe(0);
    for (const port of ports) expect((await get(port, ca, d, d, JWKS_PATH)).status).toBe(421);
  });
});

/** Waits until `n` tenant feeds have synced once (each worker's stderr tail in the error when they do not). */
async function waitForSynced(url: string, n: number, ms: number, tails: () => string): Promise<void> {
  const store = await PlatformStore.open(url);
  try {
    const until = Date.now() + ms;
    for (;;) {
      const row = await store.db
        .selectFrom('platform_tenant_feed')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('last_success_at', 'is not', null)
        .executeTakeFirstOrThrow();
      if (Number(row.n) === n) return;
      if (Date.now() > until) throw new Error(`${row.n} of ${n} feeds synced; workers: ${tails()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await store.close();
  }
}
