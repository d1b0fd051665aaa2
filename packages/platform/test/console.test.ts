/**
 * The operator console without a browser (issue 35 item 2), on SQLite and PostgreSQL: where its
 * listener may listen (loopback by default; a public address refused without `--console-public`
 * and TLS, and nothing left listening), what answers without a session (the sign-in page only; a
 * foreign Host nothing), enrollment links by role through `vrp platform console enroll`, the
 * tenant list's search and keyset paging, the audit trail the CLI's own changes write, and the
 * fleet sampler's arithmetic over the exported metrics. The signed-in flows run in Chromium
 * (console-browser.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { type AddressInfo, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { removeConsolePasskey, sampleProperty } from '@vrpkit/node';
import {
  auditTrail,
  enrollOperatorConsole,
  FleetHistory,
  generateMasterKeyText,
  histogramQuantile,
  PlatformMetrics,
  type PlatformStore,
  parseMasterKey,
  ScaleMetrics,
  type ServedPlatform,
  servePlatform,
  tenantPage,
} from '@vrpkit/platform';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PlatformConsoleCredentials } from '../src/console/credentials.js';
import { openInitialised, sqliteUrl, tempDir } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const pgs = pgTestSchemas('platform console', 'the PostgreSQL run of the operator console');
const tmp = tempDir('platform-console');
const NOW = Date.now();
const masterText = generateMasterKeyText();
const master = parseMasterKey(masterText);
const masterFile = join(tmp, 'master.key');
writeFileSync(masterFile, masterText, { mode: 0o600 });
const targets: [string, () => string][] = [['sqlite', () => sqliteUrl(tmp, 'console')]];
if (pgs) targets.push(['postgres', () => pgs.schemaUrl('opcons')]);

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Whether something accepts a connection on 127.0.0.1:port. */
function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    }).on('error', () => resolve(false));
  });
}

describe('histogramQuantile (as Prometheus histogram_quantile interpolates)', () => {
  const le = [0.001, 0.01, 0.1, Number.POSITIVE_INFINITY];
  const snap = (...counts: number[]) => le.map((l, i) => [l, counts[i]!] as [number, number]);

  it('interpolates within the bucket holding the rank, over the observations between two snapshots', () => {
    // 100 observations since the snapshot before: 50 under 1 ms, 40 more under 10 ms, 10 more under 100 ms.
    expect(histogramQuantile(0.5, snap(10, 10, 10, 10), snap(60, 100, 110, 110))).toBeCloseTo(0.001);
    expect(histogramQuantile(0.7, snap(0, 0, 0, 0), snap(50, 90, 100, 100))).toBeCloseTo(0.001 + 0.009 * (20 / 40));
    expect(histogramQuantile(0.99, snap(0, 0, 0, 0), snap(50, 90, 100, 100))).toBeCloseTo(0.01 + 0.09 * (9 / 10));
  });

  it('answers the highest finite bound for a rank in +Inf, and null without observations', () => {
    expect(histogramQuantile(0.99, snap(0, 0, 0, 0), snap(0, 0, 0, 5))).toBe(0.1);
    expect(histogramQuantile(0.5, snap(3, 3, 3, 3), snap(3, 3, 3, 3))).toBeNull();
  });
});

describe.each(targets)('operator console on %s', (kind, urlFor) => {
  let store: PlatformStore;
  let url: string;
  beforeAll(async () => {
    url = urlFor();
    store = await openInitialised(url, master, { operatorDomain: 'platform.example' });
    await store.addTenants(
      master,
      ['alpha.example', 'beta.example', 'gamma-one.example', 'gamma-two.example', 'delta.example'].map((domain) => ({
        domain,
        property: sampleProperty(NOW),
      })),
    );
  });
  afterAll(async () => {
    await store?.close();
  });

  it('refuses a public console address without --console-public, and without TLS even with it; nothing is left listening', async () => {
    const port = await freePort();
    const serve = (console: { host: string; public?: boolean }) =>
      servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, `tls-${kind}`) }, port, console });
    await expect(serve({ host: '203.0.113.7' })).rejects.toMatchObject({ code: 'console_listen_public' });
    await expect(serve({ host: '203.0.113.7', public: true })).rejects.toMatchObject({ code: 'console_public_needs_tls' });
    expect(await connects(port)).toBe(false);
    // The CLI says so too, before serving anything.
    const cli = await runVrpInProcess([
      'platform',
      'serve',
      '--database-url',
      url,
      '--master-key-file',
      masterFile,
      '--dev',
      join(tmp, `tls-cli-${kind}`),
      '--console',
      '--console-host',
      '198.51.100.3',
    ]);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('console_listen_public');
  });

  it('removes passkeys but never the last operator one; a support passkey does not count', async () => {
    const credentials = new PlatformConsoleCredentials(store.db);
    const enroll = async (id: string, role: 'operator' | 'support') => {
      const { token } = await credentials.createEnrollment(role, NOW);
      const at = new Date(NOW).toISOString();
      await credentials.enrollPasskey(
        token,
        { id, public_key: 'pQECAyYgASFYIA', counter: 0, transports: [], created_at: at, last_used_at: null },
        NOW,
      );
    };
    const roles = async () => (await credentials.passkeys()).filter((p) => p.id.startsWith('rm-')).map((p) => `${p.id}:${p.role}`);
    // No passkey is enrolled in this store yet: the one operator enrolled here is the last.
    expect(await credentials.passkeys()).toEqual([]);
    await enroll('rm-operator-a', 'operator');
    await enroll('rm-support', 'support');
    await expect(removeConsolePasskey(credentials, 'rm-operator-a')).rejects.toMatchObject({ code: 'console_last_passkey' });
    await expect(removeConsolePasskey(credentials, 'rm-nobody')).rejects.toMatchObject({ code: 'console_passkey_not_found' });
    expect(await roles()).toEqual(['rm-operator-a:operator', 'rm-support:support']);
    await enroll('rm-operator-b', 'operator');
    await removeConsolePasskey(credentials, 'rm-operator-a');
    await removeConsolePasskey(credentials, 'rm-support');
    expect(await roles()).toEqual(['rm-operator-b:operator']);
    await expect(removeConsolePasskey(credentials, 'rm-operator-b')).rejects.toMatchObject({ code: 'console_last_passkey' });
    // Leave the store as it was for the served console's own enrollment tests.
    await store.db.deleteFrom('platform_console_passkey').where('id', '=', 'rm-operator-b').execute();
  });

  describe('served', () => {
    let served: ServedPlatform;
    let origin: string;
    beforeAll(async () => {
      served = await servePlatform({
        store,
        masterKeys: [master],
        tls: { kind: 'dev', dir: join(tmp, `tls-served-${kind}`) },
        console: { port: 0, sampleIntervalMs: 60_000 },
      });
      origin = served.console!.origin;
    });
    afterAll(async () => {
      await served?.close();
    });

    it('answers every page without a session with the sign-in page only (401), and a foreign Host with nothing (421)', async () => {
      for (const path of ['/', '/tenants', '/tenants/alpha.example', '/tenants/alpha.example/disable/confirm', '/fleet', '/nope']) {
        const res = await fetch(`${origin}${path}`, { redirect: 'manual' });
        expect(res.status).toBe(401);
        const body = await res.text();
        expect(body).toContain('<h1>Sign in</h1>');
        expect(body).not.toContain('alpha.example');
        expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      }
      const change = await fetch(`${origin}/tenants/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'domain=alpha.example&status=disabled',
      });
      expect(change.status).toBe(401);
      expect((await store.showTenant('alpha.example')).status).toBe('active');
      const port = new URL(origin).port;
      // A page whose name was re-pointed at this address (DNS rebinding) reaches nothing (fetch cannot set Host: node:http can).
      const foreign = await new Promise<number>((resolve, reject) =>
        httpGet({ host: '127.0.0.1', port, path: '/signin', headers: { host: `evil.example:${port}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject),
      );
      expect(foreign).toBe(421);
    });

    it('prints one-time enrollment links by role; an unknown role is a usage error; an unknown token opens nothing', async () => {
      const ok = await runVrpInProcess(['platform', 'console', 'enroll', '--role', 'support', '--database-url', url, '--json']);
      expect(ok.code).toBe(0);
      const e = JSON.parse(ok.stdout) as { link: string; complete: boolean; role: string };
      expect(e).toMatchObject({ complete: true, role: 'support' });
      expect(e.link.startsWith(`${origin}/enroll?token=`)).toBe(true);
      expect((await fetch(e.link)).status).toBe(200);
      expect((await fetch(`${origin}/enroll?token=not-a-token`)).status).toBe(403);
      const bad = await runVrpInProcess(['platform', 'console', 'enroll', '--role', 'admin', '--database-url', url]);
      expect(bad.code).toBe(64);
      await expect(enrollOperatorConsole(store, 'root')).rejects.toMatchObject({ code: 'invalid_console_role' });
      // The token is kept only as its digest.
      const kept = await store.db.selectFrom('platform_console_enrollment').select('token_sha256').execute();
      expect(kept.map((k) => k.token_sha256)).not.toContain(new URL(e.link).searchParams.get('token'));
    });
  });

  it('finds tenants by a part of their domain (LIKE wildcards taken literally) or their node id, and pages by domain', async () => {
    const domains = async (o: Parameters<typeof tenantPage>[1]) => (await tenantPage(store.db, o)).rows.map((r) => r.domain);
    expect(await domains({ q: 'GAMMA' })).toEqual(['gamma-one.example', 'gamma-two.example']);
    expect(await domains({ q: '_' })).toEqual([]);
    expect(await domains({ q: 'a_o' })).toEqual([]); // as a wildcard `_` would match gamma-one
    expect(await domains({ q: '%' })).toEqual([]);
    expect(await domains({ q: 'beta.example' })).toEqual(['beta.example']);
    const first = await tenantPage(store.db, { limit: 2 });
    expect(first.rows.map((r) => r.domain)).toEqual(['alpha.example', 'beta.example']);
    const second = await tenantPage(store.db, { limit: 2, after: first.next! });
    expect(second.rows.map((r) => r.domain)).toEqual(['delta.example', 'gamma-one.example']);
    const last = await tenantPage(store.db, { limit: 2, after: second.next! });
    expect(last).toEqual({ rows: [expect.objectContaining({ domain: 'gamma-two.example' })], next: null });
  });

  it("audits the CLI's own changes in their transaction, as the console's are", async () => {
    const cli = await runVrpInProcess(['platform', 'tenants', 'disable', 'delta.example', '--database-url', url]);
    expect(cli.code).toBe(0);
    // `keys rotate --domain`: the one-tenant rotation the console's button runs, from the command line.
    const rotated = await runVrpInProcess([
      'platform',
      'keys',
      'rotate',
      '--domain',
      'delta.example',
      '--database-url',
      url,
      '--master-key-file',
      masterFile,
      '--json',
    ]);
    expect(rotated.code).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ domain: 'delta.example', kid: expect.stringMatching(/^delta\.example-/) });
    expect((await runVrpInProcess(['platform', 'keys', 'rotate', '--database-url', url, '--master-key-file', masterFile])).code).toBe(64);
    await store.setTenantStatus('delta.example', 'active', 'console:operator:0123456789ab');
    const trail = await auditTrail(store.db, 'delta.example');
    expect(trail.map((a) => [a.actor, a.action])).toEqual([
      ['console:operator:0123456789ab', 'tenant_enable'],
      ['cli', 'key_rotate'],
      ['cli', 'tenant_disable'],
    ]);
    // A refused change writes no line.
    await expect(store.setTenantStatus('nobody.example', 'disabled')).rejects.toMatchObject({ code: 'unknown_tenant' });
    expect(await auditTrail(store.db, 'nobody.example')).toEqual([]);
  });

  it('samples signatures per second and latency quantiles from the exported metrics, and failing feeds by host from the database', async () => {
    const metrics = new PlatformMetrics(store, () => 0);
    const scale = new ScaleMetrics(metrics.registry, null, { held: () => 3, created: () => 3 });
    let now = NOW;
    const fleet = new FleetHistory(metrics.registry, store.db, () => now);
    await store.addTenantFeeds([{ domain: 'alpha.example', name: 'ota', url: 'https://ical.ota.example/a.ics?token=secret' }]);
    await store.db
      .updateTable('platform_tenant_feed')
      .set({ last_error: 'feed_http_error: 503' })
      .where('domain', '=', 'alpha.example')
      .execute();
    const first = await fleet.sample();
    expect(first.signaturesPerSecond).toBeNull();
    for (let i = 0; i < 120; i++) scale.signatures.inc();
    for (let i = 0; i < 98; i++) metrics.observe('/api/offer', 200, 2);
    metrics.observe('/api/offer', 200, 300);
    metrics.observe('/api/offer', 200, 300);
    now += 60_000;
    const second = await fleet.sample();
    expect(second).toMatchObject({ signaturesPerSecond: 2, tlsContexts: 3, failingFeedsByHost: { 'ical.ota.example': 1 } });
    expect(second.p50Ms).toBeGreaterThan(1);
    expect(second.p50Ms).toBeLessThanOrEqual(2.5);
    expect(second.p99Ms).toBeGreaterThan(250);
    expect(JSON.stringify(fleet.recent())).not.toContain('secret');
  });
});
