/**
 * TLS contexts are bounded apart from the tenant cache (certificates.ts): past the bound the least
 * recently used is dropped and rebuilt at that name's next handshake, from its files (`--tls-dir`)
 * or from the certificate already issued (`--dev`: not issued again), and each name still gets its
 * own certificate.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { createDevCa, issueServerCertificate, sampleProperty } from '@vrpkit/node';
import {
  generateMasterKeyText,
  PlatformStore,
  parseMasterKey,
  type ServedPlatform,
  type ServePlatformOptions,
  servePlatform,
} from '@vrpkit/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const master = parseMasterKey(generateMasterKeyText());
const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-platform-tls-contexts-'));
const TENANTS = ['villa-one.example', 'villa-two.example', 'villa-three.example'];

/** Handshake for `name`: the fingerprint and subjectAltName of the certificate the server presented. */
function peer(port: number, ca: string, name: string): Promise<{ fingerprint: string; san: string }> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, servername: name, ca }, () => {
      const cert = s.getPeerCertificate();
      s.destroy();
      resolve({ fingerprint: cert.fingerprint256, san: cert.subjectaltname ?? '' });
    });
    s.once('error', reject);
  });
}

describe('platform serve: TLS contexts bounded apart from the tenants', () => {
  let store: PlatformStore;
  const started: ServedPlatform[] = [];
  const start = async (o: Partial<ServePlatformOptions>) => {
    const served = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, 'dev-tls') }, ...o });
    started.push(served);
    return served;
  };
  beforeAll(async () => {
    store = await PlatformStore.open(`sqlite:${join(tmp, 'p.sqlite')}`);
    await store.init(master, null);
    await store.addTenants(
      master,
      TENANTS.map((domain) => ({ domain, property: sampleProperty(Date.now()) })),
    );
  });
  afterAll(async () => {
    for (const s of started) await s.close();
    await store?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('--tls-dir: rebuilds an evicted name’s context from its files at its next handshake, its own certificate each time', async () => {
    const ca = await createDevCa();
    const dir = join(tmp, 'per-name');
    mkdirSync(dir);
    for (const name of TENANTS) {
      const pair = await issueServerCertificate(ca, [name]);
      writeFileSync(join(dir, `${name}.pem`), pair.certPem);
      writeFileSync(join(dir, `${name}.key`), pair.keyPem);
    }
    const served = await start({ tls: { kind: 'dir', dir }, tlsContextCacheSize: 2 });
    const first = [];
    for (const name of TENANTS) first.push(await peer(served.port, ca.certPem, name));
    expect(first.map((p) => p.san)).toEqual(TENANTS.map((n) => `DNS:${n}`));
    expect(served.tlsContexts()).toBe(2);
    expect(served.tlsContextsCreated()).toBe(3);
    // The first name was evicted: built again, and still its own certificate.
    expect(await peer(served.port, ca.certPem, TENANTS[0]!)).toEqual(first[0]);
    expect(served.tlsContextsCreated()).toBe(4);
    // A name still held makes none.
    expect(await peer(served.port, ca.certPem, TENANTS[0]!)).toEqual(first[0]);
    expect(served.tlsContextsCreated()).toBe(4);
    expect(served.tlsContexts()).toBe(2);
  });

  it('--dev: rebuilds an evicted context from the certificate already issued, not a new one', async () => {
    const served = await start({ tlsContextCacheSize: 1 });
    const ca = served.caPem!;
    const a = await peer(served.port, ca, TENANTS[0]!);
    const b = await peer(served.port, ca, TENANTS[1]!);
    expect(a.san).toBe(`DNS:${TENANTS[0]}`);
    expect(b.san).toBe(`DNS:${TENANTS[1]}`);
    expect(await peer(served.port, ca, TENANTS[0]!)).toEqual(a);
    expect(served.tlsContextsCreated()).toBe(3);
    expect(served.tlsContexts()).toBe(1);
    const metrics = await served.metrics.registry.metrics();
    expect(metrics).toMatch(/^vrp_platform_tls_contexts_created_total 3$/m);
    expect(metrics).toMatch(/^vrp_platform_tls_contexts 1$/m);
  });
});
