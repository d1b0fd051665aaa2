/**
 * VRP wire types. They mirror the official schemas in ../schemas (copied verbatim), which
 * remain the source of truth for validation: tests validate every document vrpkit emits
 * against them with ajv. Field names are the spec's own.
 */

/** `YYYY-MM-DD` */
export type IsoDate = string;
/** RFC 3339 UTC with `Z` (schema `dateTime`). */
export type IsoDateTime = string;

/** Core §2 discovery document (`/.well-known/vacation-rental.json`). */
export interface DiscoveryDocument {
  protocol: 'vacation-rental-protocol';
  protocol_version: '0.1';
  canonical_domain: string;
  jwks_url: string;
  verified_stay_offer_endpoint: string;
  node_id?: string;
  capabilities?: {
    signed_verified_stay_offer?: boolean;
    live_availability?: boolean;
    exact_total_price?: boolean;
    direct_booking_url?: boolean;
  };
  operator?: { name?: string; role?: string; key_custody?: 'platform' | 'self' };
  endpoints?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** Core §3 JWKS key entry. */
export interface VrpJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  kid: string;
  alg: 'EdDSA';
  x: string;
  use?: 'sig';
  key_ops?: string[];
}

export interface VrpJwks {
  keys: VrpJwk[];
}

/** Core §4 request parameters (snake_case; Node Tool Binding §4). */
export interface OfferRequestArgs {
  check_in: IsoDate;
  check_out: IsoDate;
  guests: number;
}

export interface AltWindow {
  check_in: IsoDate;
  check_out: IsoDate;
  nights: number;
}

export interface CalendarFreshness {
  checked_at?: IsoDateTime;
  max_age_minutes?: number;
  active_import_count?: number;
  checked_sources?: string[];
  stale_sources?: string[];
  error_sources?: string[];
  latest_synced_at?: string | null;
  safe?: boolean;
  reason?: string | null;
}

export interface PriceBreakdownNight {
  date: IsoDate;
  day_of_week?: string;
  is_weekend?: boolean;
  season_type?: string;
  season_name?: string | null;
  nightly_rate: number;
  weekday?: string;
}

export interface PriceAdjustment {
  code: string;
  label: string;
  amount: number;
  scope: 'stay' | 'night';
}

export interface PriceReconciliation {
  nightly_subtotal: number;
  adjustments_total: number;
  computed_total: number;
  matches_quoted_total: boolean;
}

export interface OfferPrice {
  currency: string;
  public_total: number | null;
  agent_total: number | null;
  total?: number | null;
  minor_unit: boolean;
  exact: boolean;
  no_add_on_fees?: boolean;
  ota_comparison_total?: number | null;
  ota_comparison_source?: string | null;
  checked_at?: IsoDateTime;
  package_applied?: string | null;
  breakdown?: PriceBreakdownNight[] | null;
  adjustments?: PriceAdjustment[];
  reconciliation?: PriceReconciliation | null;
}

/** Core §5.3 refund schedule row. */
export interface RefundScheduleRow {
  hours_before_checkin: number;
  refund_percent: number;
}

export interface AgentPermission {
  may_quote_as_official_direct_offer: boolean;
  must_not_claim_ota_comparison_without_signed_ota_price: boolean;
  must_not_invent_discounts?: boolean;
  wording?: string;
}

export interface SourceAuthority {
  model?: 'host_verified_direct_source';
  is_official_source_for_property?: boolean;
  intermediary?: 'none';
  payment_recipient?: 'host';
  booking_model?: 'direct_with_host';
  booking_commission_pct?: 0;
}

/** Core §5: the signed payload (`offer`). A node emits all twelve spec fields. */
export interface OfferPayload {
  kind: 'verified_stay_offer';
  protocol_version: '0.1';
  canonical_domain: string;
  node_id?: string;
  generated_at: IsoDateTime;
  valid_until: IsoDateTime;
  canonical?: boolean;
  request?: OfferRequestArgs & { check_in_weekday?: string; check_out_weekday?: string; nights?: number; language?: string };
  property?: {
    property_id: string;
    id?: string;
    name?: string;
    url?: string;
    domain?: string;
    city?: string | null;
    country?: string | null;
    [extra: string]: unknown;
  };
  availability: {
    available: boolean;
    source: 'official_host_domain';
    reason?: string | null;
    checked_at?: IsoDateTime;
    calendar_freshness?: CalendarFreshness;
  };
  capacity?: { requested_guests?: number; max_guests?: number | null; fits?: boolean };
  price: OfferPrice;
  booking: {
    direct_booking_url: string;
    offer_id?: string;
    checkout_binding?: string;
    payment_options?: Record<string, unknown>[];
  };
  rules?: {
    pets?: string | null;
    pets_label?: string | null;
    check_in_time?: string | null;
    check_out_time?: string | null;
    refund_schedule?: RefundScheduleRow[] | null;
  };
  agent_permission: AgentPermission;
  source_authority?: SourceAuthority;
}

export interface OfferSignature {
  format: 'jws_compact';
  alg: 'EdDSA';
  kid: string;
  jws: string;
}

/** Core §4–§5: the signed verified stay offer envelope. */
export interface OfferEnvelope {
  kind: 'signed_verified_stay_offer';
  protocol_version: '0.1';
  offer: OfferPayload;
  signature: OfferSignature;
  verification?: { jwks_url: string; verified_at?: IsoDateTime };
  host_alternatives?: { note?: string; shorten_to?: AltWindow | null; next_available?: AltWindow | null } | null;
  receipt?: VrpReceipt;
}

/** Receipt envelope v1 attestation (flat, D1). */
export interface ReceiptAttestation {
  layer: string;
  source?: string;
  signature: string;
  ref?: string;
  valid_from?: IsoDateTime;
  valid_until?: IsoDateTime;
  [extra: string]: unknown;
}

/** Receipt envelope v1 (`vrp-receipt.v1.schema.json`). */
export interface VrpReceipt {
  vrp_receipt_version: string;
  subject: Record<string, unknown>;
  issuer: Record<string, unknown>;
  attestations: ReceiptAttestation[];
  [extra: string]: unknown;
}

/** MCP composition profile: the signed transport assertion. */
export interface McpTransportAssertion {
  vrp_mcp_profile_version: '1.0';
  type: 'vrp.mcp.transport.1';
  tool: string;
  arguments_sha256: string;
  served_at: IsoDateTime;
  issuer: string;
  offer_ref?: string;
  session_id?: string;
}

/** Core §9 three-state value. Unknown is never reported as true or false. */
export type ThreeState = 'affirmed' | 'negated' | 'unknown';

/** Core §5.4 verifiability classes (where a fact was read). */
export type VerifiabilityClass = 'verifiable' | 'attested' | 'reputational';
