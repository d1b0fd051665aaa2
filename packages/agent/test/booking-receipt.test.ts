/**
 * verifyBookingReceipt (the vrpkit booking-request extension): three states with stable codes.
 * Receipts and offers are signed here with a real Ed25519 key; the verifier sees only the JWKS.
 */
import { createJwsSigner, generateEd25519Jwk, publicJwkOf } from '@vrpkit/core';
import { BOOKING_RECEIPT_TYP } from '@vrpkit/protocol';
import { baseOffer } from '@vrpkit/testkit/minted';
import { beforeAll, describe, expect, it } from 'vitest';
import { bookingTermsOf, offerJwsSha256, verifyBookingReceipt } from '../src/index.js';

const DOMAIN = 'villa-receipt.example';
let sign: ReturnType<typeof createJwsSigner>['sign'];
let otherSign: ReturnType<typeof createJwsSigner>['sign'];
let rotatedSign: ReturnType<typeof createJwsSigner>['sign'];
let jwks: { keys: unknown[] };
let offerJws: string;

/** A whole signed offer (the official vector's payload, `OfferPayloadSchema`'s shape) for this stay and total. */
const BASE = baseOffer();
const OFFER = {
  ...BASE,
  canonical_domain: DOMAIN,
  request: { check_in: '2027-04-10', check_out: '2027-04-13', guests: 2 },
  price: { ...BASE.price, currency: 'EUR', agent_total: 123_400, public_total: 130_000, exact: true },
  booking: { direct_booking_url: `https://${DOMAIN}/book?check_in=2027-04-10` },
};

function receipt(over: Record<string, unknown> = {}) {
  return {
    type: 'vrpkit_booking_request_receipt',
    version: '0.1',
    canonical_domain: DOMAIN,
    booking_id: 'br_0123456789ab',
    status: 'pending',
    stay: { check_in: '2027-04-10', check_out: '2027-04-13', guests: 2 },
    total: 123_400,
    currency: 'EUR',
    hold_expires_at: '2027-03-02T09:00:00Z',
    offer_jws_sha256: offerJwsSha256(offerJws),
    issued_at: '2027-03-01T09:00:00Z',
    ...over,
  };
}

const signed = (payload: unknown, header: Record<string, unknown> = { typ: BOOKING_RECEIPT_TYP }) => sign(JSON.stringify(payload), header);

beforeAll(async () => {
  const node = await generateEd25519Jwk();
  const other = await generateEd25519Jwk();
  sign = createJwsSigner(node.privateJwk, 'node-key').sign;
  otherSign = createJwsSigner(other.privateJwk, 'node-key').sign;
  rotatedSign = createJwsSigner(node.privateJwk, 'rotated-away').sign;
  jwks = { keys: [publicJwkOf(node.privateJwk, 'node-key')] };
  offerJws = sign(JSON.stringify(OFFER), { typ: 'JWT' });
});

describe('verifyBookingReceipt', () => {
  it('verifies a receipt signed by the node for exactly the offer sent', async () => {
    const r = await verifyBookingReceipt(signed(receipt()), { jwks, domain: DOMAIN, offerJws });
    expect(r).toMatchObject({
      status: 'verified',
      code: null,
      kid: 'node-key',
      receipt: { booking_id: 'br_0123456789ab', total: 123_400 },
    });
    expect(bookingTermsOf(offerJws)).toMatchObject({ total: 123_400, booking_origin: `https://${DOMAIN}` });
  });

  it.each([
    ['another offer', { offer_jws_sha256: 'a'.repeat(64) }, 'booking_receipt_offer_mismatch'],
    ['another total', { total: 99_900 }, 'booking_receipt_terms_mismatch'],
    ['other dates', { stay: { check_in: '2027-04-11', check_out: '2027-04-13', guests: 2 } }, 'booking_receipt_terms_mismatch'],
    ['another currency', { currency: 'USD' }, 'booking_receipt_terms_mismatch'],
    ['another domain', { canonical_domain: 'other.example' }, 'booking_receipt_domain_mismatch'],
    ['a payload off the schema', { status: 'booked' }, 'booking_receipt_schema_mismatch'],
  ])('refuses a receipt for %s as invalid', async (_what, over, code) => {
    const r = await verifyBookingReceipt(signed(receipt(over)), { jwks, domain: DOMAIN, offerJws });
    expect(r).toMatchObject({ status: 'invalid', code, receipt: null });
  });

  it('refuses a wrong typ, a forged signature and a malformed JWS as invalid', async () => {
    expect(await verifyBookingReceipt(signed(receipt(), { typ: 'JWT' }), { jwks, domain: DOMAIN, offerJws })).toMatchObject({
      status: 'invalid',
      code: 'booking_receipt_header_invalid',
    });
    const forged = otherSign(JSON.stringify(receipt()), { typ: BOOKING_RECEIPT_TYP });
    expect(await verifyBookingReceipt(forged, { jwks, domain: DOMAIN, offerJws })).toMatchObject({
      status: 'invalid',
      code: 'booking_receipt_signature_invalid',
    });
    expect(await verifyBookingReceipt('not.a-jws', { jwks, domain: DOMAIN, offerJws })).toMatchObject({
      status: 'invalid',
      code: 'booking_receipt_malformed',
    });
  });

  it('is unverifiable, never verified, without the node’s key', async () => {
    const unknownKid = rotatedSign(JSON.stringify(receipt()), { typ: BOOKING_RECEIPT_TYP });
    expect(await verifyBookingReceipt(unknownKid, { jwks, domain: DOMAIN, offerJws })).toMatchObject({
      status: 'unverifiable',
      code: 'booking_receipt_kid_unknown',
    });
    expect(await verifyBookingReceipt(signed(receipt()), { jwks: null, domain: DOMAIN, offerJws })).toMatchObject({
      status: 'unverifiable',
      code: 'booking_receipt_jwks_unavailable',
    });
    // No key set and no fetch to read one: nothing is known.
    expect(await verifyBookingReceipt(signed(receipt()), { domain: DOMAIN, offerJws })).toMatchObject({
      status: 'unverifiable',
      code: 'booking_receipt_jwks_unavailable',
    });
  });
});
