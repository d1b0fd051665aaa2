import { readFileSync } from 'node:fs';
import { assessFacts, type FactName, safeToQuote, verifyOffer } from '@vrpkit/agent';
import { baseOffer, FIXTURES, loadVector, mintEnvelope, TEST_JWKS } from '@vrpkit/testkit/minted';
import { describe, expect, it } from 'vitest';

interface Fixture {
  id: string;
  evaluation_time: string;
  input: { kind: string; mutation?: string; offer_overrides?: Record<string, unknown> };
  expected: {
    facts: Record<string, string>;
    safe_to_quote_official_direct_offer: boolean;
    safe_to_cite_verified_unavailable: boolean;
    must_fetch_fresh_offer: boolean;
  };
}

const { fixtures } = JSON.parse(readFileSync(new URL('three-state-verification.v0.1.json', FIXTURES), 'utf8')) as { fixtures: Fixture[] };

/** The fixture's inputs, made real: the official signed envelope, tampered or re-signed with overrides. */
function envelopeFor(input: Fixture['input']) {
  const official = loadVector('01-valid-fresh.json').input;
  if (input.mutation === 'tamper_payload_without_resigning') {
    const [h, , s] = official.signature.jws.split('.');
    const tampered = { ...baseOffer(), price: { ...baseOffer().price, agent_total: 1 } };
    return {
      ...official,
      offer: tampered,
      signature: { ...official.signature, jws: `${h}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${s}` },
    };
  }
  if (input.offer_overrides) return mintEnvelope({ ...baseOffer(), ...input.offer_overrides });
  return official;
}

describe('three-state facts (Core VRP v0.1 §9) against the official fixtures', () => {
  expect(fixtures).toHaveLength(5);
  for (const f of fixtures) {
    it(f.id, () => {
      let assessment: ReturnType<typeof assessFacts>;
      if (f.input.kind === 'discovery_timeout') {
        assessment = assessFacts({ discovered: false, verification: null, safeToQuote: false });
      } else {
        const verification = verifyOffer({ envelope: envelopeFor(f.input), jwks: TEST_JWKS, now: f.evaluation_time });
        assessment = assessFacts({ discovered: true, verification, safeToQuote: safeToQuote(verification) });
      }
      for (const [name, value] of Object.entries(f.expected.facts)) {
        // The fixtures name availability both `availability` and `availability.available`: one fact here.
        const fact = assessment.facts[(name === 'availability.available' ? 'availability' : name) as FactName];
        expect(fact.value, name).toBe(value);
        // Class follows where the value was read (Core VRP v0.1 §5.4): unknown facts were read from nowhere.
        if (value === 'unknown') expect(fact.class).toBeNull();
        else expect(fact.class).toBe(name === 'canonical_domain' || name === 'verified_stay_offer_endpoint' ? 'attested' : 'verifiable');
      }
      expect({
        safe_to_quote_official_direct_offer: assessment.safe_to_quote_official_direct_offer,
        safe_to_cite_verified_unavailable: assessment.safe_to_cite_verified_unavailable,
        must_fetch_fresh_offer: assessment.must_fetch_fresh_offer,
      }).toEqual({
        safe_to_quote_official_direct_offer: f.expected.safe_to_quote_official_direct_offer,
        safe_to_cite_verified_unavailable: f.expected.safe_to_cite_verified_unavailable,
        must_fetch_fresh_offer: f.expected.must_fetch_fresh_offer,
      });
    });
  }

  it('a stale calendar makes availability unknown, never negated or affirmed', () => {
    const offer = {
      ...baseOffer(),
      availability: { available: false, source: 'official_host_domain', calendar_freshness: { safe: false } },
    };
    const verification = verifyOffer({ envelope: mintEnvelope(offer), jwks: TEST_JWKS, now: '2026-06-02T12:05:00Z' });
    const a = assessFacts({ discovered: true, verification, safeToQuote: safeToQuote(verification) });
    expect(a.facts.availability).toEqual({ value: 'unknown', class: null, read_from: 'none' });
    expect(a.safe_to_cite_verified_unavailable).toBe(false);
  });

  it('unverifiable leaves everything unknown, including the signature', () => {
    const verification = verifyOffer({ envelope: loadVector('04-unknown-kid.json').input, jwks: TEST_JWKS, now: '2026-06-02T12:05:00Z' });
    const a = assessFacts({ discovered: true, verification, safeToQuote: false });
    expect(
      Object.entries(a.facts)
        .filter(([, f]) => f.value !== 'unknown')
        .map(([n]) => n),
    ).toEqual(['canonical_domain', 'verified_stay_offer_endpoint']);
  });
});
