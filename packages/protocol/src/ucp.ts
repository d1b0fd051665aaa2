/**
 * Booking sessions in the Universal Commerce Protocol's Lodging Booking capability
 * (`dev.ucp.lodging.booking`; `Universal-Commerce-Protocol/ucp`, `draft/schemas/lodging/booking.json`,
 * REST binding `draft/specification/lodging/booking/rest`, with the cancellation-policy extension
 * `dev.ucp.lodging.policy.cancellation`). A vrpkit node sells one `property`, one accommodation type
 * and one rate plan; a session has exactly one `stays[]` entry, bound to an offer the node signed.
 * The offer travels under vrpkit's reverse-domain key `dev.vrpkit.lodging`, where the Booking schema
 * admits extra members (`additionalProperties: true` at the root). The node and the agent share these
 * shapes; tests also check every request and response against the vendored UCP schemas.
 */
import { jwsPayloadJson, parseCompactJws } from '@vrpkit/core';
import * as z from 'zod';
import { BookingGuestSchema } from './booking.js';
import { readOfferPayload } from './offer.js';
import { IsoDateSchema } from './types.js';

/** The UCP version the profile and every response name (`ucp.version`, YYYY-MM-DD: the Lodging schemas' `version`). */
export const UCP_VERSION = '2026-09-24';
/** Where a business publishes its UCP profile (UCP overview, Discovery). */
export const UCP_PROFILE_PATH = '/.well-known/ucp';
/** The node's UCP REST base: `endpoint` of the profile's `dev.ucp.lodging` REST service (Booking REST binding, Base URL). */
export const UCP_REST_BASE_PATH = '/ucp/v1';
/** Booking REST binding, Operations: the sessions' collection under the REST base. */
export const UCP_BOOKING_SESSIONS = '/booking-sessions';
/** The guest's page for a session (`continue_url`), on the node's own origin. */
export const UCP_CONTINUE_PATH = '/ucp/continue';
export const UCP_LODGING_SERVICE = 'dev.ucp.lodging';
export const UCP_BOOKING_CAPABILITY = 'dev.ucp.lodging.booking';
/** The cancellation-policy extension: its capability name, the `policies[].type` it defines and its disclosure warning's code. */
export const UCP_CANCELLATION_POLICY_TYPE = 'dev.ucp.lodging.policy.cancellation';
/** vrpkit's key for the signed offer a session is bound to (and, once completed, the booking receipt). */
export const UCP_LODGING_KEY = 'dev.vrpkit.lodging';
/** The one rate plan a vrpkit node sells (its accommodation type's id is the property id). */
export const UCP_RATE_PLAN_ID = 'standard';
/** The pre-composed `stays[].id` of a property's one accommodation type at its one rate plan. */
export const ucpStayId = (propertyId: string) => `${propertyId}__${UCP_RATE_PLAN_ID}`;
/** Largest session request body accepted, in bytes (an offer JWS is ~5 KB). */
export const MAX_UCP_REQUEST_BYTES = 16 * 1024;

/** Booking status lifecycle (Booking capability, Status Values). */
export const UcpSessionStatusSchema = z.enum([
  'incomplete',
  'requires_escalation',
  'ready_for_complete',
  'complete_in_progress',
  'completed',
  'canceled',
]);
export type UcpSessionStatus = z.infer<typeof UcpSessionStatusSchema>;

const id = z.string().min(1).max(200);
const name = BookingGuestSchema.shape.name;

/** `booker` (lodging `types/booker.json`): the contracting party; the fields vrpkit reads are checked, the rest kept. */
export const UcpBookerSchema = z.looseObject({
  first_name: name.optional(),
  last_name: name.optional(),
  email: BookingGuestSchema.shape.email.optional(),
  phone_number: z.string().max(32).optional(),
});
export type UcpBooker = z.infer<typeof UcpBookerSchema>;

/** `guests[]` (lodging `types/guest.json`): `id` is the platform's, kept as sent (Business guidelines). */
export const UcpGuestSchema = z.looseObject({
  id,
  first_name: name.optional(),
  last_name: name.optional(),
  email: BookingGuestSchema.shape.email.optional(),
  phone_number: z.string().max(32).optional(),
  age: z.number().int().min(0).max(150).optional(),
});
export type UcpGuest = z.infer<typeof UcpGuestSchema>;

/** `stays[].guest_assignments[]` (lodging `types/guest_assignment.json`). */
export const UcpGuestAssignmentSchema = z.looseObject({ guest_id: id, role: z.string().max(64).optional() });

/** `stays[].occupancy` (lodging `types/occupancy.json`): `total` is the party size the offer is quoted for. */
export const UcpOccupancySchema = z.looseObject({
  adults: z.number().int().min(0).max(100).optional(),
  children: z.number().int().min(0).max(100).optional(),
  total: z.number().int().min(1).max(100),
});

/**
 * One `stays[]` entry of a request (lodging `types/stay.json`): the pre-composed `id`, or both
 * `accommodation_type.id` and `rate_plan.id` (Platform guidelines), the dates, the party.
 */
export const UcpStayRequestSchema = z
  .looseObject({
    id: id.optional(),
    accommodation_type: z.looseObject({ id }).optional(),
    rate_plan: z.looseObject({ id }).optional(),
    stay_dates: z.looseObject({ start_date: IsoDateSchema, end_date: IsoDateSchema }),
    occupancy: UcpOccupancySchema.optional(),
    guest_assignments: z.array(UcpGuestAssignmentSchema).max(100).optional(),
  })
  .refine((s) => s.id !== undefined || (s.accommodation_type !== undefined && s.rate_plan !== undefined), {
    message: 'a stay names its id, or its accommodation_type.id and rate_plan.id',
  });
export type UcpStayRequest = z.infer<typeof UcpStayRequestSchema>;

/** What a request binds the stay to: one of the node's own signed offers (absent: the node quotes the stay's dates). */
export const UcpLodgingRequestSchema = z.strictObject({ offer_jws: z.string().min(1).max(MAX_UCP_REQUEST_BYTES) });
export type UcpLodgingRequest = z.infer<typeof UcpLodgingRequestSchema>;

/**
 * Create and Update Booking Session requests (REST `POST /booking-sessions`, `PUT /booking-sessions/{id}`;
 * Update is a full replacement): the property, the one stay, the party, optionally the signed offer.
 */
export const UcpBookingRequestSchema = z.looseObject({
  property: z.looseObject({ id }),
  stays: z.tuple([UcpStayRequestSchema]),
  booker: UcpBookerSchema.optional(),
  guests: z.array(UcpGuestSchema).max(100).optional(),
  travel_purpose: z.string().max(64).optional(),
  payment: z.looseObject({}).optional(),
  [UCP_LODGING_KEY]: UcpLodgingRequestSchema.optional(),
});
export type UcpBookingRequest = z.infer<typeof UcpBookingRequestSchema>;

/**
 * Complete Booking Session request (`POST /booking-sessions/{id}/complete`): `payment` is required
 * (Booking, Payments); a node that takes no payment accepts `payment: {}` and no instrument.
 */
export const UcpCompleteRequestSchema = z.looseObject({
  payment: z.looseObject({ instruments: z.array(z.unknown()).max(0, 'this host takes no payment instrument').optional() }),
});

/** A UCP message (`common/types/message.json`) as vrpkit sends it: every refusal has a stable `code`. */
export interface UcpMessage {
  type: 'error' | 'warning' | 'info';
  code: string;
  content: string;
  path?: string;
  severity?: 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review' | 'unrecoverable';
  presentation?: 'notice' | 'disclosure';
}

/** `dev.vrpkit.lodging` on a response: the offer the session is bound to and, once completed, the signed booking receipt. */
export const UcpLodgingViewSchema = z.object({
  offer_jws: z.string(),
  offer_jws_sha256: z.string(),
  booking_id: z.string().optional(),
  booking_receipt_jws: z.string().optional(),
});
export type UcpLodgingView = z.infer<typeof UcpLodgingViewSchema>;

/** A session as the agent reads it: the members it acts on (the rest of the Booking is passed through). */
export const UcpSessionViewSchema = z.looseObject({
  id: z.string(),
  status: UcpSessionStatusSchema,
  currency: z.string(),
  property: z.looseObject({ id: z.string() }),
  stays: z.array(
    z.looseObject({
      id: z.string(),
      stay_dates: z.object({ start_date: IsoDateSchema, end_date: IsoDateSchema }),
      occupancy: z.looseObject({ total: z.number().int() }).optional(),
    }),
  ),
  totals: z.array(z.looseObject({ type: z.string(), amount: z.number().int() })),
  messages: z.array(z.looseObject({ type: z.string(), code: z.string(), content: z.string() })).optional(),
  continue_url: z.string().optional(),
  confirmation: z.looseObject({ id: z.string() }).optional(),
  [UCP_LODGING_KEY]: UcpLodgingViewSchema,
});
export type UcpSessionView = z.infer<typeof UcpSessionViewSchema>;

/**
 * Stable codes of the session endpoints (UCP `messages[].code`), each with the HTTP status it is
 * answered with. Booking REST binding, Error Responses: a business outcome (an offer refused, a stay
 * taken) is HTTP 200 with `messages[]` (for create, "when no booking session can be created,
 * business MUST return HTTP 200"); a protocol error has its own status. Either way the body validates
 * against UCP's `error_response.json` or `lodging/booking.json`.
 */
export const UCP_SESSION_CODES = {
  /** The body is not a session request (the field named, never its value). */
  invalid_request: 400,
  unsupported_media_type: 415,
  body_too_large: 413,
  too_many_requests: 429,
  /**
   * Overview, Negotiation error codes: the platform's profile URL is missing or malformed (REST: the
   * `UCP-Agent` header is not an RFC 8941 Dictionary whose `profile` is a String holding an absolute
   * https URL; MCP: `meta["ucp-agent"].profile`, JSON-RPC -32001).
   */
  invalid_profile_url: 400,
  /** REST binding, HTTP Headers: `Request-Id` is required on every operation, a UUID. */
  invalid_request_id: 400,
  /** `Idempotency-Key` is missing where the binding requires it, or not a UUID. */
  invalid_idempotency_key: 400,
  /** Message Signatures, Replay Protection: the key was used with another request body ("409 Conflict"; MCP -32000). */
  idempotency_conflict: 409,
  /** The key's first request is still being answered: retry it once that has finished. */
  idempotency_in_progress: 409,
  /** Unknown session id. */
  not_found: 404,
  /** `property.id`, `stays[].id`, `accommodation_type.id` or `rate_plan.id` is not this node's. */
  stay_not_found: 200,
  /** The offer JWS is malformed, not signed by a key this node publishes, or another node's offer. */
  offer_invalid: 200,
  /** The offer is past its valid_until (Core VRP v0.1 §6). */
  offer_expired: 200,
  /** A signed negative, no quote permission, or a stay no longer requestable (Core VRP v0.1 §7). */
  offer_not_bookable: 200,
  /** The request's stay dates or party size are not the signed offer's. */
  offer_mismatch: 200,
  /** The live re-quote differs from the signed offer: create the session from the stay dates to bind the current offer. */
  offer_changed: 200,
  /** Bare stay dates the node does not quote (its offer refusal code is in the message). */
  stay_not_quotable: 200,
  /** Booking, Standard Errors: the stay is taken (a hold, a booking, another channel's calendar). */
  inventory_exhausted: 200,
  /** Booking, Standard Errors: more guests than the accommodation holds. */
  occupancy_exceeded_capacity: 200,
  /** A guest assignment names a guest id the root `guests[]` pool does not hold (Business guidelines). */
  guest_not_found: 200,
  /** No identified lead yet: a booker (or primary guest) with a full name and an email. */
  missing: 200,
  /** The guest has not confirmed on the host's page yet: hand the user `continue_url`. */
  guest_confirmation_required: 200,
  /** An Update changes the stay the session is bound to: create a new session for another stay. */
  stay_immutable: 200,
  /** The operation does not apply in the session's status (complete of a canceled session, cancel of a completed one). */
  invalid_status: 200,
  /** The session passed its `expires_at` before it was completed. */
  session_expired: 200,
  /** The hold the guest's confirmation made was declined by the host or expired before Complete. */
  hold_released: 200,
} as const;
export type UcpSessionCode = keyof typeof UCP_SESSION_CODES;

/** A UCP business profile as an agent reads it: the services and capabilities it acts on (UCP `profile.json`). */
export const UcpProfileSchema = z.looseObject({
  ucp: z.looseObject({
    services: z.record(z.string(), z.array(z.looseObject({ transport: z.string(), endpoint: z.string().optional() }))),
    capabilities: z.record(z.string(), z.array(z.unknown())).optional(),
  }),
});

/** A UCP error response (`common/types/error_response.json`) as an agent reads it: the codes. */
export const UcpErrorResponseSchema = z.looseObject({
  messages: z.array(z.looseObject({ code: z.string(), content: z.string() })).min(1),
});

/** The party a session carries (Booking: `booker`, `guests[]` with the platform's ids, their assignment to the stay). */
export interface UcpParty {
  booker?: UcpBooker;
  guests?: UcpGuest[];
  guest_assignments?: { guest_id: string; role?: string }[];
  travel_purpose?: string;
}

/**
 * A Create/Update Booking Session body for the stay `offerJws` signed: its property, its dates, its
 * party size, and the offer itself under `dev.vrpkit.lodging`; `undefined` when the JWS does not
 * decode to a stay offer (decoded, not verified: the business verifies it). The agent's client and
 * the node's `/book` form both send this one shape.
 */
export function ucpBookingRequest(offerJws: string, party: UcpParty = {}): Record<string, unknown> | undefined {
  const parsed = parseCompactJws(offerJws);
  const offer = parsed.ok ? readOfferPayload(jwsPayloadJson(parsed.jws)) : null;
  const propertyId = offer?.property?.property_id;
  const req = offer?.request;
  if (!propertyId || !req?.check_in || !req.check_out || !req.guests) return undefined;
  return {
    property: { id: propertyId },
    stays: [
      {
        id: ucpStayId(propertyId),
        stay_dates: { start_date: req.check_in, end_date: req.check_out },
        occupancy: { total: req.guests },
        ...(party.guest_assignments ? { guest_assignments: party.guest_assignments } : {}),
      },
    ],
    ...(party.booker ? { booker: party.booker } : {}),
    ...(party.guests ? { guests: party.guests } : {}),
    ...(party.travel_purpose ? { travel_purpose: party.travel_purpose } : {}),
    [UCP_LODGING_KEY]: { offer_jws: offerJws },
  };
}
