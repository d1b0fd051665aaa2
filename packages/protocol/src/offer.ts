/**
 * Reading a signed offer's payload (Core VRP v0.1 §5): the decoded JWS payload through
 * `OfferPayloadSchema`, and the stay it was signed for as the request a node answers. Nothing here
 * checks a signature, a key or freshness: call it on a payload whose signature verified (or where a
 * wrong value can only make a digest differ).
 */
import { dayNumber } from './dates.js';
import { MAX_STAY_NIGHTS, type ParsedOfferRequest } from './offer-request.js';
import { type OfferPayload, OfferPayloadSchema } from './types.js';

/** The payload as a `verified_stay_offer` of the schema's shape, or null when it is not one (members the schema does not name are dropped). */
export function readOfferPayload(value: unknown): OfferPayload | null {
  const parsed = OfferPayloadSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * The stay an offer was signed for (its `request`, Core VRP v0.1 §4 arguments) as a parsed
 * request, nights counted from the dates; null when the offer names no stay or an impossible one.
 * The schema already held the dates to real calendar dates and `guests` to an integer 1–1000.
 */
export function signedStayOf(offer: OfferPayload): ParsedOfferRequest | null {
  const r = offer.request;
  if (!r) return null;
  const nights = (dayNumber(r.check_out) as number) - (dayNumber(r.check_in) as number);
  if (nights < 1 || nights > MAX_STAY_NIGHTS) return null;
  const stay: ParsedOfferRequest = { check_in: r.check_in, check_out: r.check_out, guests: r.guests, nights };
  if (r.language !== undefined) stay.language = r.language;
  return stay;
}
