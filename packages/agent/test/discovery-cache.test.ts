/**
 * `DiscoveryCache`: the discovery document under the JWKS's cache policy (≤ 300 s,
 * `Cache-Control` shortens, `no-store` honoured, coalesced, failures never cached), and
 * `fetchVerifiedStayOffer` reading it again when a verification failed for a reason a newer
 * document could fix.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHardenedFetch, DiscoveryCache, fetchVerifiedStayOffer, type HardenedFetch, JwksCache } from '@vrpkit/agent';
import { type FetchLike, systemClock } from '@vrpkit/core';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const DOMAIN = 'discovery-cache.example';
const DISCOVERY_URL = `https://${DOMAIN}/.well-known/vacation-rental.json`;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const STAY = { check_in: day(40), check_out: day(43), guests: 2 };

const DOCUMENT = JSON.stringify({
  protocol: 'vacation-rental-protocol',
  protocol_version: '0.1',
  canonical_domain: DOMAIN,
  jwks_url: `https://${DOMAIN}/.well-known/jwks.json`,
  verified_stay_offer_endpoint: `https://${DOMAIN}/api/verified-stay-offer`,
});

/** A node stand-in without a network: discovery with `cacheControl`, every other path `offerStatus`. */
function stubNode(served: { cacheControl: string | null; discoveryStatus: number; offerStatus: number; delayMs: number }) {
  const requests: string[] = [];
  const fetch: FetchLike = async (input) => {
    const url = String(input);
    requests.push(url);
    await new Promise((resolve) => setTimeout(resolve, served.delayMs));
    if (url !== DISCOVERY_URL) return new Response('{}', { status: served.offerStatus });
    return new Response(DOCUMENT, {
      status: served.discoveryStatus,
      headers: { 'content-type': 'application/json', ...(served.cacheControl ? { 'cache-control': served.cacheControl } : {}) },
    });
  };
  return { fetch, discoveries: () => requests.filter((u) => u === DISCOVERY_URL).length };
}

let t: number;
const clock = { now: () => t };
let served: Parameters<typeof stubNode>[0];
beforeEach(() => {
  t = Date.parse('2026-06-02T12:00:00Z');
  served = { cacheControl: 'public, max-age=300', discoveryStatus: 200, offerStatus: 404, delayMs: 0 };
});

describe('DiscoveryCache (the JWKS cache policy, Core VRP v0.1 §3.1)', () => {
  it('serves from cache for at most 300 s, then reads again', async () => {
    const stub = stubNode(served);
    const cache = new DiscoveryCache({ fetch: stub.fetch, clock, maxAgeSeconds: 3_600 });
    expect((await cache.get(DOMAIN)).ok).toBe(true);
    t += 299_999;
    expect((await cache.get(`https://${DOMAIN}/`)).ok).toBe(true);
    expect(stub.discoveries()).toBe(1);
    t += 1;
    await cache.get(DOMAIN);
    expect(stub.discoveries()).toBe(2);
  });

  it('Cache-Control shortens the lifetime; no-store and no-cache mean no reuse', async () => {
    served.cacheControl = 'max-age=5';
    const short = stubNode(served);
    const cache = new DiscoveryCache({ fetch: short.fetch, clock });
    await cache.get(DOMAIN);
    t += 4_999;
    await cache.get(DOMAIN);
    expect(short.discoveries()).toBe(1);
    t += 1;
    await cache.get(DOMAIN);
    expect(short.discoveries()).toBe(2);
    for (const cc of ['no-store', 'no-cache, max-age=300']) {
      served.cacheControl = cc;
      const stub = stubNode(served);
      const noReuse = new DiscoveryCache({ fetch: stub.fetch, clock });
      await noReuse.get(DOMAIN);
      await noReuse.get(DOMAIN);
      expect(stub.discoveries()).toBe(2);
    }
  });

  it('concurrent reads share one request; a failed read is never cached', async () => {
    served.delayMs = 20;
    const stub = stubNode(served);
    const cache = new DiscoveryCache({ fetch: stub.fetch, clock });
    expect((await Promise.all(Array.from({ length: 10 }, () => cache.get(DOMAIN)))).every((d) => d.ok)).toBe(true);
    expect(stub.discoveries()).toBe(1);

    served.discoveryStatus = 503;
    const down = stubNode(served);
    const failing = new DiscoveryCache({ fetch: down.fetch, clock });
    expect(await failing.get(DOMAIN)).toMatchObject({ ok: false, code: 'discovery_http_error' });
    await failing.get(DOMAIN);
    expect(down.discoveries()).toBe(2);
  });

  it('a verification that failed for a reason a newer document could fix reads discovery again, once', async () => {
    const stub = stubNode(served); // the offer endpoint the cached document names answers 404
    const discoveryCache = new DiscoveryCache({ fetch: stub.fetch, clock });
    const deps = { fetch: stub.fetch, clock, jwksCache: new JwksCache({ fetch: stub.fetch, clock }), discoveryCache };
    expect(await fetchVerifiedStayOffer(DOMAIN, STAY, deps)).toMatchObject({ status: 'unknown', code: 'offer_http_error' });
    expect(stub.discoveries()).toBe(2);
  });
});

describe('fetchVerifiedStayOffer with a DiscoveryCache against a real node over https', () => {
  let root: string;
  let node: ServedNode;
  let fetch: HardenedFetch;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'vrpkit-discovery-cache-'));
    await initNode({ domain: DOMAIN, dataDir: join(root, 'node') });
    node = await serveNode({ dataDir: join(root, 'node'), dev: true, port: 0 });
    fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem! });
  });
  afterAll(async () => {
    await fetch?.close();
    await node?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('warm caches: each verification is one offer GET (no discovery, no JWKS request)', async () => {
    const urls: string[] = [];
    const counting: FetchLike = (input, init) => {
      urls.push(new URL(String(input)).pathname);
      return fetch(input, init);
    };
    const deps = {
      fetch: counting,
      clock: systemClock,
      jwksCache: new JwksCache({ fetch: counting }),
      discoveryCache: new DiscoveryCache({ fetch: counting }),
    };
    for (let i = 0; i < 3; i++) expect((await fetchVerifiedStayOffer(DOMAIN, STAY, deps)).safe_to_quote).toBe(true);
    expect(urls).toEqual([
      '/.well-known/vacation-rental.json',
      '/api/verified-stay-offer',
      '/.well-known/jwks.json',
      '/api/verified-stay-offer',
      '/api/verified-stay-offer',
    ]);
  });
});
