/**
 * Regression tests for defects found by an independent attack on the verifier, each `describe`
 * named after the defect.
 */
import { assessFacts, checkMcpCallReceipt, quoteChecks, safeToQuote, verifyOffer } from '@vrpkit/agent';
import { describe, expect, it } from 'vitest';
import { callResultWith, DOMAIN, mintReceipt, mintEnvelope as mintReceiptEnvelope, NOW, receiptTestJwks, SENT } from './receipt-helpers.js';
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

describe('checkMcpCallReceipt binds a call to the wrong offer', () => {
  const twoGuests = { tool: SENT.tool, arguments: { ...SENT.arguments, guests: 2 } };
  const check = (envelope: unknown, receipt: unknown, sentCall = twoGuests) =>
    checkMcpCallReceipt({
      callResult: callResultWith(receipt, envelope),
      sentCall,
      envelope,
      surfaceHost: DOMAIN,
      resolveJwks: () => receiptTestJwks,
      now: Date.parse(NOW),
    });

  it('a 2-guest call answered with a genuine 3-guest offer and a genuine 2-guest transport attestation is not verified', async () => {
    const threeGuestOffer = mintReceiptEnvelope(undefined, DOMAIN, { guests: 3 });
    // The node really served both: a 3-guest offer (its receipt's offer layer) and a 2-guest call (its assertion).
    const { receipt } = mintReceipt({ envelope: threeGuestOffer, call: twoGuests });
    const r = await check(threeGuestOffer, receipt);
    expect(r.transport).toMatchObject({ status: 'verified', bound: true }); // the assertion alone cannot tell
    expect(r.offer).toMatchObject({ status: 'invalid', code: 'offer_request_mismatch', request_matches_call: false });
    expect(r.verified).toBe(false);
  });

  it('the same receipt binds when the offer answers the call; camelCase aliases and an echoed language still bind', async () => {
    const twoGuestOffer = mintReceiptEnvelope(undefined, DOMAIN, { guests: 2 });
    const { receipt } = mintReceipt({ envelope: twoGuestOffer, call: twoGuests });
    expect((await check(twoGuestOffer, receipt)).verified).toBe(true);
    const camel = { tool: SENT.tool, arguments: { checkIn: '2026-09-02', checkOut: '2026-09-05', guests: 2 } };
    expect((await check(twoGuestOffer, mintReceipt({ envelope: twoGuestOffer, call: camel }).receipt, camel)).verified).toBe(true);
    const sv = { tool: SENT.tool, arguments: { ...twoGuests.arguments, language: 'sv' } };
    const svOffer = mintReceiptEnvelope(undefined, DOMAIN, { guests: 2, language: 'sv' });
    expect((await check(svOffer, mintReceipt({ envelope: svOffer, call: sv }).receipt, sv)).verified).toBe(true);
    // An offer localised for a language the call did not ask for answers another call.
    expect((await check(svOffer, mintReceipt({ envelope: svOffer, call: twoGuests }).receipt)).offer.code).toBe('offer_request_mismatch');
  });
});
