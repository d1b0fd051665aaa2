/**
 * The node's one code table (core's `CodeTable`): every code the node throws or answers over HTTP,
 * with its message template and, where one applies, its HTTP status. Codes are the contract
 * (scripts, the CLI's `error[code]` lines and HTTP clients match on them); messages are reworded
 * here, and only here. The offer request's codes are protocol's (`PROTOCOL_CODES`).
 */
import { type CodeTable, codedErrorClass, formatMessage } from '@vrpkit/core';

export const NODE_CODES = {
  // HTTP answers of the node's app (`{"error":{"code","message"}}`).
  body_too_large: { status: 413, message: 'the {what} is limited to {max} bytes' },
  internal_error: { status: 500, message: 'the node could not complete the request' },
  /** JSON-RPC invalid params (-32602) on the MCP and A2A surfaces: a body nested deeper than `MAX_JSON_DEPTH`. */
  json_too_deep: { status: 400, message: 'Invalid params: the request nests deeper than {max} levels' },
  method_not_allowed: { status: 405, message: 'use {methods} on {path}' },
  /** RFC 9110 §15.5.20; Core VRP v0.1 §2: a node speaks only for its canonical domain. */
  misdirected_request: { status: 421, message: 'this node serves https://{domain}' },
  not_found: { status: 404, message: 'no such resource' },
  /** Issue 36 defect 5: a state-changing form posted from another site (`Sec-Fetch-Site`, `Origin`). */
  cross_site_request: { status: 403, message: 'this form is only accepted from its own page on this site' },
  /** Issue 36 defect 5: a form post without the token of a form this node rendered, or after it expired. */
  invalid_form_token: {
    status: 403,
    message: 'the form is not one this node rendered, or it has expired: reload the page and send it again',
  },
  /** Issue 36 defect 13: the store cannot take a write (a full disk, a read-only or failing file system); answered with Retry-After. */
  store_unavailable: { status: 503, message: 'the node cannot store anything now: {cause}; try again later' },
  unsupported_media_type: { status: 415, message: 'send the {what} as application/json' },
  // The page calendar's and `vrp node calendar`'s own dates (Core VRP v0.1 §4 codes, the node's wording).
  invalid_date: { status: 400, message: '{what} must be a real calendar date YYYY-MM-DD' },
  invalid_range: { status: 400, message: '{what} must be {rule}' },
  // The data directory, the store and the property.
  invalid_domain: { message: '"{domain}" is not a canonical domain (lowercase DNS name such as villa.example, no scheme or port)' },
  domain_is_ip_address: {
    message: `"{domain}" is an IP address; a node's canonical domain is a DNS name (such as villa.example) that its TLS certificate names`,
  },
  data_dir_not_directory: { message: "{dir} is a file, not a directory: --data-dir names the node's data directory" },
  data_dir_not_empty: { message: '{dir} already exists and is not an empty directory' },
  unsupported_data_dir: { message: 'unsupported node.json format {format}' },
  invalid_property: { message: '{lines}' },
  node_not_initialized: { message: '{what}; run `vrp node init` first' },
  store_not_empty: { message: 'PostgreSQL schema {schema} already holds a node' },
  store_corrupt: { message: 'the store holds what no node writes: {problem}' },
  // The database URL's form, reaching and migrating the store, and losing it: `SQL_CODES` of @vrpkit/sql.
  database_url_required: { message: "this node's store is PostgreSQL: pass --database-url or set {env}" },
  // Calendar feeds and blocks.
  invalid_feed_name: { message: 'a feed name is 1–63 letters, digits, . _ -' },
  invalid_feed_source: { message: 'give exactly one of --url or --file' },
  invalid_feed_url: { message: 'the feed URL {problem}' },
  feed_exists: { message: 'a calendar feed named {name} already exists' },
  feed_file_not_found: { message: 'no calendar file at {file}', details: ['file'] },
  unknown_feed: { message: 'no calendar feed named {name}' },
  unknown_block: { message: 'no host block or booking with id {id}' },
  feed_unreachable: { message: 'cannot fetch the feed: {reason}' },
  feed_unreadable: { message: 'cannot read {source}: {reason}' },
  feed_http_error: { message: 'the feed answered HTTP {status}' },
  feed_timeout: { message: 'no complete answer within {ms} ms' },
  feed_too_large: { message: 'the feed exceeds {max} bytes' },
  feed_truncated: { message: 'the feed ended before its full length arrived' },
  ical_parse_error: { message: 'not an iCal {problem}' },
  /** A platform's sync worker refuses a feed host on a loopback, private, link-local or reserved address. */
  feed_address_refused: {
    message:
      'the feed host {host} is (or resolves to) a loopback, private, link-local or reserved address; the sync worker fetches public addresses only',
  },
  invalid_sync_interval: { message: 'the sync interval is a positive duration' },
  // Signing keys (Core VRP v0.1 §3, §3.1).
  invalid_kid: { message: 'not a kid this node issues' },
  unknown_kid: { message: "no key {kid} in this node's key ring" },
  already_revoked: { message: '{kid} is already revoked' },
  no_active_key: { message: 'the key ring has no active signing key' },
  private_key_missing: { message: 'the private key file for {kid} is missing or unreadable' },
  invalid_publish_ahead: { message: 'publish-ahead is a whole number of seconds from 0 to {max}' },
  // Backups.
  passphrase_required: { message: 'a backup passphrase is required (--passphrase-file FILE or {env})' },
  backup_unreadable: { message: 'cannot read {file}: {reason}', details: ['file'] },
  backup_invalid: { message: '{file} is not a vrpkit node backup', details: ['file'] },
  backup_unauthenticated: { message: '{file}: wrong passphrase, or the file was altered; nothing was restored', details: ['file'] },
  backup_inconsistent: { message: 'the signing keys changed during every snapshot attempt; run the backup again' },
  // Serving: TLS, ACME, proxies, workers, connections, the offer cache.
  tls_required: {
    message:
      'a node serves https only: pass --tls-cert and --tls-key, --dev for a local dev CA, or --behind-proxy behind a TLS-terminating proxy',
  },
  tls_incomplete: { message: '--tls-cert and --tls-key go together' },
  tls_unreadable: { message: 'cannot read the TLS {what} {file}: {reason}', details: ['file', 'reason'] },
  tls_invalid: { message: '{file} is not a PEM {what}', details: ['file'] },
  tls_key_mismatch: { message: 'the private key in {key} does not belong to the certificate in {cert}', details: ['cert', 'key'] },
  tls_wrong_domain: { message: 'the certificate in {file} does not cover {domain} (it names {names})', details: ['file', 'domain'] },
  tls_behind_proxy: { message: 'behind a proxy the proxy holds the certificate: drop --tls-cert, --tls-key and --dev' },
  acme_conflict: { message: '--acme obtains the certificate itself: drop --tls-cert, --tls-key, --dev and --behind-proxy' },
  acme_single_process: { message: '--acme runs in one process: drop --workers' },
  acme_failed: { message: 'cannot obtain a certificate for {domain}: {reason}' },
  acme_renewal_failed: {
    message: 'renewing the certificate for {domain} failed (failure {failures}: {reason}); still serving the one valid until {validTo}',
  },
  trusted_proxy_required: { message: 'behind a proxy, name the proxy addresses with --trusted-proxy ADDRESS[/PREFIX]' },
  invalid_trusted_proxy: { message: '--trusted-proxy {value} is not an IP address or CIDR block' },
  proxy_listen_public: {
    message: 'behind a proxy the node speaks plain http, so it listens on a loopback or private address only, not {host}',
  },
  // The host console's listener (issue 35) and its enrollment links.
  console_listen_public: {
    message:
      'the host console listens on a loopback or private address; {host} is public: add --console-public (and serve TLS) to expose it',
  },
  console_public_needs_tls: {
    message: 'a host console on the public address {host} needs TLS: serve the node with its certificate (--tls-cert/--tls-key or --dev)',
  },
  // `--console-path`: the host console mounted behind the node's reverse proxy.
  console_path_taken: { message: 'the console path {path} is where the node answers {route} itself: choose another (like /console)' },
  console_path_invalid: { message: 'a console path is /segment[/segment…] of letters, digits and -._~ (like /console), not {path}' },
  console_path_needs_proxy: {
    message: '--console-path mounts the console for the node’s reverse proxy: add --behind-proxy (and --trusted-proxy)',
  },
  console_path_conflict: {
    message:
      'the console is either on a listener of its own (--console-host/--console-port/--console-public/--console-name) or at --console-path, not both',
  },
  console_proxy_only: { message: 'the host console answers only through the node’s reverse proxy', status: 403 },
  console_enrollment_invalid: {
    message: 'this enrollment link was used, has expired or is not one this node made: run `vrp node console enroll` again',
  },
  console_passkey_not_found: { message: 'no console passkey has the id {id}', details: ['id'] },
  console_last_passkey: {
    message: 'this is the last passkey that may make changes: enroll another (`vrp node console enroll`) before removing it',
  },
  listen_failed: { message: 'cannot listen on {address}: {reason}' },
  invalid_connection_cap: { message: 'a connection cap is a positive integer' },
  invalid_shutdown_grace: { message: '--shutdown-grace is seconds from 0 to 3600' },
  invalid_workers: { message: 'workers must be an integer from 1 to {max}' },
  not_primary: { message: 'serve workers are forked by the primary process' },
  worker_failed: { message: 'a serve worker failed: {problem}' },
  invalid_offer_cache_max_age: { message: 'the offer cache max-age is an integer from 0 to {max} seconds' },
  // The booking-request extension: the host's commands and the desk's limits.
  invalid_hold_hours: { message: 'the hold time is more than 0 and at most {max} hours' },
  invalid_booking_rate_limit: { message: 'the booking rate limit is a positive integer (requests per minute)' },
  invalid_booking_holds_per_day: { message: 'the holds per day are a whole number (0 = no cap)' },
  invalid_booking_status: { message: '--status is one of {statuses}' },
  invalid_booking_webhook: { message: 'the booking webhook {problem}' },
  webhook_timeout: { message: 'the booking webhook did not answer in time' },
  webhook_http_error: { message: 'the booking webhook answered HTTP {status}' },
  booking_not_found: { message: 'no booking request {id}', details: ['id'] },
  booking_not_pending: { message: 'booking request {id} is {status}, not pending', details: ['id', 'status'] },
  host_email_needs_smtp: { message: '--host-email needs --smtp-url (the host is mailed through it)' },
  invalid_guest_data_days: { message: '--guest-data-days is a whole number of days, at least 1' },
  decline_reason_required: { message: 'a decline needs the reason the guest is told (--reason TEXT)' },
  decline_reason_too_long: { message: 'the decline reason is longer than {max} characters' },
  // MCP Composition Profile: a receipt for an envelope that is not this node's offer (a programmer error).
  receipt_unbuildable: { message: 'no receipt for this envelope: {problem}' },
} as const satisfies CodeTable;

export type NodeCode = keyof typeof NODE_CODES;

/** Errors the node raises for bad input or bad state: `code` is always a `NODE_CODES` code. */
export class NodeError extends codedErrorClass(NODE_CODES) {}

/** An offer request the node cannot answer as asked (Core VRP v0.1 §4): HTTP 400 `{error:{code,message}}`. */
export class OfferRequestError extends NodeError {}

/** The message of `code` with its template's values: for an HTTP answer that is data, not a thrown error. */
export function nodeMessage(code: NodeCode, params?: Readonly<Record<string, string | number>>): string {
  return formatMessage(NODE_CODES[code].message, params);
}

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
    const lines = issues.map((i) => `${file}: ${i.field || '(root)'}: ${i.reason}`).join('\n');
    super('invalid_property', { lines }, { details: { file, field, reason, issues } });
    this.issues = issues;
  }
}
