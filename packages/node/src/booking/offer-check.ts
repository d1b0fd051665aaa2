/**
 * The first check on a booking request: is `offer_jws` an offer this node signed, still valid and
 * bookable as signed? It decides from the received JWS bytes only (never from a copy of the
 * payload sent beside it), against the node's own key ring as its JWKS publishes it: the active
 * key and retired keys still retained (Core VRP v0.1 §3.1); a revoked key is not in it, so an
 * offer it signed is refused. The payload is read through protocol's `OfferPayloadSchema`. What it
 * does not decide: whether the stay can still be had at that price now. That is the live
 * re-quote, inside the hold's transaction (desk.ts), from the stay this check returns.
 */
import { importEd25519PublicKey, jwsPayloadJson, parseCompactJws, verifyEd25519Signature } from '@vrpkit/core';
import { type OfferPayload, type ParsedOfferRequest, readOfferPayload, signedStayOf, type VrpJwks } from '@vrpkit/protocol';

export type OfferCheck =
  | { ok: true; offer: OfferPayload; stay: ParsedOfferRequest; agentTotal: number }
  | { ok: false; code: 'BOOKING_OFFER_INVALID' | 'BOOKING_OFFER_EXPIRED' | 'BOOKING_OFFER_NOT_BOOKABLE'; message: string };

const invalid = (message: string): OfferCheck => ({ ok: false, code: 'BOOKING_OFFER_INVALID', message });

/** Check `jws` against the node's published keys `jwks`, its `canonicalDomain` and the instant `now` (epoch ms). */
export function checkOwnOffer(jws: string, jwks: VrpJwks, canonicalDomain: string, now: number): OfferCheck {
  const parsed = parseCompactJws(jws);
  if (!parsed.ok) return invalid('offer_jws is not a compact JWS');
  const { header, signingInput, signature } = parsed.jws;
  // Core VRP v0.1 §3: offers are Ed25519 (EdDSA) signatures under a kid of the node's JWKS.
  if (header.alg !== 'EdDSA' || typeof header.kid !== 'string') return invalid('offer_jws is not an EdDSA JWS with a kid');
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return invalid('offer_jws was not signed by a key this node publishes');
  const key = importEd25519PublicKey(jwk);
  if (!key || !verifyEd25519Signature(signingInput, signature, key)) return invalid('offer_jws signature does not verify');
  // Core VRP v0.1 §5: the signed payload, read through the offer schema (its valid_until an RFC 3339 instant).
  const offer = readOfferPayload(jwsPayloadJson(parsed.jws));
  if (!offer) return invalid('offer_jws does not carry a verified_stay_offer');
  // An offer signed for another domain is another node's offer, even under a key this node holds.
  if (offer.canonical_domain !== canonicalDomain) return invalid('offer_jws is an offer of another node');
  // Core VRP v0.1 §6: past valid_until the offer is not an offer any more.
  if (Date.parse(offer.valid_until) <= now)
    return { ok: false, code: 'BOOKING_OFFER_EXPIRED', message: 'the offer has passed its valid_until' };
  const total = offer.price.agent_total;
  const stay = signedStayOf(offer);
  // Core VRP v0.1 §7: a signed negative (or an offer the host did not let agents quote) is not a booking basis.
  if (
    !stay ||
    !offer.availability.available ||
    !offer.agent_permission.may_quote_as_official_direct_offer ||
    !offer.price.exact ||
    typeof total !== 'number' ||
    !Number.isSafeInteger(total)
  )
    return { ok: false, code: 'BOOKING_OFFER_NOT_BOOKABLE', message: 'the offer is not an available, exactly priced, quotable stay' };
  return { ok: true, offer, stay, agentTotal: total };
}
