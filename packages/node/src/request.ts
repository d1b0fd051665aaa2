/**
 * Offer request validation (Core §4; Node Tool Binding §4). One parser for every surface:
 * the HTTP query (strings), MCP / A2A / WebMCP arguments (JSON values). Malformed input is an
 * `OfferRequestError` with a stable code; it never reaches the store or the signer.
 */
import type { OfferRequestArgs } from '@vrpkit/protocol';
import { dayNumber } from './dates.js';
import { OfferRequestError } from './errors.js';

/** Stable codes for malformed offer requests (HTTP 400 `{error:{code,message}}`). */
export const OFFER_REQUEST_ERRORS = {
  missing_parameter: 'a required parameter is missing',
  unknown_parameter: 'a parameter the endpoint does not accept',
  duplicate_parameter: 'a parameter given twice (or under both its snake_case and camelCase name)',
  invalid_date: 'a date that is not a real calendar date YYYY-MM-DD',
  invalid_range: 'check_out not after check_in, or a stay longer than 365 nights',
  invalid_guests: 'guests is not an integer ≥ 1',
  invalid_language: 'language is not a BCP 47 language tag',
  date_in_past: "check_in before today in the property's time zone",
  beyond_horizon: "check_in after the property's booking horizon",
  query_too_long: 'the query string exceeds the endpoint limit',
} as const;
export type OfferRequestErrorCode = keyof typeof OFFER_REQUEST_ERRORS;

/**
 * Accepted argument names. Unknown names are rejected (`unknown_parameter`) rather than
 * ignored, so a caller never believes a filter it sent was applied; `language` is the one
 * optional extra (echoed as `request.language`, as the reference agent sends it).
 */
const ALIASES: Record<string, 'check_in' | 'check_out' | 'guests' | 'language'> = {
  check_in: 'check_in',
  checkIn: 'check_in',
  check_out: 'check_out',
  checkOut: 'check_out',
  guests: 'guests',
  language: 'language',
};

/** A stay is at most this many nights; longer requests are malformed, not signed negatives. */
export const MAX_STAY_NIGHTS = 365;
const MAX_GUESTS_VALUE = 1000;
const LANGUAGE_RE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/;

export interface ParsedOfferRequest extends OfferRequestArgs {
  nights: number;
  language?: string;
}

function fail(code: OfferRequestErrorCode, message: string): never {
  throw new OfferRequestError(code, message);
}

function parseGuests(v: unknown): number {
  // HTTP query values arrive as decimal strings; tool surfaces send JSON numbers (§4).
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^[1-9][0-9]{0,5}$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_GUESTS_VALUE) fail('invalid_guests', 'guests must be an integer from 1 to 1000');
  return n;
}

function parseDate(name: string, v: unknown): string {
  if (typeof v !== 'string' || dayNumber(v) === null) fail('invalid_date', `${name} must be a real calendar date YYYY-MM-DD`);
  return v;
}

/** Validate raw offer arguments (snake_case, camelCase aliases for the dates). Throws `OfferRequestError`. */
export function parseOfferArgs(args: Record<string, unknown>): ParsedOfferRequest {
  const seen: Partial<Record<'check_in' | 'check_out' | 'guests' | 'language', unknown>> = {};
  for (const [key, value] of Object.entries(args)) {
    const name = Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
    if (!name) fail('unknown_parameter', `unknown parameter "${key.slice(0, 40)}"; accepted: check_in, check_out, guests, language`);
    if (name in seen) fail('duplicate_parameter', `${name} given more than once`);
    seen[name] = value;
  }
  for (const req of ['check_in', 'check_out', 'guests'] as const) {
    if (seen[req] === undefined || seen[req] === null || seen[req] === '') fail('missing_parameter', `${req} is required`);
  }
  const check_in = parseDate('check_in', seen.check_in);
  const check_out = parseDate('check_out', seen.check_out);
  const guests = parseGuests(seen.guests);
  const nights = dayNumber(check_out)! - dayNumber(check_in)!;
  if (nights < 1) fail('invalid_range', 'check_out must be after check_in');
  if (nights > MAX_STAY_NIGHTS) fail('invalid_range', `a stay is at most ${MAX_STAY_NIGHTS} nights`);
  const out: ParsedOfferRequest = { check_in, check_out, guests, nights };
  if (seen.language !== undefined) {
    if (typeof seen.language !== 'string' || !LANGUAGE_RE.test(seen.language))
      fail('invalid_language', 'language must be a BCP 47 tag such as en or sv-SE');
    out.language = seen.language;
  }
  return out;
}
