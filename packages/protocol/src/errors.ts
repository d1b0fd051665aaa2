/**
 * The protocol's one code table (core's `CodeTable`): every code this package returns or throws, with its message
 * and, where one applies, the HTTP status a node answers it with. Codes are the contract (scripts
 * and agents match on them); messages are the default text and may change. The offer request's
 * and the booking endpoint's tables (`OFFER_REQUEST_ERRORS`, `BOOKING_ERRORS`) are views of it.
 */
import { type CodeTable, codedErrorClass } from '@vrpkit/core';

/** Registry entries of one status from their messages. */
function withStatus<S extends number, const M extends Record<string, string>>(
  status: S,
  messages: M,
): { readonly [K in keyof M]: { readonly status: S; readonly message: M[K] } } {
  return Object.fromEntries(Object.entries(messages).map(([code, message]) => [code, { status, message }])) as {
    readonly [K in keyof M]: { readonly status: S; readonly message: M[K] };
  };
}

/**
 * Core VRP v0.1 §4 / Node Tool Binding v0.1 §4: a malformed offer request, answered 400 on HTTP (an
 * MCP `isError` result, a failed A2A task, a rejected WebMCP promise on the tool surfaces), in the
 * order `parseOfferRequest` refuses (first one wins).
 */
const OFFER_REQUEST = withStatus(400, {
  invalid_arguments: 'the arguments are not one JSON object',
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
} as const);

/** The booking desk (the hold a confirmed UCP session makes). */
const BOOKING = {
  BOOKING_BAD_REQUEST: { status: 400, message: 'the body is not a booking request' },
  BOOKING_OFFER_INVALID: { status: 422, message: 'offer_jws is not an offer this node signed' },
  BOOKING_OFFER_EXPIRED: { status: 422, message: 'the offer has passed its valid_until' },
  BOOKING_OFFER_NOT_BOOKABLE: { status: 422, message: 'the offer is not an available, exactly priced, quotable stay' },
  BOOKING_OFFER_CHANGED: { status: 409, message: 'the stay is no longer available at the offer’s price' },
  BOOKING_IDEMPOTENCY_CONFLICT: { status: 409, message: 'this idempotency_key was used with another request body' },
  BOOKING_RATE_LIMITED: { status: 429, message: 'too many booking requests from this address' },
  /** The client address created its most holds for the last 24 hours (`--booking-holds-per-day`). */
  BOOKING_TOO_MANY_HOLDS: { status: 429, message: 'this address has made the most booking requests allowed in 24 hours' },
} as const satisfies CodeTable;

export const PROTOCOL_CODES = {
  ...OFFER_REQUEST,
  ...BOOKING,
  // MCP Composition Profile, argument key casing.
  invalid_tool_arguments: { message: 'tool-call arguments must be a JSON object' },
  conflicting_argument_alias: { message: 'arguments carry both {key} and {target} with different values', details: ['key', 'target'] },
} as const satisfies CodeTable;

/** The offer request's codes, in the order `parseOfferRequest` refuses (first one wins). */
export const OFFER_REQUEST_CODES = Object.keys(OFFER_REQUEST) as (keyof typeof OFFER_REQUEST)[];
/** The booking-request endpoint's codes. */
export const BOOKING_CODES = Object.keys(BOOKING) as (keyof typeof BOOKING)[];

export type ProtocolCode = keyof typeof PROTOCOL_CODES;

/** An error this package throws for a value it cannot read: `code` is always a `PROTOCOL_CODES` code. */
export class ProtocolError extends codedErrorClass(PROTOCOL_CODES) {}

/** One group of the registry as a table of `pick(entry)` by code (the offer request's messages, the booking endpoint's statuses). */
export function registryView<C extends ProtocolCode, V>(
  codes: readonly C[],
  pick: (entry: (typeof PROTOCOL_CODES)[C]) => V,
): Readonly<Record<C, V>> {
  return Object.fromEntries(codes.map((code) => [code, pick(PROTOCOL_CODES[code])])) as Record<C, V>;
}
