import {
  base64urlDecode,
  base64urlEncode,
  CanonicalizationError,
  canonicalJson,
  canonicalSha256Hex,
  createJwsSigner,
  ed25519PrivateJwkFromSeed,
  generateEd25519Jwk,
  importEd25519PublicKey,
  parseCompactJws,
  publicJwkOf,
  sha256Hex,
  verifyEd25519Signature,
} from '@vrpkit/core';
import fc from 'fast-check';
import { compactVerify, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units and formats numbers per ECMAScript', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], '\u20ac': 1e21, '\ud83d\ude00': 0.1 })).toBe(
      '{"a":[true,null,"x"],"b":1,"\u20ac":1e+21,"\ud83d\ude00":0.1}',
    );
  });
  it('rejects values JSON cannot carry', () => {
    expect(() => canonicalJson(undefined)).toThrow(CanonicalizationError);
    expect(() => canonicalJson(Number.NaN)).toThrow(CanonicalizationError);
    expect(() => canonicalJson({ a: Number.POSITIVE_INFINITY })).toThrow(CanonicalizationError);
  });
  it('is insensitive to key order (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
        expect(canonicalSha256Hex(reversed)).toBe(canonicalSha256Hex(obj));
      }),
    );
  });
});

describe('digests and base64url', () => {
  it('hashes the UTF-8 bytes', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
  it('accepts exactly the strings that re-encode to themselves (property)', () => {
    // Beyond the two alphabets and '=': characters Node's decoder skips (the strict decode must still refuse them).
    const alphabet = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=', '!', ' ', '.', '\n', '\0', 'é', '€'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 16 }), (chars) => {
        const text = chars.join('');
        const lenient =
          /^[A-Za-z0-9_-]*$/.test(text) && text.length % 4 !== 1 && Buffer.from(text, 'base64url').toString('base64url') === text;
        expect(base64urlDecode(text) !== null).toBe(lenient);
      }),
      { numRuns: 5000 },
    );
  });
  it('round-trips and rejects non-canonical base64url', () => {
    fc.assert(
      fc.property(fc.uint8Array(), (b) => {
        expect(Buffer.from(base64urlDecode(base64urlEncode(b))!).equals(Buffer.from(b))).toBe(true);
      }),
    );
    expect(base64urlDecode('ab+c')).toBeNull();
    expect(base64urlDecode('abc=')).toBeNull();
    expect(base64urlDecode('a')).toBeNull();
    // Non-zero pad bits: 'ab' and 'aQ' would both decode to 0x69.
    expect(base64urlDecode('ab')).toBeNull();
    expect(base64urlDecode('abd')).toBeNull();
    expect(Buffer.from(base64urlDecode('aQ')!).toString('hex')).toBe('69');
    expect(Buffer.from(base64urlDecode('abc')!).toString('hex')).toBe('69b7');
  });
});

describe('Ed25519 compact JWS', () => {
  it('signs bytes that jose verifies, and verifies over the received bytes', async () => {
    const { privateJwk } = await generateEd25519Jwk();
    const signer = createJwsSigner(privateJwk, 'example.com-2026-11-29-01', { typ: 'JWT' });
    const payload = JSON.stringify({ kind: 'verified_stay_offer', z: 1, a: 2 });
    const jws = signer.sign(payload);
    const pub = publicJwkOf(privateJwk, signer.kid);
    const viaJose = await compactVerify(jws, await importJWK(pub, 'EdDSA'), { algorithms: ['EdDSA'] });
    expect(new TextDecoder().decode(viaJose.payload)).toBe(payload);
    expect(viaJose.protectedHeader).toEqual({ alg: 'EdDSA', typ: 'JWT', kid: signer.kid });

    const parsed = parseCompactJws(jws);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const key = importEd25519PublicKey(pub)!;
    expect(verifyEd25519Signature(parsed.jws.signingInput, parsed.jws.signature, key)).toBe(true);
    const tampered = `${parsed.jws.signingInput.slice(0, -2)}AA`;
    expect(verifyEd25519Signature(tampered, parsed.jws.signature, key)).toBe(false);
  });
  it('signs each call under its own header when calls alternate headers (the signer keeps the last encoding)', async () => {
    const { privateJwk } = await generateEd25519Jwk();
    const signer = createJwsSigner(privateJwk, 'example.com-2026-11-29-02');
    const key = await importJWK(publicJwkOf(privateJwk, signer.kid), 'EdDSA');
    const extras = [{ typ: 'JWT' }, undefined, { typ: 'JWT' }, { typ: 'vrp+jwt', cty: 'x' }, { typ: 'JWT' }, undefined];
    for (const [i, extra] of extras.entries()) {
      const payload = `{"n":${i}}`;
      const { protectedHeader, payload: bytes } = await compactVerify(signer.sign(payload, extra), key, { algorithms: ['EdDSA'] });
      expect(protectedHeader, String(i)).toEqual({ alg: 'EdDSA', ...extra, kid: signer.kid });
      expect(new TextDecoder().decode(bytes)).toBe(payload);
    }
  });
  it("signs in place into a caller's buffer the same bytes as sign, over a payload lying in that buffer", async () => {
    const { privateJwk } = await generateEd25519Jwk();
    const signer = createJwsSigner(privateJwk, 'example.com-2026-11-29-03');
    const key = await importJWK(publicJwkOf(privateJwk, signer.kid), 'EdDSA');
    // Every remainder of the payload length mod 3 (unpadded base64url ends in 2, 3 or 4 characters), and non-ASCII bytes.
    for (const payload of ['', 'a', 'ab', 'abc', '{"name":"Villa Åkersberg ☀"}', 'x'.repeat(4000)]) {
      const bytes = Buffer.from(payload);
      const layout = signer.layout(bytes.byteLength, { typ: 'JWT' });
      const expected = signer.sign(payload, { typ: 'JWT' });
      expect(layout.length, payload).toBe(expected.length);
      expect(layout.signingInputLength).toBe(expected.lastIndexOf('.'));
      // Laid out as a response body would be: the payload's bytes, then the JWS, between other bytes.
      const target = Buffer.alloc(3 + bytes.byteLength + layout.length + 2, '#');
      bytes.copy(target, 3);
      const end = signer.signInto(layout, target.subarray(3, 3 + bytes.byteLength), target, 3 + bytes.byteLength);
      expect(end).toBe(target.byteLength - 2);
      const jws = target.toString('latin1', 3 + bytes.byteLength, end);
      // Ed25519 is deterministic (RFC 8032): the same key, header and payload give the same signature.
      expect(jws).toBe(expected);
      expect(target.toString('latin1', end)).toBe('##');
      const { payload: verified } = await compactVerify(jws, key, { algorithms: ['EdDSA'] });
      expect(Buffer.from(verified).equals(bytes)).toBe(true);
    }
    const layout = signer.layout(3);
    expect(() => signer.signInto(layout, Buffer.from('abcd'), Buffer.alloc(layout.length), 0)).toThrow(RangeError);
    expect(() => signer.signInto(layout, Buffer.from('abc'), Buffer.alloc(layout.length - 1), 0)).toThrow(RangeError);
    expect(() => signer.signInto(layout, Buffer.from('abc'), Buffer.alloc(layout.length), 1)).toThrow(RangeError);
  });
  it('reproduces the public VRP offer test key from its seed', () => {
    const seed = Buffer.from(sha256Hex('VRP v0.1 conformance test vector key - DO NOT USE'), 'hex');
    const jwk = ed25519PrivateJwkFromSeed(seed);
    expect(jwk.x).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(importEd25519PublicKey({ kty: 'OKP', crv: 'Ed25519', x: jwk.x })).not.toBeNull();
  });
  it('classifies malformed compact JWS with the reference codes', () => {
    expect(parseCompactJws('a.b')).toMatchObject({ ok: false, code: 'malformed_jws' });
    expect(parseCompactJws(`${base64urlEncode('not json')}.e30.AA`)).toMatchObject({ ok: false, code: 'malformed_header' });
    expect(parseCompactJws(`${base64urlEncode('[1]')}.e30.AA`)).toMatchObject({ ok: false, code: 'malformed_header' });
    expect(parseCompactJws(42)).toMatchObject({ ok: false, code: 'malformed_jws' });
  });
  it('rejects keys that are not 32-byte Ed25519', () => {
    expect(importEd25519PublicKey({ kty: 'OKP', crv: 'X25519', x: 'AAAA' })).toBeNull();
    expect(importEd25519PublicKey({ kty: 'OKP', crv: 'Ed25519', x: 'AAAA' })).toBeNull();
    expect(importEd25519PublicKey(null)).toBeNull();
  });
});
