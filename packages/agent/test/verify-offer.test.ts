import { readFileSync } from 'node:fs';
import * as reference from '@vacationrentalprotocol/vrp-verify';
import { bookingUrlFailure, isOnCanonicalDomain, normalizeHost, quoteChecks, safeToQuote, verifyOffer } from '@vrpkit/agent';
import { ed25519PrivateJwkFromSeed, publicJwkOf, sha256, sha256Hex } from '@vrpkit/core';
import {
  baseOffer,
  envelopeWithJws,
  FIXTURES,
  FRESH_NOW,
  hs256WithPublicKey,
  type Loose,
  loadVector,
  mintEnvelope,
  rawJws,
  TEST_JWKS,
  TEST_KID,
  testSigner,
  VECTOR_FILES,
} from '@vrpkit/testkit/minted';
import { describe, expect, it } from 'vitest';
import { offerRequestUrl } from '../src/offer/fetch.js';
import { readOffer, verifyReadOffer } from '../src/offer/verify.js';

const REFERENCE_STATUS: Record<string, string> = {
  '01-valid-fresh.json': 'verified',
  '02-valid-expired.json': 'expired',
  '03-tampered-signature.json': 'invalid',
  '04-unknown-kid.json': 'unverifiable',
  '05-wrong-key.json': 'invalid',
};

describe('official offer vectors (fixtures/offer, Apache-2.0)', () => {
  it('are byte-identical to the files PROVENANCE.md lists', () => {
    const rows = [...readFileSync(new URL('PROVENANCE.md', FIXTURES), 'utf8').matchAll(/^\| `([^`]+)` .*`([0-9a-f]{64})` \|$/gm)];
    expect(rows.length).toBe(7);
    for (const [, file, digest] of rows) expect(sha256Hex(readFileSync(new URL(file as string, FIXTURES))), file).toBe(digest);
  });

  for (const file of VECTOR_FILES) {
    it(`${file}: exactly the expected {verified, reason, fresh} and the reference status`, () => {
      const v = loadVector(file);
      const r = verifyOffer({ envelope: v.input, jwks: v.jwks, now: v.clock });
      // Vector harness contract (the reference conformance engine, vrp-spec scripts/conformance.mjs): verified = the JWS verified; reason = its code.
      const observed = { verified: r.status === 'verified' || r.status === 'expired', reason: r.code, fresh: r.fresh };
      expect(observed).toEqual(v.expected);
      expect(r.status).toBe(REFERENCE_STATUS[file]);
      const ref = reference.verifyOffer({ envelope: v.input, jwks: v.jwks as reference.Jwks, now: v.clock });
      expect({ status: r.status, code: r.code, fresh: r.fresh, payloadMatchesOffer: r.payloadMatchesOffer }).toEqual({
        status: ref.status,
        code: ref.code,
        fresh: ref.fresh,
        payloadMatchesOffer: ref.payloadMatchesOffer,
      });
    });
  }

  it('vector 01 is safe to quote; the others are not_verified', () => {
    for (const file of VECTOR_FILES) {
      const v = loadVector(file);
      const checks = quoteChecks(verifyOffer({ envelope: v.input, jwks: v.jwks, now: v.clock }));
      expect(checks).toEqual(file.startsWith('01') ? { ok: true, failures: [] } : { ok: false, failures: ['not_verified'] });
    }
  });
});

describe('minted vectors (public VRP test key)', () => {
  const now = FRESH_NOW;
  const verify = (envelope: unknown, jwks: unknown = TEST_JWKS) => verifyOffer({ envelope, jwks, now });

  it('re-signing the vector 01 payload reproduces its JWS byte for byte', () => {
    expect(mintEnvelope(baseOffer()).signature.jws).toBe(loadVector('01-valid-fresh.json').input.signature.jws);
  });

  it('never throws: a validly signed, absurdly nested payload is refused as a mismatch, not a stack overflow', () => {
    const depth = 20_000;
    const text = `${JSON.stringify(baseOffer()).slice(0, -1)},"nest":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const envelope = envelopeWithJws(testSigner.sign(text), JSON.parse(text));
    expect(() => verify(envelope)).not.toThrow();
    expect(verify(envelope)).toMatchObject({ status: 'invalid', code: 'payload_offer_mismatch' });
  });

  it('malformed_jws: not three segments, or non-base64url segments', () => {
    const jws = mintEnvelope(baseOffer()).signature.jws as string;
    for (const bad of ['a.b', `${jws}.x`, jws.replace(/\.[^.]+$/, '.s!g'), `${jws.slice(0, -2)}+/`]) {
      expect(verify(envelopeWithJws(bad, baseOffer())), bad).toMatchObject({
        status: 'invalid',
        code: 'malformed_jws',
        fresh: null,
        payload: null,
      });
    }
  });

  it('malformed_header: header not base64url JSON object', () => {
    const [, p, s] = (mintEnvelope(baseOffer()).signature.jws as string).split('.');
    for (const h of [
      '',
      Buffer.from('{nope').toString('base64url'),
      Buffer.from('[1]').toString('base64url'),
      Buffer.from('null').toString('base64url'),
    ]) {
      expect(verify(envelopeWithJws(`${h}.${p}.${s}`, baseOffer())).code).toBe('malformed_header');
    }
  });

  it('unexpected_alg: alg none, HS256 keyed with the public key, ES256, a missing alg', () => {
    const payload = JSON.stringify(baseOffer());
    const cases = [
      rawJws({ alg: 'none', kid: TEST_KID }, payload),
      hs256WithPublicKey(payload),
      rawJws({ alg: 'ES256', kid: TEST_KID }, payload, 'AAAA'),
      rawJws({ kid: TEST_KID }, payload, 'AAAA'),
      rawJws({ alg: 'eddsa', kid: TEST_KID }, payload, 'AAAA'),
    ];
    for (const jws of cases)
      expect(verify(envelopeWithJws(jws, baseOffer()))).toMatchObject({ status: 'invalid', code: 'unexpected_alg', payload: null });
  });

  it('kid_not_in_jwks (unverifiable): unknown kid, missing header kid, non-string kid, empty or null JWKS', () => {
    const offer = baseOffer();
    // Header kid forgeries need raw headers (the signer always writes its own kid); the signature is irrelevant here.
    const sign = (header: Record<string, unknown>) => rawJws(header, JSON.stringify(offer));
    expect(verify(mintEnvelope(offer), { keys: [{ ...TEST_JWKS.keys[0], kid: 'other' }] })).toMatchObject({
      status: 'unverifiable',
      code: 'kid_not_in_jwks',
    });
    expect(verify(envelopeWithJws(sign({ alg: 'EdDSA' }), offer, undefined))).toMatchObject({
      status: 'unverifiable',
      code: 'kid_not_in_jwks',
    });
    expect(verify(envelopeWithJws(sign({ alg: 'EdDSA', kid: 7 }), offer, 7))).toMatchObject({
      status: 'unverifiable',
      code: 'kid_not_in_jwks',
    });
    // A JWKS key without a kid is never selected by a header without one (the reference would select it).
    const { kid: _k, ...noKid } = TEST_JWKS.keys[0] as Record<string, unknown>;
    expect(verify(envelopeWithJws(sign({ alg: 'EdDSA' }), offer, undefined), { keys: [noKid] }).code).toBe('kid_not_in_jwks');
    for (const jwks of [{ keys: [] }, null, {}, { keys: 'x' }, 'nope'])
      expect(verify(mintEnvelope(offer), jwks).code).toBe('kid_not_in_jwks');
  });

  it('unsupported_key (unverifiable): the kid names a non-Ed25519 or unusable key', () => {
    const k = TEST_JWKS.keys[0] as Record<string, unknown>;
    for (const key of [
      { ...k, kty: 'EC' },
      { ...k, crv: 'X25519' },
      { ...k, x: 'AAAA' },
      { ...k, x: 42 },
    ]) {
      expect(verify(mintEnvelope(baseOffer()), { keys: [key] })).toMatchObject({ status: 'unverifiable', code: 'unsupported_key' });
    }
  });

  it('signature_mismatch: tampered payload bytes, truncated signature, another key', () => {
    const env = mintEnvelope(baseOffer());
    const [h, p, s] = (env.signature.jws as string).split('.') as [string, string, string];
    const tampered = { ...baseOffer(), price: { ...baseOffer().price, agent_total: 1 } };
    expect(verify(envelopeWithJws(`${h}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${s}`, tampered)).code).toBe(
      'signature_mismatch',
    );
    expect(
      verify(envelopeWithJws(`${h}.${p}.${Buffer.from(s, 'base64url').subarray(0, 63).toString('base64url')}`, baseOffer())).code,
    ).toBe('signature_mismatch');
    const otherKey = publicJwkOf(ed25519PrivateJwkFromSeed(sha256('another key')), TEST_KID);
    expect(verify(env, { keys: [otherKey] })).toMatchObject({ status: 'invalid', code: 'signature_mismatch' });
  });

  it('malformed_payload: signed bytes that are not a JSON object', () => {
    for (const payload of ['not json', '[1,2]', '"a string"', 'null']) {
      const jws = testSigner.sign(payload);
      expect(verify(envelopeWithJws(jws, baseOffer()))).toMatchObject({ status: 'invalid', code: 'malformed_payload', payload: null });
    }
  });

  it('no_jws: no signature, empty or non-string jws', () => {
    const env = mintEnvelope(baseOffer());
    expect(verify({ ...env, signature: undefined }).code).toBe('no_jws');
    expect(verify({ ...env, signature: { ...env.signature, jws: '' } }).code).toBe('no_jws');
    expect(verify({ ...env, signature: { ...env.signature, jws: 42 } }).code).toBe('no_jws');
    expect(verifyOffer({ jwks: TEST_JWKS, now })).toMatchObject({ status: 'invalid', code: 'no_jws' });
  });

  it('payload_offer_mismatch: a swapped plaintext offer, or an envelope kid that disagrees with the header', () => {
    const env = mintEnvelope(baseOffer());
    env.offer.price.agent_total = 1;
    expect(verify(env)).toMatchObject({ status: 'invalid', code: 'payload_offer_mismatch', payloadMatchesOffer: false });
    const otherKid = mintEnvelope(baseOffer(), { envelopeKid: 'another-kid' });
    expect(verify(otherKid)).toMatchObject({ status: 'invalid', code: 'payload_offer_mismatch', fresh: null });
    expect(verify(mintEnvelope(baseOffer(), { envelopeKid: null })).code).toBe('payload_offer_mismatch');
  });

  it('an envelope signature.alg other than EdDSA is invalid even when the JWS verifies', () => {
    expect(verify(mintEnvelope(baseOffer(), { envelopeAlg: 'none' }))).toMatchObject({ status: 'invalid', code: 'unexpected_alg' });
  });

  it('payload/offer comparison is structural and ignores key order (and -0 vs 0)', () => {
    const env = mintEnvelope(baseOffer());
    const reordered = Object.fromEntries(Object.entries(env.offer).reverse());
    reordered.price = Object.fromEntries(Object.entries(env.offer.price as object).reverse());
    expect(verify({ ...env, offer: reordered })).toMatchObject({ status: 'verified', payloadMatchesOffer: true });
    const offer = { ...baseOffer(), capacity: { requested_guests: 2, max_guests: 0 } };
    const e2 = mintEnvelope(offer);
    e2.offer.capacity.max_guests = -0;
    expect(verify(e2).status).toBe('verified');
  });

  it('payload/offer comparison: a renamed, moved, inherited or extra member is a mismatch', () => {
    const env = mintEnvelope(baseOffer());
    const entries = Object.entries(env.offer);
    const mismatch = { status: 'invalid', code: 'payload_offer_mismatch', payloadMatchesOffer: false };
    // Same member count, one member replaced in place by a name the payload lacks whose value reads
    // the same on both sides (undefined, or what every object inherits): names must be compared too.
    for (const [name, value] of [
      ['absent_member', undefined],
      ['hasOwnProperty', Object.prototype.hasOwnProperty],
    ] as const) {
      const inPlace = Object.fromEntries(entries.map(([k, v], i) => (i === 1 ? [name, value] : [k, v])));
      expect(verify({ ...env, offer: inPlace }), name).toMatchObject(mismatch);
      const reordered = Object.fromEntries([...entries].reverse().map(([k, v], i) => (i === 0 ? [name, value] : [k, v])));
      expect(verify({ ...env, offer: reordered }), `${name}, reordered`).toMatchObject(mismatch);
    }
    // A member only inherited is not a member.
    const [firstKey, firstValue] = entries[0] as [string, unknown];
    const inherited = Object.assign(Object.create({ [firstKey]: firstValue }), Object.fromEntries(entries.slice(1)), { extra: 1 });
    expect(verify({ ...env, offer: inherited })).toMatchObject(mismatch);
    expect(verify({ ...env, offer: { ...env.offer, extra: 1 } })).toMatchObject(mismatch);
    // An array where the payload has an object, and the reverse.
    expect(verify({ ...env, offer: { ...env.offer, price: [env.offer.price] } })).toMatchObject(mismatch);
  });

  it('valid_until_unusable (unverifiable): missing, unparseable, not RFC 3339 UTC; or an unusable now', () => {
    for (const validUntil of [undefined, 'tisdag', '2026-06-02', '2026-06-02T12:10:00+00:00', 1780401000000]) {
      const offer = { ...baseOffer(), valid_until: validUntil };
      expect(verify(mintEnvelope(offer)), String(validUntil)).toMatchObject({
        status: 'unverifiable',
        code: 'valid_until_unusable',
        fresh: null,
      });
    }
    expect(verifyOffer({ envelope: mintEnvelope(baseOffer()), jwks: TEST_JWKS, now: 'yesterday-ish' }).code).toBe('valid_until_unusable');
  });

  it('freshness is strict: valid_until == now is expired; fractional seconds are honoured', () => {
    const env = mintEnvelope(baseOffer());
    expect(verifyOffer({ envelope: env, jwks: TEST_JWKS, now: '2026-06-02T12:10:00Z' })).toMatchObject({
      status: 'expired',
      fresh: false,
      code: null,
    });
    expect(verifyOffer({ envelope: env, jwks: TEST_JWKS, now: Date.parse('2026-06-02T12:09:59.999Z') })).toMatchObject({
      status: 'verified',
    });
    const frac = mintEnvelope({ ...baseOffer(), valid_until: '2026-06-02T12:10:00.500Z' });
    expect(verifyOffer({ envelope: frac, jwks: TEST_JWKS, now: new Date('2026-06-02T12:10:00.400Z') }).status).toBe('verified');
  });

  it('a bare JWS verifies with payloadMatchesOffer null', () => {
    const jws = mintEnvelope(baseOffer()).signature.jws;
    expect(verifyOffer({ jws, jwks: TEST_JWKS, now })).toMatchObject({ status: 'verified', payloadMatchesOffer: null, code: null });
    // A bare JWS beside an envelope that carries only the plaintext offer: compared, no signature metadata to check.
    expect(verifyOffer({ jws, envelope: { offer: baseOffer() }, jwks: TEST_JWKS, now })).toMatchObject({
      status: 'verified',
      payloadMatchesOffer: true,
    });
    expect(verifyOffer({ jws, envelope: { offer: baseOffer(), signature: null }, jwks: TEST_JWKS, now }).code).toBe('unexpected_alg');
  });
});

describe("an envelope the verifier parsed itself (fetch.ts): the offer's own text stands in for parsing the signed payload", () => {
  const now = FRESH_NOW;
  const signed = (payloadText: string) => testSigner.sign(payloadText);
  /** A body laid out as vrpkit's node writes it: the offer member is the signed payload's text. */
  const body = (offerText: string, jws: string, before = '', after = '') =>
    `{"kind":"signed_verified_stay_offer","protocol_version":"0.1",${before}"offer":${offerText},"signature":{"format":"jws_compact","alg":"EdDSA","kid":"${TEST_KID}","jws":"${jws}"}${after}}`;
  /** The verdict with the body text (the fast path may apply) and without it (the exact path), on separate parses. */
  function both(text: string) {
    const envelope = JSON.parse(text);
    const read = readOffer({ envelope }, text);
    const fast = verifyReadOffer(read, TEST_JWKS, Date.parse(now));
    const exact = verifyReadOffer(readOffer({ envelope: JSON.parse(text) }), TEST_JWKS, Date.parse(now));
    expect(fast).toEqual(exact);
    expect(quoteChecks(fast)).toEqual(quoteChecks(exact));
    return { fast, exact, envelope, read, usedOffer: fast.payload !== null && fast.payload === envelope.offer };
  }

  it("the node layout: the offer object is the payload, with the exact path's verdict", () => {
    const p = JSON.stringify(baseOffer());
    const r = both(body(p, signed(p)));
    expect(r.read.offerText).toEqual({ text: p, plainNumbers: true });
    expect(r.fast).toMatchObject({ status: 'verified', payloadMatchesOffer: true });
    expect(r.usedOffer).toBe(true);
    // Members before and after the offer, and insignificant whitespace around it, change nothing.
    const spaced = body(
      ` ${p} `,
      signed(p),
      '"x": [1, {"offer": 2}], ',
      ',"verification":{"jwks_url":"https://example-host.invalid/.well-known/jwks.json"}',
    );
    expect(both(spaced).usedOffer).toBe(true);
  });

  it('a body seen again (a node serves its cached offer) answers as the first time, and a different offer is read anew', () => {
    const p = JSON.stringify(baseOffer());
    const text = body(p, signed(p));
    const first = both(text);
    // A fresh decode of the same bytes: another string with the same characters.
    const again = both(Buffer.from(text).toString());
    expect(again.fast).toEqual(first.fast);
    expect(again.usedOffer).toBe(true);
    // An offer that shares all but its last member's value, then one that only begins like it (in a longer member list).
    const changed = JSON.stringify({ ...baseOffer(), agent_permission: { may_quote_as_official_direct_offer: false } });
    expect(both(body(changed, signed(changed)))).toMatchObject({ usedOffer: true, fast: { status: 'verified' } });
    expect(quoteChecks(both(body(changed, signed(changed))).fast).failures).toEqual(['quote_permission_not_granted']);
    const longer = `${p.slice(0, -1)},"extra":1}`;
    expect(both(body(longer, signed(longer)))).toMatchObject({ usedOffer: true, fast: { status: 'verified' } });
    both(body(p, signed(p)));
    expect(both(body(longer, signed(p)))).toMatchObject({ usedOffer: false, fast: { code: 'payload_offer_mismatch' } });
  });

  it('another text of the same offer takes the exact path: reordered keys, 1.0, \\u escapes, whitespace inside', () => {
    const offer = baseOffer();
    const p = JSON.stringify(offer);
    const jws = signed(p);
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(offer).reverse()));
    const onePointZero = p.replace('"guests":2', '"guests":2.0');
    const escaped = p.replace('"EUR"', '"\\u0045UR"');
    const indented = JSON.stringify(offer, null, 2);
    for (const offerText of [reordered, onePointZero, escaped, indented]) {
      const r = both(body(offerText, jws));
      expect(r.fast, offerText.slice(0, 40)).toMatchObject({ status: 'verified', payloadMatchesOffer: true });
      expect(r.usedOffer).toBe(false);
    }
    // And the same the other way: the signed text is the unusual one, the body's offer the plain one.
    expect(both(body(p, signed(onePointZero)))).toMatchObject({ usedOffer: false, fast: { status: 'verified' } });
    expect(both(body(p, signed(indented)))).toMatchObject({ usedOffer: false, fast: { status: 'verified' } });
  });

  it('JSON.parse keeps the last of duplicate offer members (names compared unescaped), and so does the text', () => {
    const p = JSON.stringify(baseOffer());
    const other = JSON.stringify({ ...baseOffer(), node_id: 'another.invalid' });
    const jws = signed(p);
    expect(both(body(other, jws, `"offer":${p},`))).toMatchObject({ usedOffer: false, fast: { code: 'payload_offer_mismatch' } });
    expect(both(body(p, jws, `"offer":${other},`))).toMatchObject({ usedOffer: true, fast: { status: 'verified' } });
    const escapedName = `{"kind":"signed_verified_stay_offer","offer":${other},"signature":{"alg":"EdDSA","kid":"${TEST_KID}","jws":"${jws}"},"off\\u0065r":${p}}`;
    expect(both(escapedName)).toMatchObject({ usedOffer: true, fast: { status: 'verified' } });
  });

  it("a signed text that is only part of the offer's text, or runs past it, is still not JSON", () => {
    const p = JSON.stringify(baseOffer());
    const partial = p.slice(0, p.indexOf(',"property"'));
    // The envelope's offer starts with the signed text, which then is not a complete value.
    expect(both(body(p, signed(partial)))).toMatchObject({ usedOffer: false, fast: { code: 'malformed_payload' } });
    // The signed text is the offer and the member after it: the body carries them as two members.
    const runOn = `${p},"zzz":1`;
    const text = `{"signature":{"format":"jws_compact","alg":"EdDSA","kid":"${TEST_KID}","jws":"${signed(runOn)}"},"kind":"signed_verified_stay_offer","offer":${runOn}}`;
    expect(both(text)).toMatchObject({ usedOffer: false, fast: { code: 'malformed_payload' } });
  });

  it("nesting: within jsonEqual's bound the text decides; past it both refuse the same identical text", () => {
    const nested = (levels: number) =>
      `${JSON.stringify(baseOffer()).slice(0, -1)},"nest":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    // The offer object is level 1: 64 levels is the deepest jsonEqual compares.
    const deepest = nested(64);
    expect(both(body(deepest, signed(deepest)))).toMatchObject({ usedOffer: true, fast: { status: 'verified' } });
    const deeper = nested(65);
    expect(both(body(deeper, signed(deeper)))).toMatchObject({ usedOffer: false, fast: { code: 'payload_offer_mismatch' } });
  });

  it('signed numbers: only a text whose numbers are all plain integer literals skips remembering the text', () => {
    const cases: [string, boolean][] = [
      // Strings holding "-", ".", "e" and escaped quotes and backslashes, and true/false: still plain.
      ['"note":"a-b.c e5 \\" \\\\","flag":true,"off":false', true],
      ['"adjust":-5', false],
      ['"ratio":0.5', false],
      ['"big":1e3', false],
      ['"big":1E+3', false],
    ];
    for (const [extra, plain] of cases) {
      const p = `${JSON.stringify(baseOffer()).slice(0, -1)},${extra}}`;
      const r = both(body(p, signed(p)));
      expect(r.read.offerText?.plainNumbers, extra).toBe(plain);
      expect(r.usedOffer, extra).toBe(true);
    }
    // A total signed as 123400.0 is not exact on either path (quote.ts reads the signed text).
    const p = JSON.stringify(baseOffer()).replace('"agent_total":123400', '"agent_total":123400.0');
    const r = both(body(p, signed(p)));
    expect(r.usedOffer).toBe(true);
    expect(quoteChecks(r.fast).failures).toEqual(['price_not_exact']);
  });

  it("failures before the payload is read are the exact path's: bad signature, unknown kid, envelope kid mismatch", () => {
    const p = JSON.stringify(baseOffer());
    const jws = signed(p);
    const [h, seg, s] = jws.split('.') as [string, string, string];
    const tampered = `${h}.${seg}.${s.startsWith('A') ? `B${s.slice(1)}` : `A${s.slice(1)}`}`;
    expect(both(body(p, tampered)).fast.code).toBe('signature_mismatch');
    expect(both(body(p, jws).replace(`"kid":"${TEST_KID}"`, '"kid":"another-kid"')).fast.code).toBe('payload_offer_mismatch');
    expect(both(body(p, testSigner.sign(p.replace('"2026-06-02T12:10:00Z"', '"2026-06-02T12:00:00Z"')))).fast.code).toBe(
      'payload_offer_mismatch',
    );
  });
});

describe('quoteChecks / safeToQuote (Core VRP v0.1 §7, §5.1)', () => {
  const now = FRESH_NOW;
  const gate = (mutate: (o: Loose) => void) => {
    const offer = baseOffer();
    mutate(offer);
    return quoteChecks(verifyOffer({ envelope: mintEnvelope(offer), jwks: TEST_JWKS, now }));
  };

  it('every failed condition, in reference order', () => {
    expect(
      gate((o) => {
        o.availability.available = false;
        o.price.exact = false;
        o.booking.direct_booking_url = 'http://example-host.invalid/book';
        o.agent_permission.may_quote_as_official_direct_offer = false;
      }).failures,
    ).toEqual(['availability_not_true', 'price_not_exact', 'booking_url_invalid', 'quote_permission_not_granted']);
  });

  it('availability: available must be true and the calendar not stale', () => {
    expect(gate((o) => (o.availability.available = false)).failures).toEqual(['availability_not_true']);
    expect(gate((o) => delete o.availability.available).failures).toEqual(['availability_not_true']);
    expect(gate((o) => (o.availability.calendar_freshness = { safe: false, reason: 'stale_import' })).failures).toEqual([
      'availability_not_true',
    ]);
    expect(gate((o) => (o.availability.calendar_freshness = { safe: true })).ok).toBe(true);
  });

  it('price: exact, integer totals, and a reconciliation that matches', () => {
    expect(gate((o) => (o.price.exact = false)).failures).toEqual(['price_not_exact']);
    expect(gate((o) => (o.price.agent_total = null)).failures).toEqual(['price_not_exact']);
    expect(gate((o) => (o.price.public_total = 12.5)).failures).toEqual(['price_not_exact']);
    const recon = { nightly_subtotal: 123400, adjustments_total: 0, computed_total: 123400 };
    expect(gate((o) => (o.price.reconciliation = { ...recon, matches_quoted_total: false })).failures).toEqual(['price_not_exact']);
    expect(gate((o) => (o.price.reconciliation = { ...recon, matches_quoted_total: true })).ok).toBe(true);
  });

  it('booking URL: missing, invalid, userinfo, port, and look-alike hosts', () => {
    const url = (u: unknown) => gate((o) => (o.booking.direct_booking_url = u)).failures;
    expect(url(undefined)).toEqual(['booking_url_missing']);
    expect(url('')).toEqual(['booking_url_missing']);
    expect(url('/book?offer_id=1')).toEqual(['booking_url_invalid']);
    expect(url('http://example-host.invalid/book')).toEqual(['booking_url_invalid']);
    expect(url('https://guest@example-host.invalid/book')).toEqual(['booking_url_invalid']);
    expect(url('https://example-host.invalid@evil.net/book')).toEqual(['booking_url_invalid']);
    expect(url('https://example-host.invalid:8443/book')).toEqual(['booking_url_invalid']);
    // Strings WHATWG would repair onto the canonical host while curl or Python read another one.
    expect(url('https://example-host.invalid\\@evil.net/book')).toEqual(['booking_url_invalid']);
    expect(url('https:example-host.invalid/book')).toEqual(['booking_url_invalid']);
    expect(url(' https://example-host.invalid/book')).toEqual(['booking_url_invalid']);
    expect(url('https://example-host.invalid/bo\tok')).toEqual(['booking_url_invalid']);
    expect(url('HTTPS://example-host.invalid/book')).toEqual(['booking_url_invalid']);
    expect(url('https://example-host.invalid.evil.net/book')).toEqual(['booking_url_host_mismatch']);
    expect(url('https://evil-example-host.invalid/book')).toEqual(['booking_url_host_mismatch']);
    expect(url('https://evilexample-host.invalid/book')).toEqual(['booking_url_host_mismatch']);
    expect(url('https://bit.ly/abc')).toEqual(['booking_url_host_mismatch']);
    expect(url('https://example-host.invalid:443/book')).toEqual([]);
    expect(url('https://BOOK.Example-Host.invalid/book?checkIn=2026-09-12')).toEqual([]);
    expect(gate((o) => delete o.canonical_domain).failures).toEqual(['booking_url_host_mismatch']);
    expect(gate((o) => (o.canonical_domain = 'evil.net@example-host.invalid')).failures).toEqual(['booking_url_host_mismatch']);
  });

  it("booking URL: the answer for one URL is never another domain's (alternating URLs, domains and a non-string domain)", () => {
    const payload = (url: string, domain: unknown) => ({ canonical_domain: domain, booking: { direct_booking_url: url } });
    const on = 'https://book.example-host.invalid/b';
    const off = 'https://evil.net/b';
    const sequence: [string, unknown, ReturnType<typeof bookingUrlFailure>][] = [
      [on, 'example-host.invalid', null],
      [on, 'example-host.invalid', null],
      [on, 'book.example-host.invalid', null],
      [on, 'evil.net', 'booking_url_host_mismatch'],
      [on, 'example-host.invalid', null],
      [on, undefined, 'booking_url_host_mismatch'],
      [on, ['example-host.invalid'], 'booking_url_host_mismatch'],
      [on, 'example-host.invalid', null],
      [off, 'example-host.invalid', 'booking_url_host_mismatch'],
      [off, 'evil.net', null],
      [off, 'evil.net', null],
      [on, 'evil.net', 'booking_url_host_mismatch'],
      ['http://evil.net/b', 'evil.net', 'booking_url_invalid'],
      [off, 'evil.net', null],
    ];
    for (const [url, domain, expected] of sequence)
      expect(bookingUrlFailure(payload(url, domain)), `${url} on ${String(domain)}`).toBe(expected);
  });

  it('agent permission must be granted', () => {
    expect(gate((o) => (o.agent_permission.may_quote_as_official_direct_offer = false)).failures).toEqual(['quote_permission_not_granted']);
  });

  it('anything but verified is not_verified alone; safeToQuote(null) is false', () => {
    expect(quoteChecks(verifyOffer({ envelope: mintEnvelope(baseOffer()), jwks: TEST_JWKS, now: '2026-06-03T00:00:00Z' }))).toEqual({
      ok: false,
      failures: ['not_verified'],
    });
    expect(safeToQuote(null)).toBe(false);
  });
});

describe('isOnCanonicalDomain (Core VRP v0.1 §5.1 label boundary, lowercase/IDNA)', () => {
  it.each([
    ['example.com', 'example.com', true],
    ['book.example.com', 'example.com', true],
    ['a.b.example.com', 'example.com', true],
    ['EXAMPLE.com', 'example.COM', true],
    ['xn--bcher-kva.example', 'bücher.example', true],
    ['shop.bücher.example', 'xn--bcher-kva.example', true],
    ['example.com.evil.net', 'example.com', false],
    ['evil-example.com', 'example.com', false],
    ['evilexample.com', 'example.com', false],
    ['example.com', 'book.example.com', false],
    ['other.example.com', 'book.example.com', false],
    ['example.com:443', 'example.com', false],
    ['evil.net@example.com', 'example.com', false],
    ['example.com', 'evil.net@example.com', false],
    ['example.com/x', 'example.com', false],
    ['a..example.com', 'example.com', false],
    ['', 'example.com', false],
    [undefined, 'example.com', false],
    ['example.com', null, false],
  ])('%s on %s → %s', (host, canonical, expected) => {
    expect(isOnCanonicalDomain(host, canonical)).toBe(expected);
  });

  it('normalizeHost answers the same when asked again, after its memory starts over, and for a name too long to remember', () => {
    const cases: [string, string | null][] = [
      ['Bücher.Example', 'xn--bcher-kva.example'],
      ['evil.net@example.com', null],
      ['a..example.com', null],
      // Longer than 253 characters: not remembered, still read by the URL parser (which sets no length limit).
      [`${'a'.repeat(300)}.EXAMPLE`, `${'a'.repeat(300)}.example`],
    ];
    const check = () => {
      for (const [host, expected] of cases) expect(normalizeHost(host), host).toBe(expected);
    };
    check();
    check();
    for (let i = 0; i < 1100; i++) normalizeHost(`h${i}.example`);
    check();
  });
});

describe('offer request URL (Core VRP v0.1 §4 query)', () => {
  /** What `URL.searchParams.set` writes: the one definition the direct path must reproduce. */
  const viaSearchParams = (endpoint: string, args: { check_in: string; check_out: string; guests: number }) => {
    const url = new URL(endpoint);
    url.searchParams.set('check_in', args.check_in);
    url.searchParams.set('check_out', args.check_out);
    url.searchParams.set('guests', String(args.guests));
    return url.toString();
  };
  it('is exactly what URL.searchParams.set writes, for plain and awkward endpoints and values', () => {
    const stay = { check_in: '2026-07-01', check_out: '2026-07-04', guests: 2 };
    const endpoints = [
      'https://villa.example/api/verified-stay-offer',
      'https://VILLA.example/api/../offer',
      'https://villa.example',
      'https://villa.example/offer?',
      'https://villa.example/offer?check_in=2020-01-01&lang=sv&q=a%20b',
      'https://villa.example/offer#frag',
      'https://villa.example/offer#',
    ];
    const stays = [stay, { ...stay, check_in: '2026 07 01' }, { ...stay, check_out: 'x&guests=9' }, { ...stay, guests: -1 }];
    // Each endpoint twice in a row and again after another one: the remembered endpoint must never leak into the next.
    for (const endpoint of [...endpoints, ...[...endpoints].reverse(), endpoints[0] as string]) {
      for (const s of stays) {
        expect(offerRequestUrl(endpoint, s)).toBe(viaSearchParams(endpoint, s));
        expect(offerRequestUrl(endpoint, s)).toBe(viaSearchParams(endpoint, s));
      }
    }
    expect(offerRequestUrl(endpoints[0] as string, stay)).toBe(
      'https://villa.example/api/verified-stay-offer?check_in=2026-07-01&check_out=2026-07-04&guests=2',
    );
  });
  it('an endpoint that is not a URL throws, as parsing it always did', () => {
    expect(() => offerRequestUrl('not a url', { check_in: '2026-07-01', check_out: '2026-07-04', guests: 2 })).toThrow(TypeError);
  });
});
