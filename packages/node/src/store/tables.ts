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
