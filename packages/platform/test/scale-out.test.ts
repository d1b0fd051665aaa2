/**
 * Two `vrp platform serve` processes on one PostgreSQL: every tenant verifies through `vrp verify`
 * over http, MCP and A2A against its own JWKS from either process; no offer verifies under
 * another tenant's key; unknown hosts get 421; each name gets its own certificate; a disabled
 * tenant is gone from both processes at its next request.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { verifyOffer } from '@vrpkit/agent';
import { ensureDevCa, sampleProperty } from '@vrpkit/node';
import { generateMasterKeyText, PlatformStore, parseMasterKey } from '@vrpkit/platform';
import { JWKS_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { type CliRun, listeningEvent, runVrpInProcess, vrpCli } from '@vrpkit/testkit/cli';
import { testPgUrl } from '@vrpkit/testkit/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgSchemaUrl, tempDir, tenantGet } from './helpers.js';

const pgUrl = testPgUrl('platform scale-out', 'two platform serve processes on one PostgreSQL');
const TENANTS = 50;
const domains = Array.from({ length: TENANTS }, (_, i) => `villa-${i}.example`);
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const stay = { check_in: day(30), check_out: day(33), guests: 2 };

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

describe.skipIf(!pgUrl)('platform mode on PostgreSQL, two serving processes', () => {
  const tmp = tempDir('platform-scale');
  const url = pgSchemaUrl(pgUrl ?? 'postgres://unused', 'platscale');
  const keyFile = join(tmp, 'master.key');
  const devDir = join(tmp, 'dev-ca');
  const servers: CliRun[] = [];
  const ports: number[] = [];
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
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });

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
