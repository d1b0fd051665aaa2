/**
 * The first check on a booking request: is `offer_jws` an offer this node signed, still valid and
 * bookable as signed? It decides from the received JWS bytes only (never from a copy of the
 * payload sent beside it), against the node's own key ring as its JWKS publishes it: the active
 * key and retired keys still retained (Core VRP v0.1 §3.1); a revoked key is not in it, so an
 * offer it signed is refused. What it does not decide: whether the stay can still be had at that
 * price now. That is the live re-quote, inside the hold's transaction (desk.ts).
 */
import { asRecord, decodeJwsPayload, importEd25519PublicKey, parseCompactJws, verifyEd25519Signature } from '@vrpkit/core';
import { OFFER_KIND, type OfferPayload, type VrpJwks } from '@vrpkit/protocol';

export type OfferCheck =
  | { ok: true; offer: OfferPayload & { request: NonNullable<OfferPayload['request']> }; agentTotal: number }
  | { ok: false; code: 'BOOKING_OFFER_INVALID' | 'BOOKING_OFFER_EXPIRED' | 'BOOKING_OFFER_NOT_BOOKABLE'; message: string };

const invalid = (message: string): OfferCheck => ({ ok: false, code: 'BOOKING_OFFER_INVALID', message });

/** Check `jws` against the node's published keys `jwks`, its `canonicalDomain` and the instant `now` (epoch ms). */
export function checkOwnOffer(jws: string, jwks: VrpJwks, canonicalDomain: string, now: number): OfferCheck {
  const parsed = parseCompactJws(jws);
  if (!parsed.ok) return invalid('offer_jws is not a compact JWS');
  const { header, signingInput, signature, payloadSegment } = parsed.jws;
  // Core VRP v0.1 §3: offers are Ed25519 (EdDSA) signatures under a kid of the node's JWKS.
  if (header.alg !== 'EdDSA' || typeof header.kid !== 'string') return invalid('offer_jws is not an EdDSA JWS with a kid');
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return invalid('offer_jws was not signed by a key this node publishes');
  const key = importEd25519PublicKey(jwk);
  if (!key || !verifyEd25519Signature(signingInput, signature, key)) return invalid('offer_jws signature does not verify');
  const text = decodeJwsPayload(payloadSegment);
  let payload: unknown;
  try {
    payload = text === null ? undefined : JSON.parse(text);
  } catch {
    payload = undefined;
  }
  const offer = asRecord(payload);
  if (!offer || offer.kind !== OFFER_KIND) return invalid('offer_jws does not carry a verified_stay_offer');
  // An offer signed for another domain is another node's offer, even under a key this node holds.
  if (offer.canonical_domain !== canonicalDomain) return invalid('offer_jws is an offer of another node');
  const validUntil = typeof offer.valid_until === 'string' ? Date.parse(offer.valid_until) : Number.NaN;
  if (Number.isNaN(validUntil)) return invalid('offer_jws has no valid_until');
  // Core VRP v0.1 §6: past valid_until the offer is not an offer any more.
  if (validUntil <= now) return { ok: false, code: 'BOOKING_OFFER_EXPIRED', message: 'the offer has passed its valid_until' };
  const o = offer as unknown as OfferPayload;
  const total = o.price?.agent_total;
  // Core VRP v0.1 §7: a signed negative (or an offer the host did not let agents quote) is not a booking basis.
  if (
    !o.request ||
    o.availability?.available !== true ||
    o.agent_permission?.may_quote_as_official_direct_offer !== true ||
    o.price?.exact !== true ||
    typeof total !== 'number' ||
    !Number.isSafeInteger(total)
  )
    return { ok: false, code: 'BOOKING_OFFER_NOT_BOOKABLE', message: 'the offer is not an available, exactly priced, quotable stay' };
  return { ok: true, offer: o as OfferPayload & { request: NonNullable<OfferPayload['request']> }, agentTotal: total };
}
