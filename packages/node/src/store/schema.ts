/**
 * The node store's tables (Kysely types). Portable by construction so one set of migrations
 * and queries serves SQLite and PostgreSQL: text dates (`YYYY-MM-DD`), text
 * instants (RFC 3339 with milliseconds, which sort lexicographically), 32-bit integers for
 * minor-unit amounts, no booleans, no auto-increment.
 */
import type { Generated } from 'kysely';

export interface NodeInfoTable {
  /** Always 1: one node per store (one canonical_domain). */
  id: number;
  canonical_domain: string;
  node_id: string;
  created_at: string;
}

export interface PropertyTable {
  property_id: string;
  /** The property's facts and policies as validated JSON (rates and fees live in their own tables). */
  document: string;
  updated_at: string;
}

export interface RatePlanTable {
  property_id: string;
  /** 0 is the base rate (no dates); 1.. are seasons. */
  seq: number;
  name: string;
  season_type: string;
  start_date: string | null;
  end_date: string | null;
  nightly_rate: number;
  weekend_rate: number;
}

export interface StayFeeTable {
  property_id: string;
  seq: number;
  code: string;
  label: string;
  amount: number;
}

export type BlockKind = 'block' | 'booking' | 'import';

export interface BlockedRangeTable {
  id: string;
  property_id: string;
  /** First blocked night (inclusive). */
  start_date: string;
  /** First free night after the range (exclusive), like a check-out date and iCal DTEND. */
  end_date: string;
  kind: BlockKind;
  feed_name: string | null;
  note: string | null;
  created_at: string;
}

export interface CalendarFeedTable {
  name: string;
  url: string | null;
  file: string | null;
  created_at: string;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  event_count: Generated<number>;
}

export type KeyStatus = 'active' | 'retired' | 'revoked';

export interface SigningKeyTable {
  kid: string;
  /** The public JWK as served in the JWKS (never the private half). */
  public_jwk: string;
  status: KeyStatus;
  created_at: string;
  /** When the key starts signing; later than `created_at` when it was published ahead. */
  activates_at: string;
  /** When the key stopped (or stops) signing: the next key's `activates_at`. */
  retired_at: string | null;
  /** A retired key stays in the JWKS until this instant: rotation time + offer lifetime (Core VRP v0.1 §3.1). */
  retain_until: string | null;
  revoked_at: string | null;
}

export interface StoreRevisionTable {
  /** Always 1. */
  id: number;
  revision: number;
}

export type BookingStatus = 'pending' | 'confirmed' | 'declined' | 'expired';

/** The signed stay a booking request or a UCP session is bound to: the offer's digest and its signed terms. */
export interface SignedStayColumns {
  offer_jws_sha256: string;
  property_id: string;
  check_in: string;
  check_out: string;
  guests: number;
  currency: string;
  /** The offer's `price.agent_total` in minor units. */
  total: number;
}

/** A booking request (the vrpkit booking-request extension); the only place guest details are kept. */
export interface BookingRequestTable extends SignedStayColumns {
  /** `br_…`; also the id of the hold's `booking` blocked range while the dates are held. */
  booking_id: string;
  idempotency_key: string;
  /** SHA-256 (hex) of the request's RFC 8785 canonical JSON: the same key with another body is a conflict. */
  request_sha256: string;
  status: BookingStatus;
  guest_name: string;
  guest_email: string;
  guest_phone: string | null;
  created_at: string;
  updated_at: string;
  hold_expires_at: string;
  /** The host's reason for declining (`vrp node bookings decline --reason`), mailed to the guest; host text, kept with the row. */
  decision_reason: string | null;
}

/** One change of a booking request, kept until the webhook sender has delivered it (no guest details). */
export interface BookingEventTable {
  event_id: string;
  booking_id: string;
  status: BookingStatus;
  created_at: string;
  delivered_at: string | null;
  attempts: Generated<number>;
  /** When the guest's (and host's) notice of this change was mailed; set at once for a change nobody is mailed about. */
  mailed_at: string | null;
  mail_attempts: Generated<number>;
}

/**
 * A UCP Lodging booking session (`dev.ucp.lodging.booking`, one stay): bound to one signed offer, its
 * totals that offer's; it holds no night until the guest confirms (then `booking_id`).
 */
export interface UcpSessionTable extends SignedStayColumns {
  /** `ucs_…` */
  session_id: string;
  status: 'incomplete' | 'requires_escalation' | 'ready_for_complete' | 'completed' | 'canceled';
  offer_jws: string;
  /** The identified lead's email and name (ports.ts `leadOf`): where the one-time code goes, who the hold is for. */
  buyer_email: string | null;
  buyer_name: string | null;
  /** The party as the platform sent it (`booker`, `guests[]`, occupancy, assignments; ports.ts `UcpParty`), JSON. */
  party_json: string | null;
  /** SHA-256 (hex) of the session id and the one-time code last mailed to the buyer; never the code itself. */
  code_sha256: string | null;
  code_expires_at: string | null;
  code_attempts: number;
  /** The hold made when the guest confirmed (`booking_request.booking_id`). */
  booking_id: string | null;
  created_at: string;
  updated_at: string;
  /** Booking `expires_at`: past it an open session is no longer completed. */
  expires_at: string;
  /** Why the host ended the session (declined its hold): its `canceled` answer carries it as a message. */
  cancel_reason: string | null;
}

/** A UCP `Idempotency-Key` with its answer (tables.ts `UCP_IDEMPOTENCY_COLUMNS`). */
export interface UcpIdempotencyTable {
  id: string;
  request_sha256: string;
  answer_status: number | null;
  answer_json: string | null;
  created_at: string;
  expires_at: string;
}

export interface NodeDatabase {
  ucp_session: UcpSessionTable;
  ucp_idempotency: UcpIdempotencyTable;
  booking_request: BookingRequestTable;
  booking_event: BookingEventTable;
  store_revision: StoreRevisionTable;
  node_info: NodeInfoTable;
  property: PropertyTable;
  rate_plan: RatePlanTable;
  stay_fee: StayFeeTable;
  blocked_range: BlockedRangeTable;
  calendar_feed: CalendarFeedTable;
  signing_key: SigningKeyTable;
}
