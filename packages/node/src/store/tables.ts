/**
 * The node store's tables that a platform also holds, once per tenant (issue 31 item 2): defined
 * here once, created by the node's migrations as they are and by the platform's with a `domain`
 * column (`perTenant` in @vrpkit/sql). Each is the table as its first migration created it (a
 * released migration never changes); a column added later comes with a later migration, in both
 * stores.
 */
import { type Columns, withColumnsAfter } from '@vrpkit/sql';

/** A host block, a booking's hold or an imported feed event: the nights a calendar refuses. */
export const BLOCKED_RANGE_COLUMNS = {
  id: { type: 'text', primaryKey: true },
  property_id: { type: 'text', notNull: true },
  start_date: { type: 'text', notNull: true },
  end_date: { type: 'text', notNull: true },
  kind: { type: 'text', notNull: true },
  feed_name: { type: 'text' },
  note: { type: 'text' },
  created_at: { type: 'text', notNull: true },
} as const satisfies Columns;

/** An iCal feed imported into the calendar and its last sync's outcome. */
export const CALENDAR_FEED_COLUMNS = {
  name: { type: 'text', primaryKey: true },
  url: { type: 'text' },
  created_at: { type: 'text', notNull: true },
  last_attempt_at: { type: 'text' },
  last_success_at: { type: 'text' },
  last_error: { type: 'text' },
  event_count: { type: 'integer', notNull: true, defaultTo: 0 },
} as const satisfies Columns;

/** The node's feed may also be a local file (`vrp node feeds add --file`); a platform fetches URLs only. */
export const NODE_CALENDAR_FEED_COLUMNS = withColumnsAfter(CALENDAR_FEED_COLUMNS, 'url', { file: { type: 'text' } });

/** A signing key's public half and life cycle (Core VRP v0.1 §3.1); the private half is never in this table. */
export const SIGNING_KEY_COLUMNS = {
  kid: { type: 'text', primaryKey: true },
  public_jwk: { type: 'text', notNull: true },
  status: { type: 'text', notNull: true },
  created_at: { type: 'text', notNull: true },
  retired_at: { type: 'text' },
  retain_until: { type: 'text' },
  revoked_at: { type: 'text' },
} as const satisfies Columns;

/**
 * A UCP `Idempotency-Key` and the answer it was given (Message Signatures, Replay Protection: "store
 * the key with the operation result for at least 24 hours"): `id` is the SHA-256 of the key's scope
 * (the business for Create, the session for the others), the operation and the key; `request_sha256`
 * the request's digest; the answer is null while the first request with the key is still running.
 */
export const UCP_IDEMPOTENCY_COLUMNS = {
  id: { type: 'text', primaryKey: true },
  request_sha256: { type: 'text', notNull: true },
  answer_status: { type: 'integer' },
  answer_json: { type: 'text' },
  created_at: { type: 'text', notNull: true },
  expires_at: { type: 'text', notNull: true },
} as const satisfies Columns;

/** A booking request's hold (the booking desk's row; `booking_request`): the only place the guest's details are kept. */
export const BOOKING_REQUEST_COLUMNS = {
  booking_id: { type: 'text', primaryKey: true },
  idempotency_key: { type: 'text', notNull: true, unique: true },
  request_sha256: { type: 'text', notNull: true },
  offer_jws_sha256: { type: 'text', notNull: true },
  property_id: { type: 'text', notNull: true },
  check_in: { type: 'text', notNull: true },
  check_out: { type: 'text', notNull: true },
  guests: { type: 'integer', notNull: true },
  currency: { type: 'text', notNull: true },
  total: { type: 'integer', notNull: true },
  status: { type: 'text', notNull: true },
  guest_name: { type: 'text', notNull: true },
  guest_email: { type: 'text', notNull: true },
  guest_phone: { type: 'text' },
  created_at: { type: 'text', notNull: true },
  updated_at: { type: 'text', notNull: true },
  hold_expires_at: { type: 'text', notNull: true },
} as const satisfies Columns;

/** A UCP Lodging booking session (`ucp_session`); the party it was sent with came with a later migration (`UCP_SESSION_PARTY_COLUMN`). */
export const UCP_SESSION_COLUMNS = {
  session_id: { type: 'text', primaryKey: true },
  status: { type: 'text', notNull: true },
  offer_jws: { type: 'text', notNull: true },
  offer_jws_sha256: { type: 'text', notNull: true },
  property_id: { type: 'text', notNull: true },
  check_in: { type: 'text', notNull: true },
  check_out: { type: 'text', notNull: true },
  guests: { type: 'integer', notNull: true },
  currency: { type: 'text', notNull: true },
  total: { type: 'integer', notNull: true },
  buyer_email: { type: 'text' },
  buyer_name: { type: 'text' },
  code_sha256: { type: 'text' },
  code_expires_at: { type: 'text' },
  code_attempts: { type: 'integer', notNull: true, defaultTo: 0 },
  booking_id: { type: 'text' },
  created_at: { type: 'text', notNull: true },
  updated_at: { type: 'text', notNull: true },
  expires_at: { type: 'text', notNull: true },
} as const satisfies Columns;

/** The party a UCP session was sent with, as JSON (the node's 0006 added it; a platform's sessions have it from their first migration). */
export const UCP_SESSION_PARTY_COLUMN = { party_json: { type: 'text' } } as const satisfies Columns;
