/**
 * Regression tests for defects found by an independent attack on the verifier, each `describe`
 * named after the defect.
 */
import { assessFacts, quoteChecks, safeToQuote, verifyOffer } from '@vrpkit/agent';
import { describe, expect, it } from 'vitest';
import { baseOffer, envelopeWithJws, FRESH_NOW, TEST_JWKS, testSigner } from './support/minted.js';

/** Sign the official payload with `price.public_total` and `agent_total` written as `literal`, byte for byte. */
function offerWithTotalsWritten(literal: string) {
  const text = JSON.stringify(baseOffer())
    .replaceAll('"public_total":123400', `"public_total":${literal}`)
    .replaceAll('"agent_total":123400', `"agent_total":${literal}`);
  expect(text).toContain(`"agent_total":${literal}`);
  return envelopeWithJws(testSigner.sign(text), JSON.parse(text));
}

describe('a rounded price is quoted as exact', () => {
  for (const literal of ['9007199254740993', '1e308', '123.0000000000000001', '9007199254740991.4', '1e2']) {
    it(`a signed total of ${literal} is not exact, so not safe to quote`, () => {
      const v = verifyOffer({ envelope: offerWithTotalsWritten(literal), jwks: TEST_JWKS, now: FRESH_NOW });
      expect(v.status).toBe('verified');
      expect(quoteChecks(v).failures).toEqual(['price_not_exact']);
      expect(safeToQuote(v)).toBe(false);
      expect(assessFacts({ discovered: null, verification: v, safeToQuote: false }).facts.price.value).toBe('unknown');
    });
  }

  it('the largest safe integer, written plainly, is still exact', () => {
    const v = verifyOffer({ envelope: offerWithTotalsWritten('9007199254740991'), jwks: TEST_JWKS, now: FRESH_NOW });
    expect(safeToQuote(v)).toBe(true);
  });

  it('a duplicate member is read as JSON.parse reads it (the last one)', () => {
    const text = JSON.stringify(baseOffer()).replace('"public_total":123400', '"public_total":1.5,"public_total":123400');
    const v = verifyOffer({ envelope: envelopeWithJws(testSigner.sign(text), JSON.parse(text)), jwks: TEST_JWKS, now: FRESH_NOW });
    expect(safeToQuote(v)).toBe(true);
    const reversed = JSON.stringify(baseOffer()).replace(
      '"public_total":123400',
      '"public_total":123400,"public_total":123400.00000000000001',
    );
    const w = verifyOffer({ envelope: envelopeWithJws(testSigner.sign(reversed), JSON.parse(reversed)), jwks: TEST_JWKS, now: FRESH_NOW });
    expect(quoteChecks(w).failures).toEqual(['price_not_exact']);
  });
});
