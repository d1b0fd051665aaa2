/**
 * Key rotation under load on PostgreSQL: two `vrp platform keys rotate` processes rotate 100
 * tenants at once while an agent loop fetches and verifies offers through two serving
 * instances; no verification fails, every tenant ends with exactly one new active key, and a
 * revoked key leaves every serving instance's JWKS at its next request.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyOffer } from '@vrpkit/agent';
import { sampleProperty } from '@vrpkit/node';
import {
  generateMasterKeyText,
  INVALIDATION_WINDOW_MS,
  PlatformStore,
  parseMasterKey,
  type ServedPlatform,
  servePlatform,
} from '@vrpkit/platform';
import { JWKS_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { runVrp } from '@vrpkit/testkit/cli';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, tenantGet } from './helpers.js';

const pgs = pgTestSchemas('platform rotation', 'key rotation under load from two processes');
const TENANTS = 100;
const domains = Array.from({ length: TENANTS }, (_, i) => `rot-${i}.example`);
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const query = `${OFFER_ENDPOINT_PATH}?check_in=${day(30)}&check_out=${day(32)}&guests=2`;

const get = (port: number, ca: string, domain: string, path: string) => tenantGet(port, ca, domain, path, { keepAlive: true });

describe.skipIf(!pgs)('key rotation under load', () => {
  const tmp = tempDir('platform-rot');
  const keyFile = join(tmp, 'master.key');
  const url = pgs?.schemaUrl('platrot') ?? '';
  const stores: PlatformStore[] = [];
  const servers: ServedPlatform[] = [];

  beforeAll(async () => {
    writeFileSync(keyFile, generateMasterKeyText(), { mode: 0o600 });
    const master = parseMasterKey(readFileSync(keyFile, 'utf8'));
    for (let i = 0; i < 2; i++) stores.push(await PlatformStore.open(url, { poolSize: 4 }));
    await stores[0]!.init(master, null);
    await stores[0]!.addTenants(
      master,
      domains.map((domain) => ({ domain, property: sampleProperty(Date.now()) })),
    );
    // The tenants' first keys are two hours old: due for a rotation `--older-than 1h`; a key made during the test never is.
    const old = new Date(Date.now() - 2 * 3_600_000).toISOString();
    await stores[0]!.db.updateTable('platform_tenant_key').set({ created_at: old, activates_at: old }).execute();
    for (const store of stores)
      servers.push(await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, 'dev') } }));
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const s of stores) await s.close();
  });

  it('two rotators at once under an agent loop: zero verification failures, exactly one new active key per tenant', async () => {
    const ca = servers[0]!.caPem!;
    let running = true;
    let verified = 0;
    const failures: string[] = [];
    const agent = async (lane: number) => {
      for (let n = lane; running; n += 4) {
        const domain = domains[n % TENANTS]!;
        const offer = await get(servers[n % 2]!.port, ca, domain, query);
        const jwks = await get(servers[(n + 1) % 2]!.port, ca, domain, JWKS_PATH);
        const v = verifyOffer({ envelope: JSON.parse(offer.text), jwks: JSON.parse(jwks.text), now: Date.now() });
        if (v.status === 'verified') verified++;
        else failures.push(`${domain}: ${v.code}`);
      }
    };
    const loop = Promise.all([0, 1, 2, 3].map(agent));
    const args = [
      'platform',
      'keys',
      'rotate',
      '--older-than',
      '1h',
      '--batch',
      '10',
      '--database-url',
      url,
      '--master-key-file',
      keyFile,
      '--json',
    ];
    const [a, b] = await Promise.all([runVrp(args), runVrp(args)]);
    running = false;
    await loop;
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const ra = JSON.parse(a.stdout) as { domains: string[] };
    const rb = JSON.parse(b.stdout) as { domains: string[] };
    // Each tenant rotated by exactly one of the two rotators.
    expect([...ra.domains, ...rb.domains].sort()).toEqual([...domains].sort());
    expect(failures).toEqual([]);
    expect(verified).toBeGreaterThan(0);
    const keys = await stores[0]!.db.selectFrom('platform_tenant_key').select(['domain', 'status']).execute();
    for (const d of domains) {
      const mine = keys.filter((k) => k.domain === d);
      expect(mine.map((k) => k.status).sort(), d).toEqual(['active', 'retired']);
    }
  }, 180_000);

  it('a revoked key leaves every serving instance at its next request', async () => {
    const ca = servers[0]!.caPem!;
    const master = parseMasterKey(readFileSync(keyFile, 'utf8'));
    const domain = domains[0]!;
    const before = JSON.parse((await get(servers[0]!.port, ca, domain, query)).text);
    const kid = before.signature.kid as string;
    for (const s of servers) expect((await get(s.port, ca, domain, JWKS_PATH)).text).toContain(kid);
    const started = performance.now();
    await stores[1]!.revokeTenantKey(master, domain, kid);
    for (const s of servers) {
      const jwks = JSON.parse((await get(s.port, ca, domain, JWKS_PATH)).text);
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).not.toContain(kid);
      expect(verifyOffer({ envelope: before, jwks, now: Date.now() }).status).not.toBe('verified');
    }
    // Revoke returns after the invalidation window (tenant-watch.ts); both instances refuse the key at their first request after it.
    expect(performance.now() - started).toBeGreaterThanOrEqual(INVALIDATION_WINDOW_MS);
    expect(performance.now() - started).toBeLessThan(INVALIDATION_WINDOW_MS + 5000);
    const after = JSON.parse((await get(servers[1]!.port, ca, domain, query)).text);
    expect(after.signature.kid).not.toBe(kid);
  });
});
