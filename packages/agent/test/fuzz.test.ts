/** fast-check fuzzing: verifyOffer never throws, and never says `verified` for mutated signed bytes. */
import { verifyOffer } from '@vrpkit/agent';
import { baseOffer, FRESH_NOW, mintEnvelope, TEST_JWKS } from '@vrpkit/testkit/minted';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildEnvelope, jwksVariants, mutationArb, nowArb, offerArb } from './support/corpus.js';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const segment = fc.string({ unit: fc.constantFrom(...B64.split('')), maxLength: 200 });

describe('fuzz verifyOffer', () => {
  it('never throws on arbitrary JWS strings, and never verifies them', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.tuple(segment, segment, segment).map((p) => p.join('.')),
        ),
        (jws) => {
          const r = verifyOffer({ jws, jwks: TEST_JWKS, now: FRESH_NOW });
          expect(['invalid', 'unverifiable']).toContain(r.status);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('never throws on arbitrary envelopes, JWKS documents and clocks', () => {
    fc.assert(
      fc.property(
        fc.anything(),
        fc.anything(),
        fc.oneof(fc.string(), fc.integer(), fc.date({ noInvalidDate: false })),
        (envelope, jwks, now) => {
          const r = verifyOffer({ envelope, jwks, now: now as string });
          expect(r.status).not.toBe('verified');
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('never verifies a signed offer whose signing input or signature was changed', () => {
    const env = mintEnvelope(baseOffer());
    const jws = env.signature.jws as string;
    fc.assert(
      fc.property(fc.nat(jws.length - 1), fc.constantFrom(...B64.split('')), (at, char) => {
        fc.pre(jws[at] !== '.' && jws[at] !== char);
        const mutated = jws.slice(0, at) + char + jws.slice(at + 1);
        const r = verifyOffer({ envelope: { ...env, signature: { ...env.signature, jws: mutated } }, jwks: TEST_JWKS, now: FRESH_NOW });
        expect(r.status).not.toBe('verified');
        expect(r.status).not.toBe('expired');
      }),
      { numRuns: 3000 },
    );
  });

  it('on the generated corpus: never throws; verified only when nothing signed was mutated', () => {
    fc.assert(
      fc.property(offerArb, mutationArb, fc.nat(jwksVariants.length - 1), nowArb, (offer, mutation, j, now) => {
        const envelope = buildEnvelope(offer, mutation);
        const r = verifyOffer({ envelope, jwks: jwksVariants[j], now });
        // A mutation that happened to change nothing (same char, same value) leaves a pristine envelope.
        const kind = JSON.stringify(envelope) === JSON.stringify(buildEnvelope(offer, { kind: 'none' })) ? 'none' : mutation.kind;
        if (r.status === 'verified') {
          // Only genuinely signed bytes verify: the test key under JWKS 0 (re-signed header/payload variants
          // included), or the other key under JWKS 1, which publishes it. Every other mutation must fail.
          const signedByPublishedKey = (j === 0 && ['none', 'header', 'payload_bytes'].includes(kind)) || (j === 1 && kind === 'other_key');
          expect(signedByPublishedKey, JSON.stringify(mutation)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
