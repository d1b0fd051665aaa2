/**
 * The JWKS cache's signature memo: a hit skips only the Ed25519 computation (every other check
 * still runs), keys are told apart by RFC 7638 thumbprint (never by kid), and a key the cache
 * drops or replaces verifies nothing from the memo (Core VRP v0.1 §3.1). Real HTTPS JWKS endpoint
 * on 127.0.0.1, real signatures; hits are counted on the memo, crypto is never mocked.
 */
import { createHardenedFetch, type DiscoveryOutcome, type HardenedFetch, JwksCache } from '@vrpkit/agent';
import { createJwsSigner, ed25519PrivateJwkFromSeed, publicJwkOf, sha256 } from '@vrpkit/core';
import type { DiscoveryDocument } from '@vrpkit/protocol';
import { createTestCa, startHttpsServer, type TestServer } from '@vrpkit/testkit/tls';
import { afterAll, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { verifyWithNodeJwks } from '../src/offer/fetch.js';
import type { SignatureMemo } from '../src/offer/signature-memo.js';

const DOMAIN = 'memo.example';
const JWKS_A = `https://${DOMAIN}/a/jwks.json`;
const JWKS_B = `https://${DOMAIN}/b/jwks.json`;
const priv = (n: number) => ed25519PrivateJwkFromSeed(sha256(`signature memo test key ${n}`));
const pub = (n: number, kid: string) => publicJwkOf(priv(n), kid);

/** JWKS documents by path; tests change them between calls. */
const served = new Map<string, string>();
let requests = 0;
let server: TestServer;
let fetch: HardenedFetch;
let t: number;
const clock = { now: () => t };

beforeAll(async () => {
  const ca = await createTestCa();
  server = await startHttpsServer(await ca.certFor(DOMAIN), (req, res) => {
    requests++;
    const body = served.get(req.url ?? '');
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    res.end(body ?? '{}');
  });
  fetch = createHardenedFetch({ connectTo: server.connectTo(DOMAIN), ca: ca.ca.certPem });
});
afterAll(async () => {
  await fetch?.close();
  await server?.close();
});
beforeEach(() => {
  served.clear();
  served.set('/a/jwks.json', JSON.stringify({ keys: [pub(1, 'k1')] }));
  requests = 0;
  t = Date.parse('2026-06-02T12:00:00Z');
});

/** A signed offer envelope (Core VRP v0.1 §5) under key `n` named `kid`, valid until `validUntil`. */
function envelope(n: number, kid: string, validUntil = '2026-06-02T12:10:00Z', id = 'o1') {
  const offer = { kind: 'verified_stay_offer', protocol_version: '0.1', offer_id: id, valid_until: validUntil };
  const jws = createJwsSigner(priv(n), kid).sign(JSON.stringify(offer), { typ: 'JWT' });
  return { kind: 'signed_verified_stay_offer', offer, signature: { format: 'jws_compact', alg: 'EdDSA', kid, jws } };
}

const discoveryFor = (jwksUrl: string): DiscoveryOutcome => ({
  ok: true,
  domain: DOMAIN,
  url: `https://${DOMAIN}/.well-known/vrp.json`,
  discovery: { jwks_url: jwksUrl } as DiscoveryDocument,
});

/** Verify through the cache as `fetchVerifiedStayOffer` does (fetch.ts `verifyWithNodeJwks`). */
async function verify(cache: JwksCache, env: unknown, jwksUrl = JWKS_A) {
  const r = await verifyWithNodeJwks(discoveryFor(jwksUrl), env, { clock, jwksCache: cache });
  if (!r.ok) throw new Error(`JWKS not readable: ${r.code}`);
  return r.verification;
}

/** Spy on the memo's lookups: a result of `true` is a hit, i.e. a skipped Ed25519 computation. */
function hitsOf(memo: SignatureMemo | undefined): MockInstance<SignatureMemo['has']> {
  if (!memo) throw new Error('memo disabled');
  return vi.spyOn(memo, 'has');
}
const hitCount = (spy: MockInstance<SignatureMemo['has']>) => spy.mock.results.filter((r) => r.value === true).length;

describe('signature memo', () => {
  it('a second verification of the same bytes under the same key skips only the signature computation', async () => {
    const cache = new JwksCache({ fetch, clock });
    const spy = hitsOf(cache.signatureMemo);
    const env = envelope(1, 'k1', '2026-06-02T12:04:00Z');
    expect((await verify(cache, env)).status).toBe('verified');
    expect(hitCount(spy)).toBe(0);
    expect((await verify(cache, env)).status).toBe('verified');
    expect(hitCount(spy)).toBe(1);
    expect(cache.signatureMemo?.size).toBe(1);

    // Freshness is still judged against the clock on a hit (Core VRP v0.1 §6); the key set is still live.
    t = Date.parse('2026-06-02T12:04:00Z');
    const expired = await verify(cache, env);
    expect(expired).toMatchObject({ status: 'expired', fresh: false });
    expect(hitCount(spy)).toBe(2);

    // Payload = offer is still compared on a hit (Core VRP v0.1 §7 condition 6).
    t = Date.parse('2026-06-02T12:00:00Z');
    const altered = { ...env, offer: { ...env.offer, offer_id: 'other' } };
    expect(await verify(cache, altered)).toMatchObject({ status: 'invalid', code: 'payload_offer_mismatch' });
    expect(hitCount(spy)).toBe(3);

    // A forged signature over the same signing input is a different memo key: full check, refused.
    const [h, p] = env.signature.jws.split('.');
    const forged = { ...env, signature: { ...env.signature, jws: `${h}.${p}.${Buffer.alloc(64, 7).toString('base64url')}` } };
    expect(await verify(cache, forged)).toMatchObject({ status: 'invalid', code: 'signature_mismatch' });
    expect(hitCount(spy)).toBe(3);
    expect(cache.signatureMemo?.size).toBe(1);

    // The remembered signature over another payload (same key, same signature bytes, a signing
    // input that differs in one character) is not a hit: full check, refused.
    const [, , s] = env.signature.jws.split('.');
    const swapped = envelope(1, 'k1', '2026-06-02T12:04:01Z');
    const [h2, p2] = swapped.signature.jws.split('.');
    const replayed = { ...swapped, signature: { ...swapped.signature, jws: `${h2}.${p2}.${s}` } };
    expect(await verify(cache, replayed)).toMatchObject({ status: 'invalid', code: 'signature_mismatch' });
    expect(hitCount(spy)).toBe(3);
    expect(cache.signatureMemo?.size).toBe(1);
  });

  it('a revoked key verifies nothing from the memo and its entries are dropped', async () => {
    const cache = new JwksCache({ fetch, clock });
    const spy = hitsOf(cache.signatureMemo);
    const old = envelope(1, 'k1');
    expect((await verify(cache, old)).status).toBe('verified');
    expect(cache.signatureMemo?.size).toBe(1);

    // The host revokes k1 and publishes k2; an offer under k2 re-fetches the set at once (refresh on miss).
    served.set('/a/jwks.json', JSON.stringify({ keys: [pub(2, 'k2')] }));
    expect((await verify(cache, envelope(2, 'k2'))).status).toBe('verified');
    expect(requests).toBe(2);
    // Only k2's check is left: k1's went with k1.
    expect(cache.signatureMemo?.size).toBe(1);
    expect(await verify(cache, old)).toMatchObject({ status: 'unverifiable', code: 'kid_not_in_jwks' });
    expect(hitCount(spy)).toBe(0);
  });

  it('a key rotated under the same kid never verifies from the old key’s memo', async () => {
    const cache = new JwksCache({ fetch, clock });
    const spy = hitsOf(cache.signatureMemo);
    const old = envelope(1, 'k1');
    expect((await verify(cache, old)).status).toBe('verified');

    // Same kid, new key material; the old set expired (Core VRP v0.1 §3.1: at most 300 s).
    served.set('/a/jwks.json', JSON.stringify({ keys: [pub(2, 'k1')] }));
    t += 300_000;
    expect(await verify(cache, old)).toMatchObject({ status: 'invalid', code: 'signature_mismatch' });
    expect(hitCount(spy)).toBe(0);
    expect(cache.signatureMemo?.size).toBe(0);
    expect((await verify(cache, envelope(2, 'k1'))).status).toBe('verified');
  });

  it('a different key under the same kid never hits, even while the first key is still held', async () => {
    // Two key sets in one cache, both naming kid k1, with different keys: the memo is keyed by thumbprint, not kid.
    served.set('/b/jwks.json', JSON.stringify({ keys: [pub(2, 'k1')] }));
    const cache = new JwksCache({ fetch, clock });
    const spy = hitsOf(cache.signatureMemo);
    const env = envelope(1, 'k1');
    expect((await verify(cache, env, JWKS_A)).status).toBe('verified');
    expect(await verify(cache, env, JWKS_B)).toMatchObject({ status: 'invalid', code: 'signature_mismatch' });
    expect(hitCount(spy)).toBe(0);
    // The first key's entry is intact and still hits under its own key set.
    expect((await verify(cache, env, JWKS_A)).status).toBe('verified');
    expect(hitCount(spy)).toBe(1);
  });

  it('a key set the cache did not load is verified in full', async () => {
    const cache = new JwksCache({ fetch, clock });
    const env = envelope(1, 'k1');
    expect((await verify(cache, env)).status).toBe('verified');
    const memo = cache.signatureMemo as SignatureMemo;
    // A structurally equal JWK object that is not the cache's own is not a held key.
    expect(memo.keyFor({ ...pub(1, 'k1') }, 'a.b', Buffer.alloc(64))).toBeUndefined();
  });

  it('is bounded, cleared with the cache, and can be disabled', async () => {
    const cache = new JwksCache({ fetch, clock, signatureMemoEntries: 2 });
    for (const id of ['o1', 'o2', 'o3']) expect((await verify(cache, envelope(1, 'k1', undefined, id))).status).toBe('verified');
    expect(cache.signatureMemo?.size).toBe(2);
    cache.clear();
    expect(cache.signatureMemo?.size).toBe(0);

    const off = new JwksCache({ fetch, clock, signatureMemoEntries: 0 });
    expect(off.signatureMemo).toBeUndefined();
    const env = envelope(1, 'k1');
    expect((await verify(off, env)).status).toBe('verified');
    expect((await verify(off, env)).status).toBe('verified');
  });
});
