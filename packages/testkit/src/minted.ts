/**
 * Minted offer vectors: signed with the public, throwaway key of the VRP v0.1 conformance vectors
 * (seed = SHA-256("VRP v0.1 conformance test vector key - DO NOT USE")); the official vectors
 * themselves are the agent's fixtures.
 * Re-signing the official vector 01 payload reproduces its JWS byte for byte (see verify-offer.test.ts).
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { base64urlEncode, createJwsSigner, ed25519PrivateJwkFromSeed, publicJwkOf, sha256 } from '@vrpkit/core';

export const FIXTURES = new URL('../../agent/fixtures/offer/', import.meta.url);

/** A JSON object the tests mutate field by field, including into invalid shapes (so it is loosely typed on purpose). */
// biome-ignore lint/suspicious/noExplicitAny: mutation targets must accept any value, valid or not.
export type Loose = Record<string, any>;

export interface OfficialVector {
  name: string;
  clock: string;
  jwks: { keys: Record<string, unknown>[] };
  input: Record<string, unknown> & { offer: Record<string, unknown>; signature: Record<string, unknown> & { jws: string } };
  expected: { verified: boolean; reason: string | null; fresh: boolean | null };
}

export const VECTOR_FILES = [
  '01-valid-fresh.json',
  '02-valid-expired.json',
  '03-tampered-signature.json',
  '04-unknown-kid.json',
  '05-wrong-key.json',
];

export function loadVector(file: string): OfficialVector {
  return JSON.parse(readFileSync(new URL(file, FIXTURES), 'utf8')) as OfficialVector;
}

export const TEST_KID = 'example-host.invalid-test-vector-2026';
export const TEST_PRIVATE_JWK = ed25519PrivateJwkFromSeed(sha256('VRP v0.1 conformance test vector key - DO NOT USE'));
export const TEST_JWKS = { keys: [publicJwkOf(TEST_PRIVATE_JWK, TEST_KID)] };
/** Vector header order: alg, typ, kid. */
export const testSigner = createJwsSigner(TEST_PRIVATE_JWK, TEST_KID, { typ: 'JWT' });

/** 12:05Z on the vector day: vector 01's clock (fresh until 12:10Z). */
export const FRESH_NOW = '2026-06-02T12:05:00Z';

/** A deep copy of the official offer payload (vector 01), to mutate and re-sign. */
export function baseOffer(): Loose {
  return structuredClone(loadVector('01-valid-fresh.json').input.offer) as Loose;
}

/** Sign `offer` (JSON.stringify in insertion order, as nodes do) and wrap it in an envelope. */
export function mintEnvelope(
  offer: unknown,
  opts: { extraHeader?: Record<string, unknown>; envelopeKid?: unknown; envelopeAlg?: unknown } = {},
) {
  const jws = testSigner.sign(JSON.stringify(offer), opts.extraHeader);
  return {
    kind: 'signed_verified_stay_offer',
    protocol_version: '0.1',
    offer: JSON.parse(JSON.stringify(offer)),
    signature: {
      format: 'jws_compact',
      alg: 'envelopeAlg' in opts ? opts.envelopeAlg : 'EdDSA',
      kid: 'envelopeKid' in opts ? opts.envelopeKid : TEST_KID,
      jws,
    },
  } as Loose;
}

/** A compact JWS with an arbitrary header and a raw signature segment (for alg/kid attacks). */
export function rawJws(header: unknown, payload: string, signature = ''): string {
  return `${base64urlEncode(JSON.stringify(header))}.${base64urlEncode(payload)}.${signature}`;
}

/** HS256 "key confusion": an HMAC over the signing input keyed with the public key bytes. */
export function hs256WithPublicKey(payload: string): string {
  const h = base64urlEncode(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: TEST_KID }));
  const p = base64urlEncode(payload);
  const secret = Buffer.from(TEST_JWKS.keys[0]?.x as string, 'base64url');
  return `${h}.${p}.${createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url')}`;
}

/** Wrap a compact JWS as the envelope's signature (offer copy = the decoded payload when it is JSON). */
export function envelopeWithJws(jws: string, offer: unknown, kid: unknown = TEST_KID) {
  return {
    kind: 'signed_verified_stay_offer',
    protocol_version: '0.1',
    offer,
    signature: { format: 'jws_compact', alg: 'EdDSA', kid, jws },
  };
}
