/**
 * VRP wire shapes as zod schemas, with the TypeScript types inferred from them (the MCP
 * TypeScript SDK's `types.ts` pattern): one home per document, imported by node, agent and CLI.
 * They mirror the official JSON Schemas in ../schemas (copied verbatim), which stay the
 * reference for validation: tests check every document vrpkit emits against both.
 *
 * Objects the specs leave open are `z.looseObject` (extra members are kept, and typed as
 * `unknown`). The verifier does not run these schemas over a signed payload on its hot path:
 * a payload may carry additive fields, and Core VRP v0.1 §9 decides from the signed bytes.
 */
import * as z from 'zod';
import { DATE_TIME_PATTERN } from './dates.js';
import { OfferRequestArgsSchema } from './offer-request.js';

/** `YYYY-MM-DD` */
export const IsoDateSchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
export type IsoDate = z.infer<typeof IsoDateSchema>;
/** RFC 3339 UTC with `Z` (official schemas' `dateTime`). */
export const IsoDateTimeSchema = z.string().regex(DATE_TIME_PATTERN);
export type IsoDateTime = z.infer<typeof IsoDateTimeSchema>;
const HttpsUrlSchema = z.string().regex(/^https:\/\/\S+$/);

/**
 * Core VRP v0.1 §2: the discovery document (`/.well-known/vacation-rental.json`), with the
 * official schema's patterns: `canonical_domain` a lowercase host name without scheme or port,
 * `jwks_url` an https URL ending in `/.well-known/jwks.json` (its dot escaped here: the official
 * pattern's unescaped one would also admit `/xwell-known/`).
 */
export const DiscoveryDocumentSchema = z.looseObject({
  protocol: z.literal('vacation-rental-protocol'),
  protocol_version: z.literal('0.1'),
  canonical_domain: z.string().regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/),
  jwks_url: z.string().regex(/^https:\/\/\S+\/\.well-known\/jwks\.json$/),
  verified_stay_offer_endpoint: HttpsUrlSchema,
  node_id: z.string().min(1).optional(),
  capabilities: z
    .object({
      signed_verified_stay_offer: z.boolean().optional(),
      live_availability: z.boolean().optional(),
      exact_total_price: z.boolean().optional(),
      direct_booking_url: z.boolean().optional(),
    })
    .optional(),
  operator: z
    .object({ name: z.string().optional(), role: z.string().optional(), key_custody: z.enum(['platform', 'self']).optional() })
    .optional(),
  endpoints: z.record(z.string(), z.unknown()).optional(),
});
export type DiscoveryDocument = z.infer<typeof DiscoveryDocumentSchema>;

/** Core VRP v0.1 §3: one Ed25519 signing key of the JWKS. */
export const VrpJwkSchema = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  kid: z.string().min(1),
  alg: z.literal('EdDSA'),
  x: z.string().min(1),
  use: z.literal('sig').optional(),
  key_ops: z.array(z.string()).optional(),
});
export type VrpJwk = z.infer<typeof VrpJwkSchema>;

/** Core VRP v0.1 §3: the JWKS (`/.well-known/jwks.json`). */
export const VrpJwksSchema = z.object({ keys: z.array(VrpJwkSchema) });
export type VrpJwks = z.infer<typeof VrpJwksSchema>;

/** A window `host_alternatives` points at (shorter stay, next open dates). */
export const AltWindowSchema = z.object({ check_in: IsoDateSchema, check_out: IsoDateSchema, nights: z.number().int() });
export type AltWindow = z.infer<typeof AltWindowSchema>;

export const CalendarFreshnessSchema = z.object({
  checked_at: IsoDateTimeSchema.optional(),
  max_age_minutes: z.number().optional(),
  active_import_count: z.number().optional(),
  checked_sources: z.array(z.string()).optional(),
  stale_sources: z.array(z.string()).optional(),
  error_sources: z.array(z.string()).optional(),
  latest_synced_at: z.string().nullable().optional(),
  safe: z.boolean().optional(),
  reason: z.string().nullable().optional(),
});
export type CalendarFreshness = z.infer<typeof CalendarFreshnessSchema>;

export const PriceBreakdownNightSchema = z.object({
  date: IsoDateSchema,
  day_of_week: z.string().optional(),
  is_weekend: z.boolean().optional(),
  season_type: z.string().optional(),
  season_name: z.string().nullable().optional(),
  nightly_rate: z.number(),
  weekday: z.string().optional(),
});
export type PriceBreakdownNight = z.infer<typeof PriceBreakdownNightSchema>;

export const PriceAdjustmentSchema = z.object({
  code: z.string(),
  label: z.string(),
  amount: z.number(),
  scope: z.enum(['stay', 'night']),
});
export type PriceAdjustment = z.infer<typeof PriceAdjustmentSchema>;

export const PriceReconciliationSchema = z.object({
  nightly_subtotal: z.number(),
  adjustments_total: z.number(),
  computed_total: z.number(),
  matches_quoted_total: z.boolean(),
});
export type PriceReconciliation = z.infer<typeof PriceReconciliationSchema>;

export const OfferPriceSchema = z.object({
  currency: z.string(),
  public_total: z.number().nullable(),
  agent_total: z.number().nullable(),
  total: z.number().nullable().optional(),
  minor_unit: z.boolean(),
  exact: z.boolean(),
  no_add_on_fees: z.boolean().optional(),
  ota_comparison_total: z.number().nullable().optional(),
  ota_comparison_source: z.string().nullable().optional(),
  checked_at: IsoDateTimeSchema.optional(),
  package_applied: z.string().nullable().optional(),
  breakdown: z.array(PriceBreakdownNightSchema).nullable().optional(),
  adjustments: z.array(PriceAdjustmentSchema).optional(),
  reconciliation: PriceReconciliationSchema.nullable().optional(),
});
export type OfferPrice = z.infer<typeof OfferPriceSchema>;

/** Core VRP v0.1 §5.3: one refund-schedule row. */
export const RefundScheduleRowSchema = z.object({ hours_before_checkin: z.number(), refund_percent: z.number() });
export type RefundScheduleRow = z.infer<typeof RefundScheduleRowSchema>;

export const AgentPermissionSchema = z.object({
  may_quote_as_official_direct_offer: z.boolean(),
  must_not_claim_ota_comparison_without_signed_ota_price: z.boolean(),
  must_not_invent_discounts: z.boolean().optional(),
  wording: z.string().optional(),
});
export type AgentPermission = z.infer<typeof AgentPermissionSchema>;

export const SourceAuthoritySchema = z.object({
  model: z.literal('host_verified_direct_source').optional(),
  is_official_source_for_property: z.boolean().optional(),
  intermediary: z.literal('none').optional(),
  payment_recipient: z.literal('host').optional(),
  booking_model: z.literal('direct_with_host').optional(),
  booking_commission_pct: z.literal(0).optional(),
});
export type SourceAuthority = z.infer<typeof SourceAuthoritySchema>;

/** Core VRP v0.1 §5: the signed payload (`offer`). A node emits all twelve spec fields. */
export const OfferPayloadSchema = z.object({
  kind: z.literal('verified_stay_offer'),
  protocol_version: z.literal('0.1'),
  canonical_domain: z.string(),
  node_id: z.string().optional(),
  generated_at: IsoDateTimeSchema,
  valid_until: IsoDateTimeSchema,
  canonical: z.boolean().optional(),
  request: OfferRequestArgsSchema.extend({
    check_in_weekday: z.string().optional(),
    check_out_weekday: z.string().optional(),
    nights: z.number().optional(),
    language: z.string().optional(),
  }).optional(),
  property: z
    .looseObject({
      property_id: z.string(),
      id: z.string().optional(),
      name: z.string().optional(),
      url: z.string().optional(),
      domain: z.string().optional(),
      city: z.string().nullable().optional(),
      country: z.string().nullable().optional(),
    })
    .optional(),
  availability: z.object({
    available: z.boolean(),
    source: z.literal('official_host_domain'),
    reason: z.string().nullable().optional(),
    checked_at: IsoDateTimeSchema.optional(),
    calendar_freshness: CalendarFreshnessSchema.optional(),
  }),
  capacity: z
    .object({ requested_guests: z.number().optional(), max_guests: z.number().nullable().optional(), fits: z.boolean().optional() })
    .optional(),
  price: OfferPriceSchema,
  booking: z.object({
    direct_booking_url: HttpsUrlSchema,
    offer_id: z.string().optional(),
    checkout_binding: z.string().optional(),
    payment_options: z.array(z.record(z.string(), z.unknown())).optional(),
  }),
  rules: z
    .object({
      pets: z.string().nullable().optional(),
      pets_label: z.string().nullable().optional(),
      check_in_time: z.string().nullable().optional(),
      check_out_time: z.string().nullable().optional(),
      refund_schedule: z.array(RefundScheduleRowSchema).nullable().optional(),
    })
    .optional(),
  agent_permission: AgentPermissionSchema,
  source_authority: SourceAuthoritySchema.optional(),
});
export type OfferPayload = z.infer<typeof OfferPayloadSchema>;

export const OfferSignatureSchema = z.object({
  format: z.literal('jws_compact'),
  alg: z.literal('EdDSA'),
  kid: z.string(),
  jws: z.string(),
});
export type OfferSignature = z.infer<typeof OfferSignatureSchema>;

/** Receipt envelope v1: one attestation (flat). */
export const ReceiptAttestationSchema = z.looseObject({
  layer: z.string(),
  source: z.string().optional(),
  signature: z.string(),
  ref: z.string().optional(),
  valid_from: IsoDateTimeSchema.optional(),
  valid_until: IsoDateTimeSchema.optional(),
});
export type ReceiptAttestation = z.infer<typeof ReceiptAttestationSchema>;

/** Receipt envelope v1 (`vrp-receipt.v1.schema.json`). */
export const VrpReceiptSchema = z.looseObject({
  vrp_receipt_version: z.string(),
  subject: z.record(z.string(), z.unknown()),
  issuer: z.record(z.string(), z.unknown()),
  attestations: z.array(ReceiptAttestationSchema),
});
export type VrpReceipt = z.infer<typeof VrpReceiptSchema>;

/** Core VRP v0.1 §4–§5: the signed verified stay offer envelope. */
export const OfferEnvelopeSchema = z.object({
  kind: z.literal('signed_verified_stay_offer'),
  protocol_version: z.literal('0.1'),
  offer: OfferPayloadSchema,
  signature: OfferSignatureSchema,
  verification: z.object({ jwks_url: HttpsUrlSchema, verified_at: IsoDateTimeSchema.optional() }).optional(),
  host_alternatives: z
    .object({
      note: z.string().optional(),
      shorten_to: AltWindowSchema.nullable().optional(),
      next_available: AltWindowSchema.nullable().optional(),
    })
    .nullable()
    .optional(),
  receipt: VrpReceiptSchema.optional(),
});
export type OfferEnvelope = z.infer<typeof OfferEnvelopeSchema>;

/** The official verification-result object (`verified-stay-offer-verification-result-v0.1`): closed, every member required. */
export const VerificationResultSchema = z.strictObject({
  domain: z.string().min(1),
  verified: z.boolean(),
  protocol_version: z.literal('0.1'),
  fresh: z.boolean(),
  payload_matches_offer: z.boolean(),
  signature: z.strictObject({ alg: z.literal('EdDSA'), verified: z.boolean() }),
  agent_citation: z.strictObject({
    may_quote_as_official_direct_offer: z.boolean(),
    safe_to_quote_as_official_direct_offer: z.boolean(),
    quote_status: z.enum(['official_host_domain_verified_offer', 'not_quoteable']),
    blocked_reason: z.string().nullable(),
  }),
  official_offer_summary: z.strictObject({
    availability: z.strictObject({ available: z.boolean(), source: z.literal('official_host_domain') }),
    price: z.strictObject({
      currency: z.string().regex(/^[A-Z]{3}$/),
      public_total: z.number().int().min(0),
      agent_total: z.number().int().min(0),
      minor_unit: z.boolean(),
      exact: z.boolean(),
    }),
    direct_booking_url: HttpsUrlSchema,
    valid_until: IsoDateTimeSchema,
    bookable: z.boolean(),
  }),
  agent_guardrails: z.strictObject({
    safe_to_quote: z.boolean(),
    must_quote_from_signed_offer: z.literal(true),
    required_phrase_when_safe: z.string().min(1),
  }),
});
export type VerificationResult = z.infer<typeof VerificationResultSchema>;

/** MCP Composition Profile, "Assertion object": the signed transport assertion. */
export const McpTransportAssertionSchema = z.object({
  vrp_mcp_profile_version: z.literal('1.0'),
  type: z.literal('vrp.mcp.transport.1'),
  tool: z.string(),
  arguments_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** RFC 3339 instant; the receipt verifier reads it as a time, this shape only requires a string. */
  served_at: z.string(),
  issuer: z.string(),
  offer_ref: z.string().optional(),
  session_id: z.string().optional(),
});
export type McpTransportAssertion = z.infer<typeof McpTransportAssertionSchema>;

/** Core VRP v0.1 §9 three-state value. Unknown is never reported as true or false. */
export type ThreeState = 'affirmed' | 'negated' | 'unknown';

/** Core VRP v0.1 §5.4 verifiability classes (where a fact was read). */
export type VerifiabilityClass = 'verifiable' | 'attested' | 'reputational';
