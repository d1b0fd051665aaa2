/**
 * The signed booking-request receipt (vrpkit booking-request extension): a compact JWS with the
 * node's active offer key, `typ` `vrpkit-booking-receipt+jws`, over the booking's id, stay, total,
 * status, hold expiry and the digest of the offer JWS it was made from. Verifiable with the node's
 * JWKS like its offers; the payload's shape is `BookingReceiptPayloadSchema`.
 */
import { type JwsSigner, toUtcSecond } from '@vrpkit/core';
import {
  BOOKING_RECEIPT_TYP,
  BOOKING_RECEIPT_TYPE,
  BOOKING_RECEIPT_VERSION,
  type BookingReceiptPayload,
  type BookingRequestView,
} from '@vrpkit/protocol';
import type { BookingRequestRecord } from './ports.js';

/** The booking as the API shows it (never the guest's details). */
export function bookingView(b: BookingRequestRecord): BookingRequestView {
  return {
    booking_id: b.booking_id,
    status: b.status,
    check_in: b.check_in,
    check_out: b.check_out,
    guests: Number(b.guests),
    currency: b.currency,
    total: Number(b.total),
    hold_expires_at: b.hold_expires_at,
    offer_jws_sha256: b.offer_jws_sha256,
  };
}

/** Sign the receipt for `b` as it stands, at `now`. */
export function signBookingReceipt(b: BookingRequestRecord, canonicalDomain: string, signer: JwsSigner, now: number): string {
  const v = bookingView(b);
  const payload: BookingReceiptPayload = {
    type: BOOKING_RECEIPT_TYPE,
    version: BOOKING_RECEIPT_VERSION,
    canonical_domain: canonicalDomain,
    booking_id: v.booking_id,
    status: v.status,
    stay: { check_in: v.check_in, check_out: v.check_out, guests: v.guests },
    total: v.total,
    currency: v.currency,
    hold_expires_at: v.hold_expires_at,
    offer_jws_sha256: v.offer_jws_sha256,
    issued_at: toUtcSecond(now),
  };
  return signer.sign(JSON.stringify(payload), { typ: BOOKING_RECEIPT_TYP });
}
