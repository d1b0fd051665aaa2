/**
 * Errors are data: every code core throws is a `CORE_CODES` code, with the registry's message
 * unless the throw site says more; `jwsPayloadJson` reads a payload as JSON or as nothing.
 */
import {
  CanonicalizationError,
  CORE_CODES,
  CoreError,
  canonicalJson,
  createJwsSigner,
  ed25519PrivateJwkFromSeed,
  importEd25519PrivateKey,
  jwsPayloadJson,
  parseCompactJws,
  VrpError,
} from '@vrpkit/core';
import { describe, expect, it } from 'vitest';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof CoreError ? e.code : 'not a CoreError';
  }
  return 'no error';
};

describe('CORE_CODES', () => {
  it("every throw site answers with a table code, a VrpError with the table's message", () => {
    expect(codeOf(() => canonicalJson(Number.NaN))).toBe('not_canonicalizable');
    expect(codeOf(() => ed25519PrivateJwkFromSeed(new Uint8Array(3)))).toBe('invalid_seed');
    expect(codeOf(() => importEd25519PrivateKey({ kty: 'OKP', crv: 'Ed25519', x: 'AA', d: 'AA' }))).toBe('invalid_private_key');
    const e = new CoreError('invalid_seed');
    expect(e).toBeInstanceOf(VrpError);
    expect(e.message).toBe(CORE_CODES.invalid_seed.message);
    expect(new CanonicalizationError('a cycle')).toMatchObject({
      code: 'not_canonicalizable',
      message: 'value is not representable as canonical JSON: a cycle',
    });
  });
});

describe('jwsPayloadJson', () => {
  it('is the JSON value of the payload bytes, or undefined for bytes that are not JSON', () => {
    const signer = createJwsSigner(ed25519PrivateJwkFromSeed(new Uint8Array(32)), 'k');
    const json = parseCompactJws(signer.sign('{"a":[1,"é"]}'));
    const text = parseCompactJws(signer.sign('not json'));
    if (!json.ok || !text.ok) throw new Error('a signed JWS parses');
    expect(jwsPayloadJson(json.jws)).toEqual({ a: [1, 'é'] });
    expect(jwsPayloadJson(text.jws)).toBeUndefined();
  });
});
