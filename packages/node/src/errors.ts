/**
 * The node's one code registry: every code the node throws, returns as data or answers over HTTP,
 * with its default message and, where one applies, its HTTP status. Codes are the contract
 * (scripts, the CLI's `error[code]` lines and HTTP clients match on them); messages may change.
 * Offer-request codes the node answers itself are protocol's entries, referenced, not copied.
 */
import { type ErrorCodeEntry, errorClassFor } from '@vrpkit/core';
import { PROTOCOL_ERRORS } from '@vrpkit/protocol';

export const NODE_ERRORS = {
  // HTTP answers of the node's app (`{"error":{"code","message"}}`), its own and the Core VRP v0.1 §4
  // codes it answers outside the parser (the page calendar, the `/book` link's `offer`: protocol's entries).
  body_too_large: { status: 413, message: 'the body is larger than the resource accepts' },
  duplicate_parameter: PROTOCOL_ERRORS.duplicate_parameter,
  internal_error: { status: 500, message: 'the node could not complete the request' },
  invalid_arguments: PROTOCOL_ERRORS.invalid_arguments,
  invalid_date: PROTOCOL_ERRORS.invalid_date,
  invalid_range: PROTOCOL_ERRORS.invalid_range,
  /** JSON-RPC invalid params (-32602) on the MCP and A2A surfaces: a body nested deeper than `MAX_JSON_DEPTH`. */
  json_too_deep: { status: 400, message: 'the request nests deeper than the surfaces accept' },
  method_not_allowed: { status: 405, message: 'the resource does not take this method' },
  misdirected_request: { status: 421, message: 'this node serves only its canonical domain' },
  not_found: { status: 404, message: 'no such resource' },
  query_too_long: PROTOCOL_ERRORS.query_too_long,
  unsupported_media_type: { status: 415, message: 'the body is not in the media type the resource takes' },
  // The data directory, the store and the property.
  invalid_domain: { message: 'not a canonical domain (a lowercase DNS name, no scheme or port)' },
  domain_is_ip_address: { message: "an IP address is not a node's canonical domain" },
  data_dir_not_directory: { message: '--data-dir names a file, not a directory' },
  data_dir_not_empty: { message: 'the data directory already exists and is not empty' },
  unsupported_data_dir: { message: 'the data directory has an unsupported node.json format' },
  invalid_property: { message: 'the property description does not validate' },
  node_not_initialized: { message: 'the store holds no node; run `vrp node init` first' },
  store_not_empty: { message: 'the store already holds a node' },
  store_corrupt: { message: 'the store holds rows no node writes' },
  invalid_database_url: { message: 'the database URL is not a postgres:// URL with a valid schema' },
  database_url_required: { message: "this node's store is PostgreSQL: a database URL is required" },
  database_unreachable: { message: 'cannot reach PostgreSQL' },
  migration_failed: { message: 'a store migration failed' },
  // Calendar feeds and blocks.
  invalid_feed_name: { message: 'a feed name is 1–63 letters, digits, . _ -' },
  invalid_feed_source: { message: 'a feed has exactly one of a URL or a file' },
  invalid_feed_url: { message: 'a feed URL is an https URL' },
  feed_exists: { message: 'a calendar feed of that name already exists' },
  feed_file_not_found: { message: 'no calendar file at that path' },
  unknown_feed: { message: 'no calendar feed of that name' },
  unknown_block: { message: 'no host block or booking with that id' },
  feed_unreachable: { message: 'the feed could not be fetched' },
  feed_unreadable: { message: 'the feed file could not be read' },
  feed_http_error: { message: 'the feed answered an HTTP error' },
  feed_timeout: { message: 'the feed did not answer in time' },
  feed_too_large: { message: 'the feed is larger than a calendar may be' },
  feed_truncated: { message: 'the feed ended before its calendar did' },
  ical_parse_error: { message: 'the feed is not an iCalendar a node can read' },
  /** A platform's sync worker refuses a feed host on a loopback, private, link-local or reserved address. */
  feed_address_refused: { message: 'the feed host is (or resolves to) an address the sync worker does not fetch' },
  invalid_sync_interval: { message: 'the sync interval is a positive duration' },
  // Signing keys (Core VRP v0.1 §3, §3.1).
  invalid_kid: { message: 'not a kid this node issues' },
  unknown_kid: { message: "no such key in this node's key ring" },
  already_revoked: { message: 'the key is already revoked' },
  no_active_key: { message: 'the key ring has no active signing key' },
  private_key_missing: { message: 'the private key file is missing or unreadable' },
  invalid_publish_ahead: { message: 'publish-ahead is a whole number of seconds within the limit' },
  // Backups.
  passphrase_required: { message: 'a backup passphrase is required' },
  passphrase_unreadable: { message: 'the passphrase file cannot be read' },
  backup_unreadable: { message: 'the backup file cannot be read' },
  backup_invalid: { message: 'not a vrpkit node backup' },
  backup_unauthenticated: { message: 'wrong passphrase, or the backup was altered; nothing was restored' },
  backup_inconsistent: { message: 'the signing keys changed during every snapshot attempt' },
  // Serving: TLS, ACME, proxies, workers, connections, the offer cache.
  tls_required: { message: 'a node serves https only' },
  tls_incomplete: { message: '--tls-cert and --tls-key go together' },
  tls_unreadable: { message: 'a TLS file cannot be read' },
  tls_invalid: { message: 'not a PEM certificate or key' },
  tls_key_mismatch: { message: 'the private key does not belong to the certificate' },
  tls_wrong_domain: { message: 'the certificate does not cover the canonical domain' },
  tls_behind_proxy: { message: 'behind a proxy the proxy holds the certificate' },
  acme_conflict: { message: '--acme obtains the certificate itself' },
  acme_email_required: { message: '--acme needs an email address for the CA' },
  acme_single_process: { message: '--acme runs in one process' },
  acme_failed: { message: 'no certificate could be obtained from the ACME CA' },
  acme_renewal_failed: { message: 'renewing the certificate failed; the current one is still served' },
  trusted_proxy_required: { message: 'behind a proxy, the proxy addresses are required' },
  invalid_trusted_proxy: { message: 'a trusted proxy is an IP address or CIDR block' },
  proxy_listen_public: { message: 'behind a proxy the node listens on a loopback or private address only' },
  listen_failed: { message: 'cannot listen on the address and port' },
  invalid_connection_cap: { message: 'a connection cap is a positive integer' },
  invalid_workers: { message: 'workers are an integer within the limit' },
  not_primary: { message: 'serve workers are forked by the primary process' },
  worker_failed: { message: 'a serve worker stopped before it listened' },
  invalid_offer_cache_max_age: { message: 'the offer cache max-age is an integer number of seconds within the limit' },
  // The booking-request extension: the host's commands and the desk's limits.
  invalid_hold_hours: { message: 'the hold time is more than 0 hours and within the limit' },
  invalid_booking_rate_limit: { message: 'the booking rate limit is a positive integer (requests per minute)' },
  invalid_booking_holds_per_day: { message: 'the holds per day are a whole number (0 = no cap)' },
  invalid_booking_status: { message: 'not a booking request status' },
  invalid_booking_webhook: { message: 'the booking webhook is an https URL' },
  webhook_timeout: { message: 'the booking webhook did not answer in time' },
  webhook_http_error: { message: 'the booking webhook answered an HTTP error' },
  booking_not_found: { message: 'no such booking request' },
  booking_not_pending: { message: 'the booking request is not pending' },
  // MCP Composition Profile: a receipt for an envelope that is not this node's offer (a programmer error).
  receipt_unbuildable: { message: 'the envelope is not an offer of this node with a request echo' },
} as const satisfies Record<string, ErrorCodeEntry>;

export type NodeErrorCode = keyof typeof NODE_ERRORS;

/**
 * Errors the node raises for bad input or bad state. `code` is always a `NODE_ERRORS` code;
 * without a message the registry's is used.
 */
export class NodeError extends errorClassFor(NODE_ERRORS) {}

/** An offer request the node cannot answer as asked (Core VRP v0.1 §4): HTTP 400 `{error:{code,message}}`. */
export class OfferRequestError extends NodeError {}

/** One problem in a property description: the dotted field path ('' = the document) and the reason. */
export interface PropertyIssue {
  field: string;
  reason: string;
}

/**
 * A property description file that does not validate: every problem at once, one
 * `file: field: reason` line each. `field` and `reason` are the first problem's.
 */
export class InvalidPropertyError extends NodeError {
  readonly issues: readonly PropertyIssue[];
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
    issues: readonly PropertyIssue[] = [{ field, reason }],
  ) {
    super('invalid_property', issues.map((i) => `${file}: ${i.field || '(root)'}: ${i.reason}`).join('\n'), {
      file,
      field,
      reason,
      issues,
    });
    this.issues = issues;
  }
}
