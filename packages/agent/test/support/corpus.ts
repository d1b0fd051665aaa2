/**
 * A generated corpus of signed, re-signed and mutated offer envelopes (fast-check), shared by the
 * differential and fuzz tests.
 */
import { sign as cryptoSign } from 'node:crypto';
import { base64urlEncode, createJwsSigner, ed25519PrivateJwkFromSeed, importEd25519PrivateKey, publicJwkOf, sha256 } from '@vrpkit/core';
import { baseOffer, type Loose, TEST_JWKS, TEST_KID, TEST_PRIVATE_JWK } from '@vrpkit/testkit/minted';
import fc from 'fast-check';

const otherSigner = createJwsSigner(ed25519PrivateJwkFromSeed(sha256('differential other key')), TEST_KID, { typ: 'JWT' });
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export const jwksVariants = [
  TEST_JWKS,
  { keys: [publicJwkOf(ed25519PrivateJwkFromSeed(sha256('differential other key')), TEST_KID)] },
  { keys: [{ ...TEST_JWKS.keys[0], kid: 'rotated-away' }] },
  { keys: [{ ...TEST_JWKS.keys[0], kty: 'EC' }] },
  { keys: [{ ...TEST_JWKS.keys[0], x: 'AAAA' }] },
  { keys: [] },
  {},
];

const validUntil = fc.constantFrom(
  '2026-06-02T12:10:00Z',
  '2026-06-02T12:00:00Z',
  '2026-06-02T12:10:00.250Z',
  '2026-06-02',
  'tisdag',
  undefined,
  '',
);
const bookingUrl = fc.constantFrom(
  'https://example-host.invalid/book?offer_id=x',
  'https://book.example-host.invalid/b',
  'http://example-host.invalid/book',
  'https://example-host.invalid.evil.net/book',
  'https://evil-example-host.invalid/',
  'https://u@example-host.invalid/',
  '',
);

/** A payload: the official offer with generated variations. */
export const offerArb = fc
  .record({
    available: fc.constantFrom(true, false, undefined),
    exact: fc.boolean(),
    agent_total: fc.oneof(fc.nat(10_000_000), fc.constant(null)),
    may_quote: fc.boolean(),
    valid_until: validUntil,
    url: bookingUrl,
  })
  .map((v) => {
    const o = baseOffer();
    o.availability.available = v.available;
    o.price.exact = v.exact;
    o.price.agent_total = v.agent_total;
    o.agent_permission.may_quote_as_official_direct_offer = v.may_quote;
    o.valid_until = v.valid_until;
    o.booking.direct_booking_url = v.url;
    return JSON.parse(JSON.stringify(o)) as Loose;
  });

/** How a signed envelope is damaged before verification. */
export type Mutation =
  | { kind: 'none' }
  | { kind: 'flip'; segment: 0 | 1 | 2; at: number; char: string }
  | { kind: 'header'; header: unknown }
  | { kind: 'payload_bytes'; text: string }
  | { kind: 'other_key' }
  | { kind: 'envelope_kid'; kid: unknown }
  | { kind: 'envelope_alg'; alg: unknown }
  | { kind: 'offer_field'; value: unknown }
  | { kind: 'drop_signature' }
  | { kind: 'segments'; count: number };

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({
    kind: fc.constant('flip' as const),
    segment: fc.constantFrom(0 as const, 1 as const, 2 as const),
    at: fc.nat(),
    char: fc.constantFrom(...B64URL.split(''), '=', '+', '/', '.', '!'),
  }),
  fc.record({
    kind: fc.constant('header' as const),
    header: fc.oneof(
      fc.constant({ alg: 'none', kid: TEST_KID }),
      fc.constant({ alg: 'HS256', kid: TEST_KID }),
      fc.constant({ alg: 'EdDSA' }),
      fc.constant({ alg: 'EdDSA', kid: 'unknown-kid' }),
      fc.constant({ alg: 'EdDSA', kid: TEST_KID, typ: 'JWT', extra: true }),
      fc.constant([]),
      fc.constant('EdDSA'),
      fc.record({ alg: fc.string(), kid: fc.oneof(fc.string(), fc.constant(TEST_KID)) }),
    ),
  }),
  fc.record({
    kind: fc.constant('payload_bytes' as const),
    text: fc.oneof(fc.string(), fc.constantFrom('[]', '1', '"s"', '{}', '{"valid_until":"2026-06-02T12:10:00Z"}')),
  }),
  fc.constant({ kind: 'other_key' as const }),
  fc.record({ kind: fc.constant('envelope_kid' as const), kid: fc.oneof(fc.constant('another'), fc.constant(undefined), fc.string()) }),
  fc.record({ kind: fc.constant('envelope_alg' as const), alg: fc.constantFrom('none', 'HS256', undefined) }),
  fc.record({ kind: fc.constant('offer_field' as const), value: fc.oneof(fc.nat(), fc.string(), fc.constant(null)) }),
  fc.constant({ kind: 'drop_signature' as const }),
  fc.record({ kind: fc.constant('segments' as const), count: fc.constantFrom(1, 2, 4) }),
);

const signer = createJwsSigner(TEST_PRIVATE_JWK, TEST_KID, { typ: 'JWT' });

/** Sign `offer`, wrap it, and apply `m`. */
export function buildEnvelope(offer: Record<string, unknown>, m: Mutation): Loose {
  const payload = JSON.stringify(offer);
  let jws = (m.kind === 'other_key' ? otherSigner : signer).sign(payload);
  const env: Loose = {
    kind: 'signed_verified_stay_offer',
    protocol_version: '0.1',
    offer: JSON.parse(payload),
    signature: { format: 'jws_compact', alg: 'EdDSA', kid: TEST_KID, jws },
  };
  const parts = jws.split('.') as [string, string, string];
  switch (m.kind) {
    case 'flip': {
      const seg = parts[m.segment];
      const i = seg.length === 0 ? 0 : m.at % seg.length;
      parts[m.segment] = seg.slice(0, i) + m.char + seg.slice(i + 1);
      jws = parts.join('.');
      break;
    }
    case 'header':
      // Re-signed by the real key with a hostile header: only alg/kid rules can reject it.
      jws = resign(base64urlEncode(JSON.stringify(m.header)), parts[1]);
      break;
    case 'payload_bytes':
      jws = resign(parts[0], base64urlEncode(m.text));
      break;
    case 'envelope_kid':
      env.signature.kid = m.kid;
      break;
    case 'envelope_alg':
      env.signature.alg = m.alg;
      break;
    case 'offer_field':
      env.offer.price.agent_total = m.value;
      break;
    case 'drop_signature':
      delete env.signature;
      return env;
    case 'segments':
      jws = Array.from({ length: m.count }, (_, i) => parts[i % 3]).join('.');
      break;
  }
  env.signature.jws = jws;
  return env;
}

const keyObject = importEd25519PrivateKey(TEST_PRIVATE_JWK);

/** Sign an arbitrary `header.payload` with the test key (as a node with a hostile header would). */
function resign(h: string, p: string): string {
  return `${h}.${p}.${cryptoSign(null, Buffer.from(`${h}.${p}`), keyObject).toString('base64url')}`;
}

export const nowArb = fc.constantFrom('2026-06-02T12:05:00Z', '2026-06-02T12:10:00Z', '2026-06-02T13:00:00Z', '2026-06-02T11:00:00.000Z');
