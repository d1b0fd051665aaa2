import {
  cacheLifetimeSeconds,
  createHardenedFetch,
  type HardenedFetch,
  JWKS_MIN_REFETCH_INTERVAL_MS,
  JWKS_MISS_REFETCH_BURST,
  JwksCache,
} from '@vrpkit/agent';
import { ed25519PrivateJwkFromSeed, publicJwkOf, sha256 } from '@vrpkit/core';
import { createTestCa, startHttpsServer, type TestServer } from '@vrpkit/testkit/tls';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const DOMAIN = 'keys.example';
const JWKS_URL = `https://${DOMAIN}/.well-known/jwks.json`;
const key = (n: number, kid: string) => publicJwkOf(ed25519PrivateJwkFromSeed(sha256(`jwks-cache test key ${n}`)), kid);

/** What the JWKS endpoint serves; tests change it between calls. */
const served = {
  status: 200,
  body: JSON.stringify({ keys: [key(1, 'k1')] }) as string,
  cacheControl: 'public, max-age=300' as string | null,
  requests: 0,
  delayMs: 0,
};

let server: TestServer;
let fetch: HardenedFetch;
let t: number;
const clock = { now: () => t };

beforeAll(async () => {
  const ca = await createTestCa();
  server = await startHttpsServer(await ca.certFor(DOMAIN), (_req, res) => {
    served.requests++;
    // The answer is what the endpoint served when the request arrived, however late it is sent.
    const { status, cacheControl, body } = served;
    setTimeout(() => {
      res.writeHead(status, {
        'content-type': 'application/json',
        ...(cacheControl ? { 'cache-control': cacheControl } : {}),
      });
      res.end(body);
    }, served.delayMs);
  });
  fetch = createHardenedFetch({ connectTo: server.connectTo(DOMAIN), ca: ca.ca.certPem });
});
afterAll(async () => {
  await fetch?.close();
  await server?.close();
});
beforeEach(() => {
  Object.assign(served, {
    status: 200,
    body: JSON.stringify({ keys: [key(1, 'k1')] }),
    cacheControl: 'public, max-age=300',
    requests: 0,
    delayMs: 0,
  });
  t = Date.parse('2026-06-02T12:00:00Z');
});

const kids = (l: Awaited<ReturnType<JwksCache['get']>>) => (l.ok ? l.jwks.keys.map((k) => k.kid) : l.code);

describe('JwksCache (Core VRP v0.1 §3.1)', () => {
  it('clear() is final: a fetch already in flight neither fills the cache nor answers later callers', async () => {
    const cache = new JwksCache({ fetch, clock });
    served.body = JSON.stringify({ keys: [key(1, 'compromised')] });
    served.delayMs = 200;
    const requestsBefore = served.requests;
    const before = cache.get(JWKS_URL, 'compromised'); // asked before the compromise was known
    // Clear only once that fetch has reached the node (a fixed sleep raced it on a loaded machine).
    while (served.requests === requestsBefore) await new Promise((r) => setTimeout(r, 5));
    cache.clear();
    served.body = JSON.stringify({ keys: [key(2, 'k2')] }); // the node has removed the key
    served.delayMs = 0;
    const after = await cache.get(JWKS_URL, 'compromised');
    expect(kids(after)).toEqual(['k2']);
    expect(kids(await before)).toEqual(['compromised']);
    // Nothing from the pre-clear fetch was stored: the cache still holds the post-clear set.
    expect(kids(await cache.get(JWKS_URL))).toEqual(['k2']);
    expect(served.requests - requestsBefore).toBe(2);
  });

  it('serves from cache for at most 300 s, then refetches', async () => {
    const cache = new JwksCache({ fetch, clock });
    expect(await cache.get(JWKS_URL, 'k1')).toMatchObject({ ok: true, source: 'network' });
    t += 299_999;
    expect(await cache.get(JWKS_URL, 'k1')).toMatchObject({ ok: true, source: 'cache' });
    t += 1;
    expect(await cache.get(JWKS_URL, 'k1')).toMatchObject({ ok: true, source: 'network' });
    expect(served.requests).toBe(2);
  });

  it('Cache-Control shortens the lifetime, never lengthens it; no-store / no-cache mean no reuse', async () => {
    expect(cacheLifetimeSeconds('public, max-age=60', 300)).toBe(60);
    expect(cacheLifetimeSeconds('max-age=86400', 300)).toBe(300);
    expect(cacheLifetimeSeconds('no-store', 300)).toBe(0);
    expect(cacheLifetimeSeconds('public, no-cache', 300)).toBe(0);
    expect(cacheLifetimeSeconds(null, 300)).toBe(300);
    expect(new JwksCache({ fetch, clock, maxAgeSeconds: 3600 })).toBeInstanceOf(JwksCache);

    served.cacheControl = 'max-age=60';
    const cache = new JwksCache({ fetch, clock, maxAgeSeconds: 3600 });
    await cache.get(JWKS_URL);
    t += 59_000;
    expect((await cache.get(JWKS_URL)).ok && (await cache.get(JWKS_URL, 'k1'))).toMatchObject({ source: 'cache' });
    t += 1_000;
    expect(await cache.get(JWKS_URL)).toMatchObject({ source: 'network' });

    served.cacheControl = 'max-age=86400';
    t += 1_000_000;
    const first = await cache.get(JWKS_URL);
    expect(first.ok && first.expiresAt - first.fetchedAt).toBe(300_000);

    served.cacheControl = 'no-store';
    served.requests = 0;
    const noStore = new JwksCache({ fetch, clock });
    await noStore.get(JWKS_URL);
    await noStore.get(JWKS_URL);
    expect(served.requests).toBe(2);
  });

  it('refresh on miss: an unknown kid triggers one refetch that picks up a rotated key', async () => {
    const cache = new JwksCache({ fetch, clock });
    expect(kids(await cache.get(JWKS_URL, 'k1'))).toEqual(['k1']);
    served.body = JSON.stringify({ keys: [key(1, 'k1'), key(2, 'k2')] });
    t += 1_000;
    expect(kids(await cache.get(JWKS_URL, 'k2'))).toEqual(['k1', 'k2']);
    expect(served.requests).toBe(2);
    // The refreshed set is cached: k1 and k2 are both served without a request.
    await cache.get(JWKS_URL, 'k1');
    await cache.get(JWKS_URL, 'k2');
    expect(served.requests).toBe(2);
  });

  it('a kid already seen and still missing re-fetches at most once per 10 s per domain', async () => {
    const cache = new JwksCache({ fetch, clock });
    await cache.get(JWKS_URL, 'k1');
    t += 1_000;
    await cache.get(JWKS_URL, 'nope');
    expect(served.requests).toBe(2);
    for (let i = 0; i < 50; i++) {
      t += 100;
      // Still answered (from cache, without the kid): the verifier will say kid_not_in_jwks.
      expect(kids(await cache.get(JWKS_URL, 'nope'))).toEqual(['k1']);
    }
    expect(served.requests).toBe(2);
    t += 10_000;
    await cache.get(JWKS_URL, 'nope');
    expect(served.requests).toBe(3);
  });

  it('a flood of forged kids causes at most the bucket of re-fetches (a stream of unknown kids cannot flood the node)', async () => {
    const cache = new JwksCache({ fetch, clock });
    await cache.get(JWKS_URL, 'k1');
    expect(served.requests).toBe(1);
    for (let i = 0; i < 1_000; i++) {
      t += 5; // 1 000 forged kids in 5 s: no token refills before the 10 s refill period
      expect(kids(await cache.get(JWKS_URL, `forged-${i}`))).toEqual(['k1']);
    }
    expect(served.requests).toBe(1 + JWKS_MISS_REFETCH_BURST);
    t += JWKS_MIN_REFETCH_INTERVAL_MS; // one token back per interval, never the whole burst at once
    for (let i = 0; i < 100; i++) await cache.get(JWKS_URL, `forged-later-${i}`);
    expect(served.requests).toBe(2 + JWKS_MISS_REFETCH_BURST);
    // The budget is per domain: a known kid is still served from the cache without a request.
    await cache.get(JWKS_URL, 'k1');
    expect(served.requests).toBe(2 + JWKS_MISS_REFETCH_BURST);
  });

  it('concurrent lookups share one in-flight fetch', async () => {
    served.delayMs = 100;
    const cache = new JwksCache({ fetch, clock });
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => cache.get(JWKS_URL, i % 2 ? 'k1' : `unknown-${i}`)));
    expect(all.every((l) => l.ok)).toBe(true);
    expect(served.requests).toBe(1);
  });

  it('a revoked (removed) key stops verifying within the cache window', async () => {
    const cache = new JwksCache({ fetch, clock });
    expect(kids(await cache.get(JWKS_URL, 'k1'))).toEqual(['k1']);
    served.body = JSON.stringify({ keys: [key(2, 'k2')] }); // k1 revoked at the node
    t += 299_000;
    expect(kids(await cache.get(JWKS_URL, 'k1'))).toEqual(['k1']); // still inside the ≤ 300 s window
    t += 1_000;
    expect(kids(await cache.get(JWKS_URL, 'k1'))).toEqual(['k2']); // gone: the verifier now says kid_not_in_jwks
  });

  it('failures are unknown and never fall back to a stale set', async () => {
    const cache = new JwksCache({ fetch, clock });
    await cache.get(JWKS_URL, 'k1');
    served.status = 503;
    t += 300_000;
    expect(await cache.get(JWKS_URL, 'k1')).toMatchObject({ ok: false, code: 'jwks_http_error' });
    served.status = 200;
    expect(await cache.get(JWKS_URL, 'k1')).toMatchObject({ ok: true, source: 'network' });
    // A failing refresh-on-miss is unknown too, and drops the entry that lacked the kid.
    t += 20_000;
    served.body = 'not json';
    expect(await cache.get(JWKS_URL, 'k9')).toMatchObject({ ok: false, code: 'jwks_not_json' });
    served.body = JSON.stringify({ keys: 'nope' });
    expect(await cache.get(JWKS_URL, 'k1')).toMatchObject({ ok: false, code: 'jwks_schema_mismatch' });
    const down = new JwksCache({ fetch, clock });
    expect(await down.get('https://unmapped.keys.invalid/.well-known/jwks.json')).toMatchObject({ ok: false, code: 'jwks_unreachable' });
  });
});
