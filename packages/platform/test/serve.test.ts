import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createHardenedFetch, getOfferVia, isOnCanonicalDomain, JwksCache, verifyEnvelopeFromNode, verifyOffer } from '@vrpkit/agent';
import { createDevCa, issueServerCertificate, REVISION_RECHECK_MS, sampleProperty } from '@vrpkit/node';
import {
  generateMasterKeyText,
  OPERATOR_TOOL_NAME,
  PlatformStore,
  parseMasterKey,
  type ServedPlatform,
  servePlatform,
  TLS_DIR_CHECK_MS,
} from '@vrpkit/platform';
import { MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantGet } from './helpers.js';

const master = parseMasterKey(generateMasterKeyText());
const NOW = Date.now();
const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-platform-serve-'));
const stayQuery = (() => {
  const d = (n: number) => new Date(NOW + n * 86_400_000).toISOString().slice(0, 10);
  return `check_in=${d(20)}&check_out=${d(23)}&guests=2`;
})();

/** One https request to 127.0.0.1:port with the given SNI name and Host header (they may differ, as a misdirected request's do). */
const get = (port: number, ca: string, servername: string, host: string, path: string) => tenantGet(port, ca, servername, path, { host });

/** The certificate the server presents for an SNI name, or the handshake error. */
function peerCertificate(port: number, ca: string, servername: string): Promise<PeerCertificate | Error> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, servername, ca, rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate());
      s.end();
    });
    s.on('error', (e) => resolve(e));
  });
}

describe('platform serve (dev TLS)', () => {
  let store: PlatformStore;
  let served: ServedPlatform;
  let ca: string;
  beforeAll(async () => {
    store = await PlatformStore.open(`sqlite:${join(tmp, 'p.sqlite')}`);
    await store.init(master, 'platform.example');
    await store.addTenants(
      master,
      ['villa-one.example', 'villa-two.example', 'villa-three.example'].map((domain) => ({ domain, property: sampleProperty(NOW) })),
    );
    served = await servePlatform({
      store,
      masterKeys: [master],
      tls: { kind: 'dev', dir: join(tmp, 'dev-tls') },
      tenantCacheSize: 2,
      adminListen: { host: '127.0.0.1', port: 0 },
    });
    ca = served.caPem!;
  });
  afterAll(async () => {
    await served?.close();
    await store?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("serves each tenant's offer on its own origin, verifying under its own JWKS only", async () => {
    const jwks: Record<string, unknown> = {};
    const offers: Record<string, unknown> = {};
    for (const d of ['villa-one.example', 'villa-two.example']) {
      const disc = JSON.parse((await get(served.port, ca, d, d, '/.well-known/vacation-rental.json')).text);
      expect(disc).toMatchObject({ canonical_domain: d, operator: { key_custody: 'platform' } });
      jwks[d] = JSON.parse((await get(served.port, ca, d, d, '/.well-known/jwks.json')).text);
      const r = await get(served.port, ca, d, d, `${OFFER_ENDPOINT_PATH}?${stayQuery}`);
      expect(r.status).toBe(200);
      offers[d] = JSON.parse(r.text);
    }
    expect(verifyOffer({ envelope: offers['villa-one.example'], jwks: jwks['villa-one.example'], now: NOW }).status).toBe('verified');
    expect(verifyOffer({ envelope: offers['villa-two.example'], jwks: jwks['villa-two.example'], now: NOW }).status).toBe('verified');
    expect(verifyOffer({ envelope: offers['villa-one.example'], jwks: jwks['villa-two.example'], now: NOW }).status).not.toBe('verified');
  });

  it("reads the tenant's head row at most once per request, none while nothing was written (offer, discovery, JWKS); a repeated stay comes from the shared offer cache", async () => {
    const d = 'villa-one.example';
    const path = `${OFFER_ENDPOINT_PATH}?${stayQuery.replace('guests=2', 'guests=3')}`;
    expect((await get(served.port, ca, d, d, path)).status).toBe(200); // loaded, signed, cached
    expect((await get(served.port, ca, d, d, path)).status).toBe(200); // its head read in the request's own turn
    // Either read counts: the one in the request's own turn (SQLite) or the one it waits for.
    const tenantHead = store.tenantHead.bind(store);
    const tenantHeadNow = store.tenantHeadNow.bind(store);
    let reads = 0;
    store.tenantHead = (domain) => {
      reads++;
      return tenantHead(domain);
    };
    store.tenantHeadNow = (domain) => {
      reads++;
      return tenantHeadNow(domain);
    };
    try {
      const signatures = served.metrics.registry.getSingleMetric('vrp_platform_signatures_total')!;
      const signed = async () => (await signatures.get()).values[0]?.value ?? 0;
      const signaturesBefore = await signed();
      // SQLite: the head was read at the first request; nothing written since, so none is read again (tenants.ts `commitCounterNow`).
      for (const p of [path, '/.well-known/vacation-rental.json', '/.well-known/jwks.json']) {
        reads = 0;
        expect((await get(served.port, ca, d, d, p)).status).toBe(200);
        expect(reads).toBe(0);
      }
      // The offer above was the cached one: nothing was signed for it.
      expect(await signed()).toBe(signaturesBefore);
      // A write (here one that leaves the revision alone), and the commit counter read again: the next request reads the head once.
      await store.db.updateTable('platform_tenant').set({ updated_at: new Date().toISOString() }).where('domain', '=', d).execute();
      await new Promise((r) => setTimeout(r, REVISION_RECHECK_MS + 2));
      const fresh = `${OFFER_ENDPOINT_PATH}?${stayQuery.replace('guests=2', 'guests=1')}`;
      reads = 0;
      expect((await get(served.port, ca, d, d, fresh)).status).toBe(200);
      expect(reads).toBe(1);
      expect(await signed()).toBe(signaturesBefore + 1);
    } finally {
      store.tenantHead = tenantHead;
      store.tenantHeadNow = tenantHeadNow;
    }
  });

  it('answers 421 with no tenant data for an unknown Host, and for a Host of another tenant than the TLS name', async () => {
    const unknown = await get(served.port, ca, 'villa-one.example', 'nobody.example', '/.well-known/vacation-rental.json');
    expect(unknown.status).toBe(421);
    expect(unknown.text).not.toContain('villa');
    const crossed = await get(served.port, ca, 'villa-one.example', 'villa-two.example', '/.well-known/vacation-rental.json');
    expect(crossed.status).toBe(421);
    expect(crossed.text).not.toContain('villa');
  });

  it("presents a tenant's certificate for its own name only; an unknown name gets no certificate", async () => {
    const own = await peerCertificate(served.port, ca, 'villa-one.example');
    expect(own).not.toBeInstanceOf(Error);
    expect((own as PeerCertificate).subjectaltname).toBe('DNS:villa-one.example');
    expect(await peerCertificate(served.port, ca, 'nobody.example')).toBeInstanceOf(Error);
  });

  it('a disabled tenant is gone at its next request; the tenant cache stays within its bound', async () => {
    const d = 'villa-three.example';
    expect((await get(served.port, ca, d, d, '/.well-known/jwks.json')).status).toBe(200);
    await store.setTenantStatus(d, 'disabled');
    expect((await get(served.port, ca, d, d, '/.well-known/jwks.json')).status).toBe(421);
    await store.setTenantStatus(d, 'active');
    expect((await get(served.port, ca, d, d, '/.well-known/jwks.json')).status).toBe(200);
    expect(served.loadedTenants()).toBeLessThanOrEqual(2);
  });

  it("relays the tenant's envelope unmodified under an operator-namespaced tool; the agent's origin binding makes it an operator tool", async () => {
    const { port } = served;
    const fetch = createHardenedFetch({
      connectTo: ['platform.example', 'villa-one.example'].map((h) => `${h}:443:127.0.0.1:${port}`),
      ca,
    });
    const client = new Client({ name: 'platform-test', version: '0.1.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`https://platform.example${MCP_ENDPOINT_PATH}`), { fetch }));
      const { tools } = await client.listTools();
      // Node Tool Binding §7: the operator never lists the bound name.
      expect(tools.map((t) => t.name)).toEqual([OPERATOR_TOOL_NAME]);
      const stay = Object.fromEntries(new URLSearchParams(stayQuery));
      const args = { check_in: stay.check_in!, check_out: stay.check_out!, guests: 2 };
      const result = (await client.callTool({
        name: OPERATOR_TOOL_NAME,
        arguments: { domain: 'villa-one.example', ...args },
      })) as CallToolResult;
      const text = (result.content[0] as { text: string }).text;
      // §5: byte for byte the envelope the tenant's own endpoint serves.
      const own = await get(port, ca, 'villa-one.example', 'villa-one.example', `${OFFER_ENDPOINT_PATH}?${stayQuery}`);
      expect(text).toBe(own.text);
      const verdict = await verifyEnvelopeFromNode(JSON.parse(text), args, { fetch, jwksCache: new JwksCache({ fetch }) });
      expect(verdict.canonical_domain).toBe('villa-one.example');
      expect(verdict.verification.status).toBe('verified');
      // §6: served from the platform's domain, not the offer's: an operator tool, never the node's own voice.
      expect(isOnCanonicalDomain('platform.example', verdict.canonical_domain!)).toBe(false);
      const report = await getOfferVia('mcp', 'https://platform.example', args, { fetch });
      expect(report.classification).not.toBe('node_tool');
      expect(report.safe_to_quote).toBe(false);
      const unknown = (await client.callTool({
        name: OPERATOR_TOOL_NAME,
        arguments: { domain: 'nobody.example', ...args },
      })) as CallToolResult;
      expect(unknown.isError).toBe(true);
    } finally {
      await client.close();
      await fetch.close();
    }
  });

  it('refuses MCP batches from revision 2025-06-18 on, on a tenant and on the operator surface (issue 36 defect 12, regression)', async () => {
    const { port } = served;
    const fetch = createHardenedFetch({
      connectTo: ['platform.example', 'villa-one.example'].map((h) => `${h}:443:127.0.0.1:${port}`),
      ca,
    });
    const stay = Object.fromEntries(new URLSearchParams(stayQuery));
    const args = { check_in: stay.check_in, check_out: stay.check_out, guests: 2 };
    const batch = (name: string, extra: Record<string, unknown>) =>
      JSON.stringify(
        Array.from({ length: 100 }, (_, i) => ({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name, arguments: { ...extra, ...args } },
        })),
      );
    try {
      for (const [host, body] of [
        ['villa-one.example', batch('get_verified_stay_offer', {})],
        ['platform.example', batch(OPERATOR_TOOL_NAME, { domain: 'villa-one.example' })],
      ] as const) {
        const res = await fetch(`https://${host}${MCP_ENDPOINT_PATH}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body,
        });
        expect(res.status, host).toBe(400);
        expect(await res.json(), host).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      }
    } finally {
      await fetch.close();
    }
  });

  it('serves Prometheus metrics per surface, misdirected requests, tenant counts and key ages; /healthz and /readyz', async () => {
    const admin = `http://127.0.0.1:${served.admin!.port}`;
    const text = await (await fetch(`${admin}/metrics`)).text();
    expect(text).toMatch(/vrp_platform_requests_total\{surface="offer",status="2xx"\} [1-9]/);
    expect(text).toMatch(/vrp_platform_requests_total\{surface="jwks",status="2xx"\} [1-9]/);
    expect(text).toMatch(/vrp_platform_misdirected_total\{reason="unknown_host"\} [1-9]/);
    expect(text).toMatch(/vrp_platform_offers_served_total [1-9]/);
    expect(text).toMatch(/vrp_platform_tenants\{status="active"\} 3/);
    expect(text).toMatch(/vrp_platform_tenant_cache_total\{result="hit"\} [1-9]/);
    expect(text).toMatch(/vrp_platform_signing_key_age_seconds\{which="oldest"\} /);
    expect(text).toMatch(/vrp_platform_signatures_total [1-9]/);
    expect(text).toMatch(/vrp_platform_offer_cache_total\{result="hit"\} [1-9]/);
    expect(text).toMatch(/vrp_platform_offer_cache_total\{result="miss"\} [1-9]/);
    // Labels never carry a tenant domain.
    expect(text).not.toContain('villa-');
    expect((await fetch(`${admin}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${admin}/readyz`)).json()).toEqual({ ready: true });
  });
});

describe('platform serve (certificates from a directory)', () => {
  it('serves DOMAIN.pem, a _wildcard.PARENT.pem for names under PARENT, and a replaced file without a restart (from the next directory check on)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vrpkit-platform-certs-'));
    const store = await PlatformStore.open(`sqlite:${join(dir, 'p.sqlite')}`);
    let served: ServedPlatform | undefined;
    try {
      await store.init(master, null);
      await store.addTenants(master, [
        { domain: 'villa.example', property: sampleProperty(NOW) },
        { domain: 'cabin.hosts.example', property: sampleProperty(NOW) },
      ]);
      const devCa = await createDevCa();
      const write = async (base: string, names: string[]) => {
        const pair = await issueServerCertificate(devCa, names);
        writeFileSync(join(dir, `${base}.pem`), pair.certPem);
        writeFileSync(join(dir, `${base}.key`), pair.keyPem);
      };
      await write('villa.example', ['villa.example']);
      await write('_wildcard.hosts.example', ['*.hosts.example']);
      served = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dir', dir } });
      const ca = devCa.certPem;
      expect((await get(served.port, ca, 'villa.example', 'villa.example', '/.well-known/jwks.json')).status).toBe(200);
      const wild = await get(served.port, ca, 'cabin.hosts.example', 'cabin.hosts.example', '/.well-known/vacation-rental.json');
      expect(JSON.parse(wild.text).canonical_domain).toBe('cabin.hosts.example');
      const before = (await peerCertificate(served.port, ca, 'villa.example')) as PeerCertificate;
      await write('villa.example', ['villa.example', 'www.villa.example']);
      const later = new Date(Date.now() + 5000);
      utimesSync(join(dir, 'villa.example.pem'), later, later);
      // Served from the directory's next check on (TLS_DIR_CHECK_MS).
      await new Promise((r) => setTimeout(r, TLS_DIR_CHECK_MS + 50));
      const after = (await peerCertificate(served.port, ca, 'villa.example')) as PeerCertificate;
      expect(after.fingerprint256).not.toBe(before.fingerprint256);
      expect(after.subjectaltname).toContain('www.villa.example');
      // A subdomain the tenant serves reaches it on the tenant's connection.
      const www = await get(served.port, ca, 'villa.example', 'www.villa.example', '/.well-known/vacation-rental.json');
      expect(JSON.parse(www.text).canonical_domain).toBe('villa.example');
    } finally {
      await served?.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
