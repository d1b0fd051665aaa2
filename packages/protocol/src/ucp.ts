/**
 * Booking sessions in the Universal Commerce Protocol (UCP). The Lodging booking capability the
 * vrpkit issue names (`dev.ucp.lodging.booking`) is not published in `Universal-Commerce-Protocol/ucp`
 * (main at fdcf8934, 2026-08-22: only the Lodging TC announcement), so a stay is booked through what
 * UCP does publish: a Checkout session (`dev.ucp.shopping.checkout`, `source/schemas/shopping/checkout.json`)
 * with the payment-terms extension (`dev.ucp.shopping.payment_terms`), the stay's cancellation terms
 * in `policies[]`, and the lodging fields UCP has no home for under vrpkit's own reverse-domain key
 * (`dev.vrpkit.lodging`), where the Checkout schema allows extra members (`additionalProperties: true`).
 * The node and the agent share these shapes; responses are also checked against the vendored UCP
 * schemas in tests.
 */
import * as z from 'zod';
import { BookingGuestSchema } from './booking.js';
import { IsoDateSchema } from './types.js';

/** The UCP release the profile and every response name (`ucp.version`, YYYY-MM-DD; the payment-terms extension requires ≥ 2026-04-08). */
export const UCP_VERSION = '2026-04-08';
/** Where a business publishes its UCP profile (UCP overview, Discovery). */
export const UCP_PROFILE_PATH = '/.well-known/ucp';
/** The node's UCP REST base; `rest.endpoint` of the profile's shopping service (Checkout REST binding, Base URL). */
export const UCP_REST_BASE_PATH = '/ucp/v1';
/** Checkout REST binding, Operations: the sessions' collection under the REST base. */
export const UCP_CHECKOUT_SESSIONS = '/checkout-sessions';
/** The guest's page for a session (`continue_url`), on the node's own origin. */
export const UCP_CONTINUE_PATH = '/ucp/continue';
export const UCP_SHOPPING_SERVICE = 'dev.ucp.shopping';
export const UCP_CHECKOUT_CAPABILITY = 'dev.ucp.shopping.checkout';
export const UCP_PAYMENT_TERMS_CAPABILITY = 'dev.ucp.shopping.payment_terms';
/** vrpkit's key for the stay and its signed offer, on requests and responses. */
export const UCP_LODGING_KEY = 'dev.vrpkit.lodging';
/** `policies[].type` of the stay's cancellation terms (Core VRP v0.1 §5.3 refund schedule); also the code of the warning that compels showing it. */
export const UCP_CANCELLATION_POLICY_TYPE = 'dev.vrpkit.lodging.policy.cancellation';
/** The only item a vrpkit node sells: the stay of its one property at its one rate plan. */
export const UCP_STAY_ITEM_ID = 'stay';
/** Largest session request body accepted, in bytes (an offer JWS is ~5 KB). */
export const MAX_UCP_REQUEST_BYTES = 16 * 1024;

/** Checkout status lifecycle (UCP Checkout, status enum). */
export const UcpSessionStatusSchema = z.enum(['incomplete', 'requires_escalation', 'ready_for_complete', 'completed', 'canceled']);
export type UcpSessionStatus = z.infer<typeof UcpSessionStatusSchema>;

/** The buyer as a session request may carry it (UCP `types/buyer.json`, the fields a stay needs). */
export const UcpBuyerSchema = z.object({
  email: BookingGuestSchema.shape.email.optional(),
  first_name: BookingGuestSchema.shape.name.optional(),
  last_name: BookingGuestSchema.shape.name.optional(),
});
export type UcpBuyer = z.infer<typeof UcpBuyerSchema>;

/**
 * What the stay is bound to: one of the node's own signed offers (`offer_jws`), or bare stay dates
 * (the node re-quotes and answers with the signed offer it used).
 */
export const UcpLodgingRequestSchema = z.union([
  z.strictObject({ offer_jws: z.string().min(1).max(MAX_UCP_REQUEST_BYTES) }),
  z.strictObject({ check_in: IsoDateSchema, check_out: IsoDateSchema, guests: z.number().int().min(1).max(100) }),
]);
export type UcpLodgingRequest = z.infer<typeof UcpLodgingRequestSchema>;

/** Create Checkout request (REST `POST /checkout-sessions`): one stay line, the lodging binding, the buyer optional. */
export const UcpCreateSessionSchema = z.object({
  line_items: z.tuple([z.object({ item: z.object({ id: z.literal(UCP_STAY_ITEM_ID) }), quantity: z.literal(1) })]),
  buyer: UcpBuyerSchema.optional(),
  [UCP_LODGING_KEY]: UcpLodgingRequestSchema,
});
export type UcpCreateSession = z.infer<typeof UcpCreateSessionSchema>;

/**
 * Update Checkout request (REST `PUT /checkout-sessions/{id}`): the full line items, as UCP requires
 * them on update (`ucp_request.update: required`), still the one stay; only the buyer changes (the
 * stay is fixed by its signed offer).
 */
export const UcpUpdateSessionSchema = z.object({
  line_items: UcpCreateSessionSchema.shape.line_items,
  buyer: UcpBuyerSchema.optional(),
});
export type UcpUpdateSession = z.infer<typeof UcpUpdateSessionSchema>;

/** A UCP message (`common/types/message.json`) as vrpkit sends it: every refusal has a stable `code`. */
export interface UcpMessage {
  type: 'error' | 'warning' | 'info';
  code: string;
  content: string;
  path?: string;
  severity?: 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review' | 'unrecoverable';
}

/** `dev.vrpkit.lodging` on a response: the stay, the offer it is bound to, and once held the signed booking receipt. */
export const UcpLodgingViewSchema = z.object({
  property_id: z.string(),
  check_in: IsoDateSchema,
  check_out: IsoDateSchema,
  guests: z.number().int(),
  offer_jws: z.string(),
  offer_jws_sha256: z.string(),
  booking_id: z.string().optional(),
  booking_receipt_jws: z.string().optional(),
});
export type UcpLodgingView = z.infer<typeof UcpLodgingViewSchema>;

/** A session as the agent reads it: the members it acts on (the rest of the Checkout is passed through). */
export const UcpSessionViewSchema = z.looseObject({
  id: z.string(),
  status: UcpSessionStatusSchema,
  currency: z.string(),
  totals: z.array(z.looseObject({ type: z.string(), amount: z.number().int() })),
  messages: z.array(z.looseObject({ type: z.string(), code: z.string(), content: z.string() })).optional(),
  continue_url: z.string().optional(),
  order: z.object({ id: z.string(), permalink_url: z.string() }).optional(),
  [UCP_LODGING_KEY]: UcpLodgingViewSchema,
});
export type UcpSessionView = z.infer<typeof UcpSessionViewSchema>;

/**
 * Stable codes of the session endpoints (UCP `messages[].code`), each with the HTTP status it is
 * answered with. UCP Checkout REST binding, Error Responses: a business outcome (an offer refused,
 * a session not ready) is HTTP 200 with `messages[]`; a protocol error has its own status. Either way
 * the body validates against UCP's `error_response.json` or `checkout.json`.
 */
export const UCP_SESSION_CODES = {
  /** The body is not a session request (the field named, never its value). */
  invalid_request: 400,
  unsupported_media_type: 415,
  body_too_large: 413,
  too_many_requests: 429,
  /** Checkout: unknown session id. */
  not_found: 404,
  /** The offer JWS is malformed, not signed by a key this node publishes, or another node's offer. */
  offer_invalid: 200,
  /** The offer is past its valid_until (Core VRP v0.1 §6). */
  offer_expired: 200,
  /** A signed negative, no quote permission, or a stay no longer requestable (Core VRP v0.1 §7). */
  offer_not_bookable: 200,
  /** The live re-quote differs from the signed offer: create the session from the stay dates to bind the current offer. */
  offer_changed: 200,
  /** Bare stay dates the node does not quote (its offer refusal code is in the message). */
  stay_not_quotable: 200,
  /** The stay is not available any more (UCP's well-known code for inventory exhausted): no session is made. */
  item_unavailable: 200,
  /** The buyer's email or name is missing (UCP's own `missing` code, with the JSONPath). */
  missing: 200,
  /** The guest has not confirmed on the host's page yet: hand the buyer `continue_url`. */
  guest_confirmation_required: 200,
  /** The operation does not apply in the session's status (complete of a canceled session, cancel of a completed one). */
  invalid_status: 200,
  /** The session passed its `expires_at` before it was completed. */
  session_expired: 200,
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
