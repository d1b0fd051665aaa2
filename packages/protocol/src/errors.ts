/**
 * The protocol's one code registry: every code this package returns or throws, with its message
 * and, where one applies, the HTTP status a node answers it with. Codes are the contract (scripts
 * and agents match on them); messages are the default text and may change. The offer request's
 * and the booking endpoint's tables (`OFFER_REQUEST_ERRORS`, `BOOKING_ERRORS`) are views of it.
 */
import { VrpError } from '@vrpkit/core';

interface ProtocolErrorEntry {
  readonly message: string;
  /** The HTTP status of a node's `{error:{code,message}}` answer with this code. */
  readonly status?: number;
}

export const PROTOCOL_ERRORS = {
  // Core VRP v0.1 §4 / Node Tool Binding v0.1 §4: a malformed offer request, answered 400 on HTTP
  // (an MCP `isError` result, a failed A2A task, a rejected WebMCP promise on the tool surfaces).
  invalid_arguments: { status: 400, message: 'the arguments are not one JSON object' },
  missing_parameter: { status: 400, message: 'a required parameter is missing' },
  unknown_parameter: { status: 400, message: 'a parameter the endpoint does not accept' },
  duplicate_parameter: { status: 400, message: 'a parameter given twice (or under both its snake_case and camelCase name)' },
  invalid_date: { status: 400, message: 'a date that is not a real calendar date YYYY-MM-DD' },
  invalid_range: { status: 400, message: 'check_out not after check_in, or a stay longer than 365 nights' },
  invalid_guests: { status: 400, message: 'guests is not an integer ≥ 1' },
  invalid_language: { status: 400, message: 'language is not a BCP 47 language tag' },
  date_in_past: { status: 400, message: "check_in before today in the property's time zone" },
  beyond_horizon: { status: 400, message: "check_in after the property's booking horizon" },
  query_too_long: { status: 400, message: 'the query string exceeds the endpoint limit' },
  // The booking-request extension (`POST /api/booking-requests` and the `/book` form).
  BOOKING_BAD_REQUEST: { status: 400, message: 'the body is not a booking request' },
  BOOKING_BODY_TOO_LARGE: { status: 413, message: 'the booking request is larger than the endpoint accepts' },
  BOOKING_UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'the booking request is not sent in the media type the endpoint takes' },
  BOOKING_OFFER_INVALID: { status: 422, message: 'offer_jws is not an offer this node signed' },
  BOOKING_OFFER_EXPIRED: { status: 422, message: 'the offer has passed its valid_until' },
  BOOKING_OFFER_NOT_BOOKABLE: { status: 422, message: 'the offer is not an available, exactly priced, quotable stay' },
  BOOKING_OFFER_CHANGED: { status: 409, message: 'the stay is no longer available at the offer’s price' },
  BOOKING_IDEMPOTENCY_CONFLICT: { status: 409, message: 'this idempotency_key was used with another request body' },
  BOOKING_RATE_LIMITED: { status: 429, message: 'too many booking requests from this address' },
  /** The client address created its most holds for the last 24 hours (`--booking-holds-per-day`). */
  BOOKING_TOO_MANY_HOLDS: { status: 429, message: 'this address has made the most booking requests allowed in 24 hours' },
  // MCP Composition Profile, argument key casing.
  invalid_tool_arguments: { message: 'tool-call arguments must be a JSON object' },
  conflicting_argument_alias: { message: 'the arguments carry an alias and its snake_case key with different values' },
} as const satisfies Record<string, ProtocolErrorEntry>;

export type ProtocolErrorCode = keyof typeof PROTOCOL_ERRORS;

/** An error this package throws for a value it cannot read: `code` is always a registry code. */
export class ProtocolError extends VrpError {
  declare readonly code: ProtocolErrorCode;
  constructor(code: ProtocolErrorCode, message?: string, details?: Record<string, unknown>) {
    super(code, message ?? PROTOCOL_ERRORS[code].message, details);
  }
}
