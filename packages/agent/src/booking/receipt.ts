/**
 * `verifyBookingReceipt`: the node's answer to a booking request (the vrpkit booking-request
 * extension) is a compact JWS signed with the node's offer key. This checks, fail-closed:
 * the protected header (`alg` EdDSA, `typ` vrpkit-booking-receipt+jws, a `kid`), the signature
 * against the node's own JWKS (Core VRP v0.1 §3: the key set its discovery document names), the
 * payload schema (`BookingReceiptPayloadSchema`), the domain, the SHA-256 of the offer JWS the
 * booking was made from, and the stay and total against that offer's signed terms.
 *
 * Three states, as for offers (Core VRP v0.1 §9): `verified`; `invalid` (a signature or a binding
 * that is wrong); `unverifiable` (no key could be read: nothing is known).
 */
import { type Clock, type FetchLike, importEd25519PublicKey, jwsPayloadJson, parseCompactJws, verifyEd25519Signature } from '@vrpkit/core';
import { BOOKING_RECEIPT_TYP, type BookingReceiptPayload, BookingReceiptPayloadSchema } from '@vrpkit/protocol';
import { normalizeHost } from '../canonical-domain.js';
import { fetchDiscovery } from '../discovery.js';
import { JwksCache } from '../jwks-cache.js';
import { bookingTermsOf, offerJwsSha256 } from './act.js';

export type BookingReceiptCode =
  /** Not a compact JWS, or its header is not JSON. */
  | 'booking_receipt_malformed'
  /** `alg` is not EdDSA, `typ` is not the booking receipt's, or there is no `kid`. */
  | 'booking_receipt_header_invalid'
  /** The node's JWKS could not be read (discovery or key set): unverifiable. */
  | 'booking_receipt_jwks_unavailable'
  /** No key with this `kid` in the node's JWKS: unverifiable. */
  | 'booking_receipt_kid_unknown'
  | 'booking_receipt_signature_invalid'
  /** The payload is not the receipt schema. */
  | 'booking_receipt_schema_mismatch'
  /** Signed for another node's domain. */
  | 'booking_receipt_domain_mismatch'
  /** Made from another offer JWS than the one sent. */
  | 'booking_receipt_offer_mismatch'
  /** Its stay, total or currency are not the offer's signed terms. */
  | 'booking_receipt_terms_mismatch';

export type BookingReceiptVerification =
  | { status: 'verified'; code: null; receipt: BookingReceiptPayload; kid: string }
  | { status: 'invalid' | 'unverifiable'; code: BookingReceiptCode; message: string; receipt: null };

export interface VerifyBookingReceiptOptions {
  /** The node's JWKS document, when the caller already holds it; else it is read with `fetch`. */
  jwks?: unknown;
  /** Reads the domain's discovery document and JWKS (through `jwksCache` when given). */
  fetch?: FetchLike;
  jwksCache?: JwksCache;
  clock?: Clock;
  /** The node's canonical domain the booking request was sent to. */
  domain: string;
  /** The offer JWS the booking request carried. */
  offerJws: string;
}

function fail(status: 'invalid' | 'unverifiable', code: BookingReceiptCode, message: string): BookingReceiptVerification {
  return { status, code, message, receipt: null };
}

async function nodeJwks(opts: VerifyBookingReceiptOptions, domain: string, kid: string): Promise<unknown | null> {
  if (opts.jwks !== undefined) return opts.jwks;
  if (!opts.fetch) return null;
  const discovered = await fetchDiscovery(domain, { fetch: opts.fetch });
  if (!discovered.ok) return null;
  const cache = opts.jwksCache ?? new JwksCache({ fetch: opts.fetch, ...(opts.clock ? { clock: opts.clock } : {}) });
  const got = await cache.get(discovered.discovery.jwks_url, kid);
  return got.ok ? got.jwks : null;
}

/** Verify a booking-request receipt against the node's JWKS and the offer it was made from. Never throws. */
export async function verifyBookingReceipt(receiptJws: unknown, opts: VerifyBookingReceiptOptions): Promise<BookingReceiptVerification> {
  const domain = normalizeHost(opts.domain);
  if (!domain) return fail('unverifiable', 'booking_receipt_jwks_unavailable', 'no domain to read keys from');
  const parsed = parseCompactJws(receiptJws);
  if (!parsed.ok) return fail('invalid', 'booking_receipt_malformed', parsed.reason);
  const { header, signingInput, signature } = parsed.jws;
  const kid = header.kid;
  if (header.alg !== 'EdDSA' || header.typ !== BOOKING_RECEIPT_TYP || typeof kid !== 'string' || kid === '')
    return fail('invalid', 'booking_receipt_header_invalid', `the header must be alg EdDSA, typ ${BOOKING_RECEIPT_TYP}, with a kid`);
  let jwks: unknown;
  try {
    jwks = await nodeJwks(opts, domain, kid);
  } catch {
    jwks = null;
  }
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) return fail('unverifiable', 'booking_receipt_jwks_unavailable', `the JWKS of ${domain} could not be read`);
  const jwk = keys.find((k) => (k as { kid?: unknown } | null)?.kid === kid);
  const key = jwk === undefined ? null : importEd25519PublicKey(jwk);
  if (!key) return fail('unverifiable', 'booking_receipt_kid_unknown', `no usable key ${kid} in the JWKS of ${domain}`);
  if (!verifyEd25519Signature(signingInput, signature, key))
    return fail('invalid', 'booking_receipt_signature_invalid', 'the signature does not verify with the node’s key');
  const payload = jwsPayloadJson(parsed.jws);
  if (payload === undefined) return fail('invalid', 'booking_receipt_schema_mismatch', 'the payload is not JSON');
  const r = BookingReceiptPayloadSchema.safeParse(payload);
  if (!r.success) return fail('invalid', 'booking_receipt_schema_mismatch', `payload: ${r.error.issues[0]?.path.join('.') || '(root)'}`);
  const receipt = r.data;
  if (normalizeHost(receipt.canonical_domain) !== domain)
    return fail('invalid', 'booking_receipt_domain_mismatch', 'the receipt is signed for another domain');
  if (receipt.offer_jws_sha256 !== offerJwsSha256(opts.offerJws))
    return fail('invalid', 'booking_receipt_offer_mismatch', 'the receipt was made from another offer');
  const terms = bookingTermsOf(opts.offerJws);
  if (
    !terms ||
    terms.check_in !== receipt.stay.check_in ||
    terms.check_out !== receipt.stay.check_out ||
    terms.guests !== receipt.stay.guests ||
    terms.total !== receipt.total ||
    terms.currency !== receipt.currency
  )
    return fail('invalid', 'booking_receipt_terms_mismatch', 'the receipt’s stay or total is not the offer’s');
  return { status: 'verified', code: null, receipt, kid };
}
