/**
 * @vrpkit/protocol: the VRP documents as code. Named exports only, grouped by the public
 * document each shape or rule comes from (docs/specs.md); README.md says what each group proves.
 * Everything not listed here is internal.
 */

// The guest fields' character rule is core's one class for text from outside (core/text.ts).
export { isDisplaySafeText, UNSAFE_TEXT_CHARACTERS } from '@vrpkit/core';
// The booking request (vrpkit, beyond Core VRP v0.1 §5.1 `direct_booking_url`; made by a confirmed
// UCP session): the request, the signed receipt's payload and the booking desk's error codes.
export type {
  BookingErrorCode,
  BookingGuest,
  BookingReceiptPayload,
  BookingRequest,
  BookingRequestView,
  BookingResponse,
  BookingStatus,
} from './booking.js';
export {
  BOOKING_ERRORS,
  BOOKING_RECEIPT_TYP,
  BOOKING_RECEIPT_TYPE,
  BOOKING_RECEIPT_VERSION,
  BookingReceiptPayloadSchema,
  BookingRequestSchema,
  BookingRequestViewSchema,
  BookingResponseSchema,
  BookingStatusSchema,
  MAX_BOOKING_REQUEST_BYTES,
} from './booking.js';
// Constants: Core VRP v0.1 §2–§5 and §7 (paths, kinds, the canonical phrase, the JWKS cache
// bound), Node Tool Binding v0.1 §3 (the bound tool name), VRP receipt envelope v1 and the MCP
// Composition Profile (versions and the assertion type).
export {
  A2A_JSONRPC_PATH,
  AGENT_CARD_PATH,
  BOOK_PATH,
  BOUND_TOOL_NAME,
  CANONICAL_PHRASE,
  DISCOVERY_PATH,
  ENVELOPE_KIND,
  JWKS_MAX_CACHE_SECONDS,
  JWKS_PATH,
  MCP_ENDPOINT_PATH,
  MCP_PROFILE_VERSION,
  MCP_TRANSPORT_ASSERTION_TYPE,
  OFFER_ENDPOINT_PATH,
  OFFER_KIND,
  PROPERTY_PAGE_PATH,
  PROTOCOL,
  PROTOCOL_VERSION,
  RECEIPT_VERSION,
  WEBMCP_TOOL_CALL_PATH,
} from './constants.js';
// Core VRP v0.1 §4 dates and the official schemas' RFC 3339 `dateTime`, read one way only.
export { DATE_TIME_PATTERN, dateTimeMs, dayNumber } from './dates.js';
// Core VRP v0.1 §2: a served discovery document read and bound to its host domain.
export type { DiscoveryDocumentCheck, DiscoveryDocumentCode } from './discovery.js';
export { checkDiscoveryDocument } from './discovery.js';
// The one code registry: every code this package returns or throws, with its HTTP status where one applies.
export type { ProtocolCode } from './errors.js';
export { OFFER_REQUEST_CODES, PROTOCOL_CODES, ProtocolError } from './errors.js';
// VRP receipt envelope v1 and the MCP Composition Profile: the receipt and transport assertion
// shapes, argument key casing, the arguments digest and binding an assertion to an observed call.
export type { McpTransportAssertionInput, ObservedToolCall } from './mcp-profile.js';
export {
  assertionMatchesToolCall,
  buildMcpTransportAssertion,
  hashArguments,
  MCP_TRANSPORT_LAYER,
  normalizeToolArguments,
  OFFER_LAYER,
  offerRef,
  RECEIPT_META_KEY,
  readMcpTransportAssertion,
  ToolArgumentsError,
} from './mcp-profile.js';
// Core VRP v0.1 §5: a signed offer's payload read through its schema, and the stay it was signed for.
export { readOfferPayload, signedStayOf } from './offer.js';
// Core VRP v0.1 §4 and Node Tool Binding v0.1 §4: the offer request, its one parser and code
// table, and the input schema every tool surface advertises.
export type {
  OfferRequest,
  OfferRequestArgs,
  OfferRequestContext,
  OfferRequestErrorCode,
  OfferRequestInput,
  OfferRequestRefusal,
  OfferRequestResult,
  ParsedOfferRequest,
} from './offer-request.js';
export {
  MAX_GUESTS,
  MAX_STAY_NIGHTS,
  OFFER_REQUEST_ERRORS,
  OfferRequestArgsSchema,
  OfferRequestSchema,
  offerToolInputSchema,
  parseOfferRequest,
  stayWindowRefusal,
} from './offer-request.js';
// The official VRP JSON Schemas, verbatim (provenance in schemas/PROVENANCE.md).
export type { OfficialSchemaName } from './schemas.js';
export { OFFICIAL_SCHEMAS, officialSchema } from './schemas.js';
// Node Tool Binding v0.1 §2, §9: the surfaces by name and every resource a vrpkit node serves.
export type { NodePathName, Surface, ToolSurface } from './surfaces.js';
export { NODE_PATHS, SURFACES, TOOL_SURFACES } from './surfaces.js';
// Core VRP v0.1 §2 (discovery), §3 (JWKS), §5–§7 (the signed offer and its envelope) and §9
// (the official verification result, three-state values): zod schemas and the types inferred
// from them. A parsed document has the right shape; nothing here says it is signed or fresh.
export type {
  AgentPermission,
  AltWindow,
  CalendarFreshness,
  DiscoveryDocument,
  IsoDate,
  IsoDateTime,
  McpTransportAssertion,
  OfferEnvelope,
  OfferPayload,
  OfferPrice,
  OfferSignature,
  PriceAdjustment,
  PriceBreakdownNight,
  PriceReconciliation,
  ReceiptAttestation,
  RefundScheduleRow,
  SourceAuthority,
  ThreeState,
  VerifiabilityClass,
  VerificationResult,
  VrpJwk,
  VrpJwks,
  VrpReceipt,
} from './types.js';
export {
  DiscoveryDocumentSchema,
  McpTransportAssertionSchema,
  OfferEnvelopeSchema,
  OfferPayloadSchema,
  VerificationResultSchema,
  VrpJwksSchema,
  VrpReceiptSchema,
} from './types.js';
// Booking sessions in the Universal Commerce Protocol's Lodging Booking capability (one stay bound
// to a signed offer under `dev.vrpkit.lodging`): paths, request shapes, the session view, codes.
export type {
  UcpBooker,
  UcpBookingRequest,
  UcpGuest,
  UcpLodgingRequest,
  UcpLodgingView,
  UcpMessage,
  UcpParty,
  UcpSessionCode,
  UcpSessionStatus,
  UcpSessionView,
  UcpStayRequest,
} from './ucp.js';
export {
  MAX_UCP_REQUEST_BYTES,
  UCP_BOOKING_CAPABILITY,
  UCP_BOOKING_SESSIONS,
  UCP_CANCELLATION_POLICY_TYPE,
  UCP_CONTINUE_PATH,
  UCP_LODGING_KEY,
  UCP_LODGING_SERVICE,
  UCP_PROFILE_PATH,
  UCP_RATE_PLAN_ID,
  UCP_REST_BASE_PATH,
  UCP_SESSION_CODES,
  UCP_VERSION,
  UcpBookerSchema,
  UcpBookingRequestSchema,
  UcpCompleteRequestSchema,
  UcpErrorResponseSchema,
  UcpGuestSchema,
  UcpLodgingRequestSchema,
  UcpLodgingViewSchema,
  UcpProfileSchema,
  UcpSessionStatusSchema,
  UcpSessionViewSchema,
  UcpStayRequestSchema,
  ucpBookingRequest,
  ucpStayId,
} from './ucp.js';
