/**
 * bookingActFromVerifiedOffer and liveBookingRequest without a network: the act is a valid
 * candidate act bound to the SIGNED booking origin, and what is not the verified offer is refused.
 */
import { createJwsSigner, generateEd25519Jwk } from '@vrpkit/core';
import { type ActContext, digestArguments, validateAct } from '@vrpkit/gate';
import { baseOffer } from '@vrpkit/testkit/minted';
import { beforeAll, describe, expect, it } from 'vitest';
import { bookingActFromVerifiedOffer, liveBookingRequest, offerJwsSha256, type VerifiedOfferInput } from '../src/index.js';

const DOMAIN = 'villa-act.example';
const GUEST = { name: 'Ada Guest', email: 'ada@example.org' };
/** A whole signed offer (the official vector's payload, `OfferPayloadSchema`'s shape) for this stay and total. */
const BASE = baseOffer();
const PAYLOAD = {
  ...BASE,
  canonical_domain: DOMAIN,
  request: { check_in: '2027-04-10', check_out: '2027-04-13', guests: 2 },
  availability: { ...BASE.availability, available: true, calendar_freshness: { safe: true } },
  price: { ...BASE.price, currency: 'EUR', agent_total: 123_400, public_total: 130_000, exact: true },
  // A subdomain of the canonical domain (Core VRP v0.1 §5.1): the act's destination is this origin.
  booking: { direct_booking_url: `https://book.${DOMAIN}/stay?check_in=2027-04-10` },
};
const context: ActContext = {
  session_id: 'sess-act',
  principal: { principal_id: 'guest' },
  agent: { agent_id: 'agent-1', model_id: 'recorded' },
  purpose: { purpose_id: 'book' },
  policy_state: { policy_epoch: 0, authority_epoch: 0, revocation_epoch: 0 },
  sink_id: 'sink-1',
  classify: () => 'FINANCIAL',
  now: Date.parse('2027-03-01T09:00:00Z'),
};
let jws: string;
let otherJws: string;

function verified(over: Partial<VerifiedOfferInput> = {}, payload: Record<string, unknown> = PAYLOAD): VerifiedOfferInput {
  return {
    envelope: { signature: { jws } },
    verification: { status: 'verified', code: null, reason: '', fresh: true, header: {}, payload, payloadMatchesOffer: true },
    safe_to_quote: true,
    failures: [],
    classification: 'node_tool',
    receipt: { receipt_present: true, verified: true },
    ...over,
  };
}

beforeAll(async () => {
  const { privateJwk } = await generateEd25519Jwk();
  const signer = createJwsSigner(privateJwk, 'k1');
  jws = signer.sign(JSON.stringify(PAYLOAD), { typ: 'JWT' });
  otherJws = signer.sign(JSON.stringify({ ...PAYLOAD, price: { ...PAYLOAD.price, agent_total: 99_900 } }), { typ: 'JWT' });
});

describe('bookingActFromVerifiedOffer', () => {
  it('builds a valid FINANCIAL act bound to the signed booking origin and the offer digest', () => {
    const r = bookingActFromVerifiedOffer(verified(), jws, GUEST, { context, blockId: 'toolu_1', vendor: 'anthropic' });
    if (!r.ok) throw new Error(r.code);
    expect(validateAct(r.act).ok).toBe(true);
    expect(r.act).toMatchObject({
      act_type: 'API_REQUEST',
      consequence_class: 'FINANCIAL',
      tool: { tool_id: 'request_booking', tool_endpoint: `https://book.${DOMAIN}` },
      destination: { destination_id: `https://book.${DOMAIN}`, destination_url: `https://book.${DOMAIN}/api/booking-requests` },
    });
    expect(r.args).toMatchObject({ offer_jws_sha256: offerJwsSha256(jws), total: 123_400, currency: 'EUR', guests: 2, guest: GUEST });
    expect(r.act.arguments_digest).toEqual(digestArguments(r.args));
    expect(r.approval.summary).toBe(`request_booking at ${DOMAIN}: 2027-04-10 → 2027-04-13, 2 guests, EUR 1234.00`);
    // The live request for exactly this offer, to this origin, digests to the approved arguments.
    const live = liveBookingRequest(r.act, { endpoint: r.endpoint, offer_jws: jws, guest: GUEST, idempotency_key: 'key-00000001' });
    expect(digestArguments(live.args)).toEqual(r.act.arguments_digest);
    expect(live.act.destination).toEqual(r.act.destination);
    expect(live.body).toEqual({ offer_jws: jws, guest: GUEST, idempotency_key: 'key-00000001' });
  });

  it.each([
    ['an unverified offer', () => verified({ verification: null }), 'booking_offer_unverified'],
    ['an operator tool’s offer', () => verified({ classification: 'operator_tool', safe_to_quote: false }), 'booking_operator_tool'],
    [
      'an offer whose MCP receipt failed',
      () => verified({ receipt: { receipt_present: true, verified: false } }),
      'booking_receipt_unverified',
    ],
    ['a signed negative', () => verified({}, { ...PAYLOAD, availability: { available: false } }), 'booking_offer_not_bookable'],
    [
      'a stale calendar',
      () => verified({}, { ...PAYLOAD, availability: { available: false, calendar_freshness: { safe: false } } }),
      'booking_calendar_stale',
    ],
    ['an offer not safe to quote', () => verified({ safe_to_quote: false, failures: ['price_not_exact'] }), 'booking_offer_not_quotable'],
  ] as const)('refuses %s', (_what, v, code) => {
    // The table is built before the keys exist: each row makes its input when it runs.
    expect(bookingActFromVerifiedOffer(v(), jws, GUEST, { context, blockId: 'toolu_2', vendor: 'anthropic' })).toMatchObject({
      ok: false,
      code,
    });
  });

  it('refuses a JWS other than the verified one', () => {
    expect(bookingActFromVerifiedOffer(verified(), otherJws, GUEST, { context, blockId: 'toolu_3', vendor: 'anthropic' })).toMatchObject({
      ok: false,
      code: 'booking_offer_mismatch',
    });
  });

  it('a live request with another offer, or an unreadable one, never digests to the approved arguments', () => {
    const r = bookingActFromVerifiedOffer(verified(), jws, GUEST, { context, blockId: 'toolu_4', vendor: 'anthropic' });
    if (!r.ok) throw new Error(r.code);
    for (const offer_jws of [otherJws, 'not-a-jws']) {
      const live = liveBookingRequest(r.act, { endpoint: r.endpoint, offer_jws, guest: GUEST, idempotency_key: 'key-00000002' });
      expect(digestArguments(live.args)).not.toEqual(r.act.arguments_digest);
    }
    const moved = liveBookingRequest(r.act, {
      endpoint: 'https://evil.example/api/booking-requests',
      offer_jws: jws,
      guest: GUEST,
      idempotency_key: 'k-000003',
    });
    expect(moved.act.destination?.destination_id).toBe('https://evil.example');
  });
});
