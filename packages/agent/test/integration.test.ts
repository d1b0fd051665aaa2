/**
 * The agent against a real node (`serveNode` from @vrpkit/node) over real https with the node's
 * dev CA, reached at https://villa.example through the hardened fetch's connect-to map; and
 * against hostile or broken servers (our own raw https servers with a test CA).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createHardenedFetch,
  fetchDiscovery,
  fetchOfferEnvelope,
  fetchVerifiedStayOffer,
  type HardenedFetch,
  JwksCache,
  type StayOfferVerification,
  verifyStayOfferEnvelope,
} from '@vrpkit/agent';
import { initNode, revokeKey, rotateKey, type ServedNode, serveNode } from '@vrpkit/node';
import { officialSchema } from '@vrpkit/protocol';
import { baseOffer, FIXTURES, mintEnvelope, TEST_JWKS } from '@vrpkit/testkit/minted';
import { createTestCa, endlessBody, startHttpsServer, type TestServer } from '@vrpkit/testkit/tls';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'villa.example';
const ajv = new Ajv2020({ strict: false, allErrors: true });
const validateResult = ajv.compile(officialSchema('verificationResult'));
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const STAY = { check_in: day(40), check_out: day(43), guests: 2 };

function expectAllDependentUnknown(r: StayOfferVerification) {
  expect(r.status).toBe('unknown');
  expect(r.safe_to_quote).toBe(false);
  expect(r.result).toBeNull();
  for (const name of ['signature', 'offer_freshness', 'availability', 'price', 'direct_booking_url', 'agent_permission'] as const) {
    expect(r.facts[name].value, name).toBe('unknown');
  }
}

describe('against a real node over https', () => {
  let root: string;
  let dataDir: string;
  let node: ServedNode;
  let fetch: HardenedFetch;
  let t = Date.now();
  const clock = { now: () => t };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'vrpkit-agent-int-'));
    dataDir = join(root, 'node');
    await initNode({ domain: DOMAIN, dataDir });
    node = await serveNode({ dataDir, dev: true });
    fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem });
  });
  afterAll(async () => {
    await fetch?.close();
    await node?.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  });

  it('without a clock (e.g. JavaScript passing the older `now` option) judges freshness by the system clock, not a TypeError (issue 36)', async () => {
    const deps = { fetch, jwksCache: new JwksCache({ fetch }), now: () => Date.now() } as unknown as Parameters<
      typeof fetchVerifiedStayOffer
    >[2];
    const r = await fetchVerifiedStayOffer(`https://${DOMAIN}`, STAY, deps);
    expect(r).toMatchObject({ status: 'verified', code: null, safe_to_quote: true, failures: [] });
  });

  it('discovery → JWKS → offer → safe to quote, in the official result shape', async () => {
    const r = await fetchVerifiedStayOffer(`https://${DOMAIN}`, STAY, { fetch, clock, jwksCache: new JwksCache({ fetch, clock }) });
    expect(r).toMatchObject({ status: 'verified', code: null, safe_to_quote: true, failures: [] });
    expect(validateResult(r.result), JSON.stringify(validateResult.errors)).toBe(true);
    expect(r.result?.agent_citation.quote_status).toBe('official_host_domain_verified_offer');
    expect(r.quote?.phrase).toBe('I found the official host-domain verified offer for this stay.');
    expect(new URL(r.quote?.direct_booking_url as string).hostname).toBe(DOMAIN);
    expect(r.offer?.request).toMatchObject(STAY);
    expect(Object.values(r.facts).every((f) => f.value === 'affirmed')).toBe(true);
    expect(r.sources).toEqual({
      discovery_url: `https://${DOMAIN}/.well-known/vacation-rental.json`,
      jwks_url: `https://${DOMAIN}/.well-known/jwks.json`,
      offer_url: expect.stringContaining(`https://${DOMAIN}/api/verified-stay-offer?check_in=${STAY.check_in}`),
    });
  });

  it('a signed negative (too many guests) is verified but not quoteable, with availability negated', async () => {
    const r = await fetchVerifiedStayOffer(DOMAIN, { ...STAY, guests: 40 }, { fetch, clock, jwksCache: new JwksCache({ fetch, clock }) });
    expect(r.status).toBe('verified');
    expect(r.safe_to_quote).toBe(false);
    expect(r.facts.availability.value).toBe('negated');
    expect(r.safe_to_cite_verified_unavailable).toBe(true);
    expect(r.failures).toEqual(['availability_not_true', 'price_not_exact', 'quote_permission_not_granted']);
    // Its totals are null: the official result shape cannot carry them, so no result is invented.
    expect(r.offer?.price.agent_total).toBeNull();
    expect(r.result).toBeNull();
  });

  it('fetchVerifiedStayOffer, whose own parse of the body proves the offer is the signed text, answers as verifying a copy', async () => {
    const jwksCache = new JwksCache({ fetch, clock });
    const discovery = await fetchDiscovery(DOMAIN, { fetch });
    if (!discovery.ok) throw new Error(discovery.message);
    // The node serves the same signed offer while it caches it; a new one may be signed between two requests.
    for (let attempt = 0; attempt < 3; attempt++) {
      const fetched = await fetchVerifiedStayOffer(DOMAIN, STAY, { fetch, clock, jwksCache });
      const copy = await verifyStayOfferEnvelope(discovery, await fetchOfferEnvelope(discovery.discovery, STAY, { fetch }), STAY, {
        clock,
        jwksCache,
      });
      if (fetched.offer?.booking.offer_id !== copy.offer?.booking.offer_id) continue;
      expect(fetched).toMatchObject({ status: 'verified', safe_to_quote: true });
      expect(fetched).toEqual(copy);
      return;
    }
    throw new Error('the node signed a new offer for every request');
  });

  it('rotation is picked up by refresh-on-miss; revocation is effective within the cache window', async () => {
    const cache = new JwksCache({ fetch, clock });
    const discovery = await fetchDiscovery(DOMAIN, { fetch });
    if (!discovery.ok) throw new Error(discovery.message);
    const signedByOldKey = await fetchOfferEnvelope(discovery.discovery, STAY, { fetch });
    const before = await verifyStayOfferEnvelope(discovery, signedByOldKey, STAY, { clock, jwksCache: cache });
    expect(before.safe_to_quote).toBe(true);
    const oldKid = before.verification?.header?.kid as string;

    // Rotation: the node now signs with a kid the cached JWKS does not hold → one refetch → verified.
    const rotated = await rotateKey({ dataDir });
    expect(rotated.kid).not.toBe(oldKid);
    t += 1_000;
    const after = await fetchVerifiedStayOffer(DOMAIN, STAY, { fetch, clock, jwksCache: cache });
    expect(after.verification?.header?.kid).toBe(rotated.kid);
    expect(after.safe_to_quote).toBe(true);

    // Revocation: an offer the old key signed verifies only while the cached set that holds the key lives (≤ 300 s).
    await revokeKey({ dataDir, kid: oldKid });
    t += 299_000;
    expect((await verifyStayOfferEnvelope(discovery, signedByOldKey, STAY, { clock, jwksCache: cache })).status).toBe('verified');
    t += 1_000;
    const revoked = await verifyStayOfferEnvelope(discovery, signedByOldKey, STAY, { clock, jwksCache: cache });
    expect(revoked).toMatchObject({ status: 'unverifiable', code: 'kid_not_in_jwks', safe_to_quote: false });
    expect(revoked.facts.signature.value).toBe('unknown');
  });

  it('JWKS endpoint down (node gone after the cache expired) → unknown, never a stale pass', async () => {
    const cache = new JwksCache({ fetch, clock });
    const discovery = await fetchDiscovery(DOMAIN, { fetch });
    expect(discovery.ok).toBe(true);
    if (!discovery.ok) return;
    const obtained = await fetchOfferEnvelope(discovery.discovery, STAY, { fetch });
    expect((await verifyStayOfferEnvelope(discovery, obtained, STAY, { clock, jwksCache: cache })).safe_to_quote).toBe(true);
    await node.close();
    t += 300_000;
    const r = await verifyStayOfferEnvelope(discovery, obtained, STAY, { clock, jwksCache: cache });
    expectAllDependentUnknown(r);
    expect(r.code).toBe('jwks_unreachable');
    const gone = await fetchVerifiedStayOffer(DOMAIN, STAY, { fetch, clock, jwksCache: cache });
    expectAllDependentUnknown(gone);
    expect(gone.code).toBe('discovery_unreachable');
    expect(gone.facts.canonical_domain.value).toBe('unknown');
  });
});

describe('against hostile or broken servers', () => {
  let server: TestServer;
  let fetch: HardenedFetch;
  const t = Date.parse('2026-06-02T12:05:00Z');
  const clock = { now: () => t };
  const mode = { discovery: 'ok' as string, offer: 'ok' as string };
  const HOST = 'example-host.invalid';
  const stay = { check_in: '2026-09-12', check_out: '2026-09-15', guests: 2 };
  const discoveryDoc = (over: Record<string, unknown> = {}) =>
    JSON.stringify({
      protocol: 'vacation-rental-protocol',
      protocol_version: '0.1',
      canonical_domain: HOST,
      jwks_url: `https://${HOST}/.well-known/jwks.json`,
      verified_stay_offer_endpoint: `https://${HOST}/api/verified-stay-offer`,
      ...over,
    });

  beforeAll(async () => {
    const ca = await createTestCa();
    server = await startHttpsServer(await ca.certFor(HOST), (req, res) => {
      const path = new URL(req.url ?? '/', `https://${HOST}`).pathname;
      const json = (body: string, status = 200) => res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      if (path === '/.well-known/vacation-rental.json') {
        if (mode.discovery === 'stall') return void res.writeHead(200).write('{');
        if (mode.discovery === '500') return json('{}', 500);
        if (mode.discovery === 'not-json') return json('<html>');
        if (mode.discovery === 'other-domain') return json(discoveryDoc({ canonical_domain: 'other.example' }));
        if (mode.discovery === 'jwks-elsewhere') return json(discoveryDoc({ jwks_url: 'https://cdn.evil.example/.well-known/jwks.json' }));
        if (mode.discovery === 'offer-http')
          return json(discoveryDoc({ verified_stay_offer_endpoint: `http://${HOST}/api/verified-stay-offer` }));
        if (mode.discovery === 'wrong-protocol') return json(discoveryDoc({ protocol_version: '0.2' }));
        if (mode.discovery === 'redirect-away')
          return void res.writeHead(302, { location: 'https://other.example/.well-known/vacation-rental.json' }).end();
        return json(discoveryDoc());
      }
      if (path === '/.well-known/jwks.json') return json(JSON.stringify(TEST_JWKS));
      if (path === '/api/verified-stay-offer') {
        if (mode.offer === 'endless') return endlessBody(res, 64 * 1024);
        if (mode.offer === 'not-envelope') return json(JSON.stringify({ offer: baseOffer() }));
        if (mode.offer === 'other-dates') return json(JSON.stringify(mintEnvelope({ ...baseOffer(), request: { ...stay, guests: 6 } })));
        if (mode.offer === 'tampered') {
          const env = mintEnvelope(baseOffer());
          env.offer.price.agent_total = 1;
          return json(JSON.stringify(env));
        }
        return json(JSON.stringify(mintEnvelope({ ...baseOffer(), request: stay })));
      }
      json('{}', 404);
    });
    fetch = createHardenedFetch({
      connectTo: server.connectTo(HOST, 'other.example'),
      ca: ca.ca.certPem,
      totalTimeoutMs: 1_000,
      maxBytes: 256 * 1024,
    });
  });
  afterAll(async () => {
    await fetch?.close();
    await server?.close();
  });

  const run = (discovery: string, offer = 'ok') => {
    mode.discovery = discovery;
    mode.offer = offer;
    return fetchVerifiedStayOffer(HOST, stay, { fetch, clock, jwksCache: new JwksCache({ fetch, clock }) });
  };

  it('the well-behaved stand-in node (serving official vector 01) yields the official example result', async () => {
    const r = await run('ok');
    expect(r).toMatchObject({ status: 'verified', safe_to_quote: true });
    expect(validateResult(r.result)).toBe(true);
    // The published example differs only in its placeholder booking URL.
    const example = JSON.parse(readFileSync(new URL('verified-stay-offer-verification-result.safe-to-quote.v0.1.json', FIXTURES), 'utf8'));
    example.official_offer_summary.direct_booking_url = 'https://example-host.invalid/book?offer_id=test-vector';
    expect(r.result).toEqual(example);
  });

  it.each([
    ['stall', 'discovery_unreachable'],
    ['500', 'discovery_http_error'],
    ['not-json', 'discovery_not_json'],
    ['other-domain', 'canonical_domain_mismatch'],
    ['jwks-elsewhere', 'jwks_url_off_domain'],
    ['offer-http', 'offer_endpoint_off_domain'],
    ['wrong-protocol', 'protocol_mismatch'],
    ['redirect-away', 'discovery_unreachable'],
  ])('discovery %s → unknown (%s)', async (m, code) => {
    const r = await run(m);
    expectAllDependentUnknown(r);
    expect(r.code).toBe(code);
    expect(r.failures).toContain('discovery_not_verified');
  });

  it('an endless offer body → unknown within the caps', async () => {
    const r = await run('ok', 'endless');
    expectAllDependentUnknown(r);
    expect(r.code).toBe('offer_unreachable');
    expect(r.reason).toContain('response_too_large');
  });

  it('a response that is not an envelope → unknown (schema mismatch)', async () => {
    const r = await run('ok', 'not-envelope');
    expectAllDependentUnknown(r);
    expect(r.code).toBe('offer_schema_mismatch');
  });

  it('a tampered plaintext offer → invalid, signature negated, facts unknown', async () => {
    const r = await run('ok', 'tampered');
    expect(r).toMatchObject({ status: 'invalid', code: 'payload_offer_mismatch', safe_to_quote: false, result: null });
    expect(r.facts.signature.value).toBe('negated');
    expect(r.facts.price.value).toBe('unknown');
  });

  it('a validly signed offer for another stay is not quoteable (offer_request_mismatch)', async () => {
    const r = await run('ok', 'other-dates');
    expect(r).toMatchObject({ status: 'verified', safe_to_quote: false, failures: ['offer_request_mismatch'] });
    // Its signature is good, but it answers another question: nothing about the stay asked is
    // affirmed or negated (Core VRP v0.1 §9), and no official result is issued for it.
    expect(r.facts.signature.value).toBe('affirmed');
    expect(r.facts.availability.value).toBe('unknown');
    expect(r.facts.price.value).toBe('unknown');
    expect(r.safe_to_cite_verified_unavailable).toBe(false);
    expect(r.must_fetch_fresh_offer).toBe(true);
    expect(r.result).toBeNull();
  });
});
