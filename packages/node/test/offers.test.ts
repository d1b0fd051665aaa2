/**
 * Node outputs over real https (dev CA, https://{domain} dialled on a loopback port):
 * discovery, JWKS, available and signed-negative offers validate against the official
 * schemas (ajv, 2020-12), verify with jose and with the reference verifier
 * @vacationrentalprotocol/vrp-verify, and the JWS payload is byte-identical to `offer` in
 * the response body.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Jwks, quoteChecks, safeToQuote, verifyOffer } from '@vacationrentalprotocol/vrp-verify';
import { addCalendarBlock, addCalendarFeed, type ServedNode } from '@vrpkit/node';
import { DISCOVERY_PATH, JWKS_PATH, OFFER_ENDPOINT_PATH, type OfferEnvelope, type VrpJwks } from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, schemaErrors, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { compactVerify, createLocalJWKSet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'offers-node.example';
const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('offers');
const dataDir = join(tmp.dir, 'node');
let node: ServedNode;
let client: NodeClient;

beforeAll(async () => {
  ({ node, client } = await serveTestNode(DOMAIN, dataDir, clock, {
    // Nights 2027-03-10 .. 2027-03-13 are taken (a booking from another channel).
    beforeServe: () => addCalendarBlock({ dataDir, from: '2027-03-10', to: '2027-03-14', kind: 'booking', clock }),
  }));
});

afterAll(() => closeTestNode({ node, client }, tmp));

async function jwks(): Promise<VrpJwks> {
  return JSON.parse((await client.get(JWKS_PATH)).text) as VrpJwks;
}

async function offer(query: string): Promise<{ text: string; envelope: OfferEnvelope }> {
  const res = await client.get(`${OFFER_ENDPOINT_PATH}?${query}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { text: res.text, envelope: JSON.parse(res.text) as OfferEnvelope };
}

/** The `offer` member exactly as it appears in the response body. */
function rawOfferMember(body: string): string {
  const start = body.indexOf('"offer":') + '"offer":'.length;
  const end = body.indexOf(',"signature":');
  return body.slice(start, end);
}

const referenceVerify = async (envelope: OfferEnvelope) =>
  verifyOffer({
    envelope: envelope as unknown as Record<string, unknown>,
    jwks: (await jwks()) as unknown as Jwks,
    now: new Date(clock.now()),
  });

describe('well-known documents', () => {
  it('serves a discovery document valid against the official schema, on the canonical origin', async () => {
    const res = await client.get(DISCOVERY_PATH);
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.text);
    expect(schemaErrors('discovery', doc)).toEqual([]);
    expect(doc).toMatchObject({
      canonical_domain: DOMAIN,
      jwks_url: `https://${DOMAIN}${JWKS_PATH}`,
      verified_stay_offer_endpoint: `https://${DOMAIN}${OFFER_ENDPOINT_PATH}`,
      operator: { key_custody: 'self' },
    });
    // The listening port is deployment detail: no document carries it.
    expect(res.text).not.toContain(String(node.port));
  });

  it('serves a JWKS valid against the official schema, public halves only, cacheable for at most 300 s', async () => {
    const res = await client.get(JWKS_PATH);
    const doc = JSON.parse(res.text) as VrpJwks;
    expect(schemaErrors('jwks', doc)).toEqual([]);
    expect(doc.keys).toHaveLength(1);
    expect(doc.keys[0]!.kid).toBe(`${DOMAIN}-2027-02-01-01`);
    expect(res.text).not.toContain('"d"');
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(300);
  });
});

describe('an available stay', () => {
  const query = 'check_in=2027-03-01&check_out=2027-03-05&guests=2';

  it('is a schema-valid signed envelope whose JWS payload is the exact bytes of `offer` in the body', async () => {
    const { text, envelope } = await offer(query);
    expect(schemaErrors('offer', envelope)).toEqual([]);
    const payloadSegment = envelope.signature.jws.split('.')[1]!;
    expect(Buffer.from(payloadSegment, 'base64url').toString('utf8')).toBe(rawOfferMember(text));
    const header = JSON.parse(Buffer.from(envelope.signature.jws.split('.')[0]!, 'base64url').toString('utf8'));
    expect(header).toEqual({ alg: 'EdDSA', typ: 'JWT', kid: envelope.signature.kid });
  });

  it('carries all twelve Core VRP v0.1 §5 payload fields and a reconciled, exact, no-add-on-fee price', async () => {
    const { envelope } = await offer(query);
    const o = envelope.offer;
    for (const f of [
      'kind',
      'protocol_version',
      'canonical_domain',
      'node_id',
      'generated_at',
      'valid_until',
      'request',
      'property',
      'availability',
      'price',
      'booking',
      'agent_permission',
    ]) {
      expect(o).toHaveProperty(f);
    }
    expect(o.generated_at).toBe('2027-02-01T09:00:00Z');
    expect(o.valid_until).toBe('2027-02-01T09:15:00Z');
    expect(o.availability).toMatchObject({ available: true, source: 'official_host_domain' });
    const p = o.price;
    const nights = p.breakdown!.reduce((s, n) => s + n.nightly_rate, 0);
    const adj = p.adjustments!.reduce((s, a) => s + a.amount, 0);
    expect(nights + adj).toBe(p.total);
    expect(p).toMatchObject({ minor_unit: true, exact: true, no_add_on_fees: true, agent_total: p.total, public_total: p.total });
    expect(p.reconciliation).toEqual({
      nightly_subtotal: nights,
      adjustments_total: adj,
      computed_total: p.total,
      matches_quoted_total: true,
    });
    expect(p.adjustments!.every((a) => a.scope === 'stay')).toBe(true);
    const url = new URL(o.booking.direct_booking_url);
    expect(url.host).toBe(DOMAIN);
    expect(url.pathname).toBe('/book');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ checkIn: '2027-03-01', checkOut: '2027-03-05', guests: '2' });
  });

  it('verifies with jose against the served JWKS', async () => {
    const { text, envelope } = await offer(query);
    const { payload, protectedHeader } = await compactVerify(envelope.signature.jws, createLocalJWKSet((await jwks()) as never), {
      algorithms: ['EdDSA'],
    });
    expect(protectedHeader.kid).toBe(envelope.signature.kid);
    expect(new TextDecoder().decode(payload)).toBe(rawOfferMember(text));
  });

  it('verifies with the reference verifier and is safe to quote', async () => {
    const { envelope } = await offer(query);
    const v = await referenceVerify(envelope);
    expect(v).toMatchObject({ status: 'verified', code: null, fresh: true, payloadMatchesOffer: true });
    expect(quoteChecks(v)).toEqual({ ok: true, failures: [] });
    expect(safeToQuote(v)).toBe(true);
  });

  it('accepts the camelCase date aliases and a language, echoed in the signed request', async () => {
    const { envelope } = await offer('checkIn=2027-03-01&checkOut=2027-03-05&guests=2&language=sv-SE');
    expect(envelope.offer.request).toMatchObject({
      check_in: '2027-03-01',
      check_out: '2027-03-05',
      guests: 2,
      nights: 4,
      language: 'sv-SE',
    });
  });
});

describe('signed negatives name their reason', () => {
  const cases = [
    { name: 'unavailable dates', query: 'check_in=2027-03-08&check_out=2027-03-12&guests=2', reason: 'not_available' },
    { name: 'a stay shorter than the minimum', query: 'check_in=2027-03-01&check_out=2027-03-02&guests=2', reason: 'below_minimum_stay' },
    { name: 'too many guests', query: 'check_in=2027-03-01&check_out=2027-03-05&guests=7', reason: 'exceeds_max_guests' },
    { name: 'a stay longer than the maximum', query: 'check_in=2027-04-01&check_out=2027-05-01&guests=2', reason: 'above_maximum_stay' },
  ];
  for (const c of cases) {
    it(`${c.name}: signed, schema-valid, verified, never safe to quote (${c.reason})`, async () => {
      const { envelope } = await offer(c.query);
      expect(schemaErrors('offer', envelope)).toEqual([]);
      expect(envelope.offer.availability).toMatchObject({ available: false, reason: c.reason });
      expect(envelope.offer.agent_permission.may_quote_as_official_direct_offer).toBe(false);
      expect(envelope.offer.price).toMatchObject({ exact: false, agent_total: null, reconciliation: null });
      const v = await referenceVerify(envelope);
      expect(v.status).toBe('verified');
      expect(safeToQuote(v)).toBe(false);
      expect(quoteChecks(v).failures).toEqual(expect.arrayContaining(['availability_not_true', 'quote_permission_not_granted']));
      expect((v.payload as { availability: { reason: string } }).availability.reason).toBe(c.reason);
    });
  }

  it("points at the host's own nearest windows when the dates are taken", async () => {
    const { envelope } = await offer('check_in=2027-03-08&check_out=2027-03-12&guests=2');
    expect(envelope.host_alternatives).toMatchObject({
      shorten_to: { check_in: '2027-03-08', check_out: '2027-03-10', nights: 2 },
      next_available: { check_in: '2027-03-14', check_out: '2027-03-18', nights: 4 },
    });
  });

  it('the page calendar shows the same availability and nightly rates the offers are priced from', async () => {
    const days = await node.service.calendar('2027-03-08', 8);
    expect(days.map((d) => [d.date, d.available])).toEqual([
      ['2027-03-08', true],
      ['2027-03-09', true],
      ['2027-03-10', false],
      ['2027-03-11', false],
      ['2027-03-12', false],
      ['2027-03-13', false],
      ['2027-03-14', true],
      ['2027-03-15', true],
    ]);
    const { envelope } = await offer('check_in=2027-03-14&check_out=2027-03-16&guests=2');
    expect(envelope.offer.price.breakdown!.map((n) => n.nightly_rate)).toEqual([days[6]!.nightly_rate, days[7]!.nightly_rate]);
    expect(days.filter((d) => !d.available).every((d) => d.nightly_rate === null)).toBe(true);
  });

  it('a stale calendar (a feed never synced) signs available: false with calendar_stale and reports the source', async () => {
    // The file exists (add-feed refuses a missing one) but is never synced.
    const feed = join(tmp.dir, 'never-synced.ics');
    writeFileSync(feed, '');
    await addCalendarFeed({ dataDir, name: 'other-channel', file: feed, clock });
    const { envelope } = await offer('check_in=2027-03-01&check_out=2027-03-05&guests=2');
    expect(schemaErrors('offer', envelope)).toEqual([]);
    expect(envelope.offer.availability).toMatchObject({
      available: false,
      reason: 'calendar_stale',
      calendar_freshness: { safe: false, checked_sources: ['other-channel'], stale_sources: ['other-channel'], active_import_count: 1 },
    });
    const v = await referenceVerify(envelope);
    expect(v.status).toBe('verified');
    expect(safeToQuote(v)).toBe(false);
    expect(quoteChecks(v).failures).toContain('availability_not_true');
  });
});
