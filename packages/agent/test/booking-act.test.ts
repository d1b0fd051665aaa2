/**
 * bookingActFromVerifiedOffer and liveUcpComplete without a network: the act is a valid candidate act
 * bound to the node's origin and lodging REST endpoint, the session and the verified offer's terms;
 * what is not the verified offer (or its session) is refused.
 */
import { createJwsSigner, generateEd25519Jwk } from '@vrpkit/core';
import { type ActContext, digestArguments, validateAct } from '@vrpkit/gate';
import type { UcpSessionView } from '@vrpkit/protocol';
import { baseOffer } from '@vrpkit/testkit/minted';
import { beforeAll, describe, expect, it } from 'vitest';
import { bookingActFromVerifiedOffer, liveUcpComplete, offerJwsSha256, type VerifiedOfferInput } from '../src/index.js';

const DOMAIN = 'villa-act.example';
const ENDPOINT = `https://${DOMAIN}/ucp/v1`;
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

/** The node's Booking view of a session bound to `offerJws` (the fields the act reads). */
function sessionOf(offerJws: string, over: { id?: string; total?: number; end?: string } = {}): UcpSessionView {
  return {
    id: over.id ?? 'ucs_one',
    status: 'requires_escalation',
    currency: 'EUR',
    property: { id: 'p1' },
    stays: [{ id: 'stay-1', stay_dates: { start_date: '2027-04-10', end_date: over.end ?? '2027-04-13' }, occupancy: { total: 2 } }],
    totals: [{ type: 'total', amount: over.total ?? 123_400 }],
    continue_url: `https://${DOMAIN}/ucp/continue/${over.id ?? 'ucs_one'}`,
    'dev.vrpkit.lodging': { offer_jws: offerJws },
  } as UcpSessionView;
}
const ucp = () => ({ endpoint: ENDPOINT, session: sessionOf(jws) });

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
  it('builds a valid FINANCIAL act bound to the node’s origin, its REST endpoint, the session and the offer digest', () => {
    const r = bookingActFromVerifiedOffer(verified(), jws, ucp(), { context, blockId: 'toolu_1', vendor: 'anthropic' });
    if (!r.ok) throw new Error(r.code);
    expect(validateAct(r.act).ok).toBe(true);
    expect(r.act).toMatchObject({
      act_type: 'API_REQUEST',
      consequence_class: 'FINANCIAL',
      tool: { tool_id: 'request_booking', tool_endpoint: ENDPOINT },
      destination: { destination_id: `https://${DOMAIN}`, destination_url: ENDPOINT },
    });
    expect(r.args).toEqual({
      canonical_domain: DOMAIN,
      session_id: 'ucs_one',
      offer_jws_sha256: offerJwsSha256(jws),
      check_in: '2027-04-10',
      check_out: '2027-04-13',
      guests: 2,
      total: 123_400,
      currency: 'EUR',
    });
    expect(r.act.arguments_digest).toEqual(digestArguments(r.args));
    expect(r.approval.summary).toBe(`request_booking at ${DOMAIN}: 2027-04-10 → 2027-04-13, 2 guests, EUR 1234.00`);
    // The live Complete of exactly this session, on this endpoint, digests to the approved arguments.
    const live = liveUcpComplete(r.act, { endpoint: ENDPOINT, session_id: 'ucs_one', session: sessionOf(jws) });
    expect(digestArguments(live.args)).toEqual(r.act.arguments_digest);
    expect(live.act.destination).toEqual(r.act.destination);
    expect(live.url).toBe(`${ENDPOINT}/booking-sessions/ucs_one/complete`);
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
    expect(bookingActFromVerifiedOffer(v(), jws, ucp(), { context, blockId: 'toolu_2', vendor: 'anthropic' })).toMatchObject({
      ok: false,
      code,
    });
  });

  it('refuses a JWS other than the verified one', () => {
    expect(bookingActFromVerifiedOffer(verified(), otherJws, ucp(), { context, blockId: 'toolu_3', vendor: 'anthropic' })).toMatchObject({
      ok: false,
      code: 'booking_offer_mismatch',
    });
  });

  it.each([
    ['another offer', () => ({ endpoint: ENDPOINT, session: sessionOf(otherJws) })],
    ['another total', () => ({ endpoint: ENDPOINT, session: sessionOf(jws, { total: 1 }) })],
    ['another stay', () => ({ endpoint: ENDPOINT, session: sessionOf(jws, { end: '2027-04-14' }) })],
    ['an endpoint off the offer’s origin', () => ({ endpoint: 'https://evil.example/ucp/v1', session: sessionOf(jws) })],
  ])('refuses a session with %s: booking_session_mismatch', (_what, u) => {
    expect(bookingActFromVerifiedOffer(verified(), jws, u(), { context, blockId: 'toolu_5', vendor: 'anthropic' })).toMatchObject({
      ok: false,
      code: 'booking_session_mismatch',
    });
  });

  it('a live Complete of another session, total or stay, or an unreadable one, never digests to the approved arguments', () => {
    const r = bookingActFromVerifiedOffer(verified(), jws, ucp(), { context, blockId: 'toolu_4', vendor: 'anthropic' });
    if (!r.ok) throw new Error(r.code);
    for (const live of [
      { session_id: 'ucs_two', session: sessionOf(jws, { id: 'ucs_two' }) },
      { session_id: 'ucs_one', session: sessionOf(jws, { total: 123_401 }) },
      { session_id: 'ucs_one', session: sessionOf(jws, { end: '2027-04-14' }) },
      { session_id: 'ucs_one', session: sessionOf(otherJws) },
      // The URL names one session, the answer is another's.
      { session_id: 'ucs_one', session: sessionOf(jws, { id: 'ucs_two' }) },
      { session_id: 'ucs_one', session: null },
    ]) {
      expect(digestArguments(liveUcpComplete(r.act, { endpoint: ENDPOINT, ...live }).args)).not.toEqual(r.act.arguments_digest);
    }
    const moved = liveUcpComplete(r.act, { endpoint: 'https://evil.example/ucp/v1', session_id: 'ucs_one', session: sessionOf(jws) });
    expect(moved.act.destination?.destination_id).toBe('https://evil.example');
  });
});
