/**
 * Protocol as the one reader of documents: a served discovery document (Core VRP v0.1 §2), a
 * signed offer's payload (§5), the stay window a node applies after parsing a request once (§4),
 * the RFC 3339 `dateTime` of the official schemas, the surfaces and paths by name, and the one
 * code registry the offer-request and booking tables are views of.
 */
import {
  BOOKING_ERRORS,
  BookingReceiptPayloadSchema,
  checkDiscoveryDocument,
  DATE_TIME_PATTERN,
  DiscoveryDocumentSchema,
  dateTimeMs,
  NODE_PATHS,
  OFFER_REQUEST_ERRORS,
  PROTOCOL_CODES,
  parseOfferRequest,
  readOfferPayload,
  SURFACES,
  signedStayOf,
  stayWindowRefusal,
  TOOL_SURFACES,
} from '@vrpkit/protocol';
import { baseOffer } from '@vrpkit/testkit/minted';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const DOMAIN = 'villa.example';
const DOC = {
  protocol: 'vacation-rental-protocol',
  protocol_version: '0.1',
  canonical_domain: DOMAIN,
  node_id: 'node-1',
  jwks_url: `https://${DOMAIN}/.well-known/jwks.json`,
  verified_stay_offer_endpoint: `https://${DOMAIN}/api/verified-stay-offer`,
  structure_declarations: { sauna: { value: true, class: 'attested', verify: 'photo' } },
};

describe('checkDiscoveryDocument (Core VRP v0.1 §2)', () => {
  it('accepts a conforming document for its own host, keeping members the schema leaves open', () => {
    const r = checkDiscoveryDocument(DOC, DOMAIN);
    expect(r).toEqual({ ok: true, document: DOC });
  });

  it('names the first rule broken, in the spec order, whatever else is wrong', () => {
    const code = (doc: unknown) => {
      const r = checkDiscoveryDocument(doc, DOMAIN);
      return r.ok ? 'ok' : r.code;
    };
    expect(code([DOC])).toBe('discovery_schema_mismatch');
    expect(code({ ...DOC, protocol_version: '0.2', canonical_domain: 'other.example' })).toBe('protocol_mismatch');
    expect(code({ ...DOC, canonical_domain: 'Villa.Example', jwks_url: 'http://x' })).toBe('discovery_schema_mismatch');
    expect(code({ ...DOC, canonical_domain: 'other.example', jwks_url: 'http://x' })).toBe('canonical_domain_mismatch');
    expect(code({ ...DOC, jwks_url: `http://${DOMAIN}/.well-known/jwks.json` })).toBe('jwks_url_off_domain');
    expect(code({ ...DOC, jwks_url: `https://${DOMAIN}/keys.json` })).toBe('jwks_url_off_domain');
    expect(code({ ...DOC, jwks_url: `https://evil.example/.well-known/jwks.json` })).toBe('jwks_url_off_domain');
    expect(code({ ...DOC, verified_stay_offer_endpoint: `https://${DOMAIN}:8443/offer` })).toBe('offer_endpoint_off_domain');
    // A mistyped optional member is the schema's refusal too (the official schema's types).
    expect(code({ ...DOC, capabilities: { live_availability: 'yes' } })).toBe('discovery_schema_mismatch');
    expect(code({ ...DOC, node_id: '' })).toBe('discovery_schema_mismatch');
  });

  it('accepts exactly what the schema accepts, for the host the document names', () => {
    const member = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant(null), fc.constant(undefined));
    const doc = fc.record({
      protocol: fc.oneof(fc.constant(DOC.protocol), member),
      canonical_domain: fc.oneof(fc.constant(DOMAIN), member),
      jwks_url: fc.oneof(fc.constant(DOC.jwks_url), member),
      node_id: member,
    });
    fc.assert(
      fc.property(doc, (d) => {
        const value = { ...DOC, ...d };
        if (value.node_id === undefined) delete (value as { node_id?: unknown }).node_id;
        const schema = DiscoveryDocumentSchema.safeParse(value).success && value.canonical_domain === DOMAIN;
        expect(checkDiscoveryDocument(value, DOMAIN).ok).toBe(schema);
      }),
    );
  });
});

describe('RFC 3339 dateTime (official schemas)', () => {
  it('one pattern for the schema and the verifiers: UTC with Z only, never a bare date or a prose date', () => {
    expect(dateTimeMs('2026-06-02T12:10:00Z')).toBe(Date.parse('2026-06-02T12:10:00Z'));
    expect(dateTimeMs('2026-06-02T12:10:00.250Z')).toBe(Date.parse('2026-06-02T12:10:00.250Z'));
    for (const bad of ['2026-06-02', 'June 2, 2026', '2026-06-02T12:10:00+02:00', '2026-06-02 12:10:00Z', 1_780_000_000_000, null]) {
      expect(dateTimeMs(bad)).toBeNaN();
    }
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        ),
        (s) => {
          expect(BookingReceiptPayloadSchema.shape.issued_at.safeParse(s).success).toBe(DATE_TIME_PATTERN.test(s));
        },
      ),
    );
  });
});

describe('stayWindowRefusal: a request parsed once, judged against today later', () => {
  it('parse with a context = parse without one, then the window (the same result, code for code)', () => {
    const day = fc.integer({ min: 0, max: 800 }).map((n) => new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10));
    const input = fc.record({ check_in: day, check_out: day, guests: fc.integer({ min: 0, max: 3 }) });
    const context = fc.record({ today: day, horizonDays: fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }) });
    fc.assert(
      fc.property(input, context, (args, ctx) => {
        const once = parseOfferRequest(args, ctx);
        const first = parseOfferRequest(args);
        const later = first.ok ? stayWindowRefusal(first.request, ctx) : null;
        const split = !first.ok ? first : later ? { ok: false, error: later } : first;
        expect(split).toEqual(once);
      }),
    );
  });
});

describe('readOfferPayload / signedStayOf (Core VRP v0.1 §5)', () => {
  it('reads the official vector payload and the stay it was signed for', () => {
    const offer = readOfferPayload(baseOffer());
    expect(offer?.kind).toBe('verified_stay_offer');
    const stay = offer && signedStayOf(offer);
    expect(stay).toMatchObject({
      check_in: offer?.request?.check_in,
      check_out: offer?.request?.check_out,
      guests: offer?.request?.guests,
    });
    expect(stay?.nights).toBeGreaterThan(0);
  });

  it('refuses what is not an offer, and a stay that cannot be one', () => {
    expect(readOfferPayload({ kind: 'verified_stay_offer' })).toBeNull();
    expect(readOfferPayload('x')).toBeNull();
    const offer = readOfferPayload(baseOffer());
    if (!offer?.request) throw new Error('the vector offer names a stay');
    expect(signedStayOf({ ...offer, request: { ...offer.request, check_out: offer.request.check_in } })).toBeNull();
    const { request: _none, ...withoutStay } = offer;
    expect(signedStayOf(withoutStay)).toBeNull();
  });
});

describe('names and codes in one place', () => {
  it('the tool surfaces are surfaces; every path a node serves is named once', () => {
    for (const s of TOOL_SURFACES) expect(SURFACES).toContain(s);
    const paths = Object.values(NODE_PATHS);
    expect(new Set(paths).size).toBe(paths.length);
    expect(NODE_PATHS.book).toBe('/book');
  });

  it('the offer-request and booking tables are views of the registry', () => {
    for (const [code, message] of Object.entries(OFFER_REQUEST_ERRORS)) {
      expect(PROTOCOL_CODES[code as keyof typeof PROTOCOL_CODES]).toEqual({ status: 400, message });
    }
    for (const [code, status] of Object.entries(BOOKING_ERRORS)) {
      expect(PROTOCOL_CODES[code as keyof typeof PROTOCOL_CODES]).toMatchObject({ status });
    }
  });
});
