/**
 * @vrpkit/agent: the verifier of VRP offers and receipts. Named exports only, grouped by the
 * public document each implements (docs/specs.md); README.md says what each group proves.
 * Everything not listed here is internal.
 */

// Booking under the Tool-Use Binding draft: completing a UCP Lodging booking session made from a
// verified offer is the act (Core VRP v0.1 stops at `direct_booking_url`), and the node's signed receipt.
export type {
  BookingActOptions,
  BookingActResult,
  BookingApprovalView,
  BookingArguments,
  BookingRefusalCode,
  BookingTerms,
  LiveUcpCompleteInput,
  VerifiedOfferInput,
} from './booking/act.js';
export {
  BOOKING_TOOL,
  bookingActFromVerifiedOffer,
  bookingRefusalOf,
  bookingTermsOf,
  liveUcpComplete,
  offerJwsSha256,
  ucpCompleteUrl,
} from './booking/act.js';
export type { BookingApprovalRequest, BookingHostOptions, BookingPerson, BookingStep, GuestHandOff, HandledBlock } from './booking/host.js';
export { BOOKING_TOOL_SPECS, BookingHost, OFFER_TOOL } from './booking/host.js';
export type { BookingReceiptCode, BookingReceiptVerification, VerifyBookingReceiptOptions } from './booking/receipt.js';
export { verifyBookingReceipt } from './booking/receipt.js';
// Core VRP v0.1 §2 (discovery on the host domain) and §5.1 (the canonical-domain label rule).
export { isOnCanonicalDomain, normalizeHost } from './canonical-domain.js';
export type { DiscoveryFailureCode, DiscoveryOutcome } from './discovery.js';
export { DiscoveryCache, domainOf, fetchDiscovery } from './discovery.js';
// The agent's network edge: https only, redirects kept on the requested domain, capped bodies.
export type { AgentCode, NetworkErrorCode } from './errors.js';
export { AGENT_CODES, AgentError, AgentUsageError, NetworkError } from './errors.js';
export type { HardenedFetch, HardenedFetchOptions } from './hardened-fetch.js';
export { createHardenedFetch, parseConnectTo } from './hardened-fetch.js';
// Core VRP v0.1 §3, §3.1: the node's JWKS through a cache (≤ 300 s, refresh-on-miss).
export type { JwksCacheOptions, JwksFailureCode, JwksLookup } from './jwks-cache.js';
export { cacheLifetimeSeconds, JWKS_MIN_REFETCH_INTERVAL_MS, JWKS_MISS_REFETCH_BURST, JwksCache } from './jwks-cache.js';
// Core VRP v0.1 §4 (the offer request) and §5–§7: obtain the envelope, verify it against the
// node's own JWKS, then safe to quote.
export type { EnvelopeFailureCode, EnvelopeOutcome, StayOfferVerification, VerifyDeps } from './offer/fetch.js';
export {
  checkEnvelopeShape,
  checkOfferRequest,
  fetchOfferEnvelope,
  fetchVerifiedStayOffer,
  verifyStayOfferEnvelope,
} from './offer/fetch.js';
export type { QuoteCheckResult, QuoteFailureCode, StayQuoteFailureCode } from './offer/quote.js';
export { bookingUrlFailure, isAvailable, isExactPrice, quoteChecks, safeToQuote, stayQuoteFailures } from './offer/quote.js';
export { officialVerificationResult } from './offer/result.js';
// Core VRP v0.1 §9: offer verification (the statuses and codes of the reference verifier,
// @vacationrentalprotocol/vrp-verify), the official verification result and the three-state facts.
export type { OfferReasonCode, OfferStatus, OfferVerificationResult, VerifyOfferParams } from './offer/verify.js';
export { jsonEqual, verifyOffer } from './offer/verify.js';
// Node Tool Binding v0.1 §3–§8: the offer through HTTP, MCP, A2A or WebMCP, verified against
// the keys of the offer's own canonical domain, with the origin check.
export type { NodeVerification } from './offer/verify-relayed.js';
export { verifyEnvelopeFromNode } from './offer/verify-relayed.js';
// VRP receipt envelope v1: the reference receipt verifier's algorithm, and key resolution from
// the issuer's own domain only.
// MCP Composition Profile (on the receipt envelope): vrpkit's signed-content verdict and the
// binding of the transport assertion to the observed tools/call.
export type {
  AttestationResult,
  AttestationStatus,
  CheckMcpCallReceiptParams,
  McpReceiptBindingCode,
  McpReceiptCheck,
  McpReceiptCode,
  McpReceiptLayer,
  McpReceiptLayerReport,
  McpReceiptVerification,
  ReceiptErrorCode,
  ReceiptJwksResolverOptions,
  ReceiptVerificationResult,
  ResolveReceiptJwks,
  ResolveSignerJwks,
  VerifyMcpReceiptOptions,
  VerifyReceiptOptions,
} from './receipt/index.js';
export {
  checkMcpCallReceipt,
  createReceiptJwksResolver,
  createSignerJwksResolver,
  isReceiptSourceOnIssuerDomain,
  locateLayer,
  receiptFromCallResult,
  receiptIssuerDomain,
  unverifiedJwsPayload,
  verifyMcpReceipt,
  verifyReceipt,
} from './receipt/index.js';
// Core VRP v0.1 §5.3: the refund schedule.
export type { RefundEvaluation } from './refund.js';
export { evaluateRefund } from './refund.js';
export type {
  BrowserOptions,
  ListedTool,
  OfferArgs,
  QuotableTotal,
  Surface,
  SurfaceClassification,
  SurfaceClientOptions,
  SurfaceError,
  SurfaceReport,
} from './surfaces/index.js';
export {
  CHROMIUM_BASE_ARGS,
  CHROMIUM_ENV,
  chromiumExecutable,
  chromiumNetworkArgs,
  chromiumUnavailable,
  DEFAULT_CHROMIUM,
  getOfferVia,
  SURFACES,
  spkiSha256,
} from './surfaces/index.js';
export type { AssessFactsInput, Fact, FactName, ThreeStateAssessment } from './three-state.js';
export { assessFacts, FACT_NAMES } from './three-state.js';
// UCP booking sessions (UCP Checkout with payment terms; the stay under `dev.vrpkit.lodging`):
// discover the host's profile, a session bound to a verified offer, the guest's page, complete, the receipt.
export type { UcpClientCode, UcpClientResult, UcpLodgingClientOptions } from './ucp/client.js';
export { UcpLodgingClient } from './ucp/client.js';

/**
 * This module's URL as the process loaded it (the package's source or its build): a conformance
 * report names the verifier by a digest of the tree that actually ran.
 */
export const AGENT_MODULE_URL: string = import.meta.url;
