import { type CodeArgs, CodedError, type CodeTable } from '@vrpkit/core';

/**
 * Every code platform mode raises or answers with, its message template and, where a request
 * is answered with it, the HTTP status. Codes are stable (scripts and `vrp platform` users match
 * on them); messages may be reworded here, and only here.
 */
export const PLATFORM_CODES = {
  // The database and the platform record (the database URL, reaching and migrating it: `SQL_CODES` of @vrpkit/sql).
  database_url_required: { message: 'pass --database-url or set {env}' },
  platform_not_initialized: { message: 'the database holds no platform; run `vrp platform init` first' },
  // Master key custody.
  invalid_master_key: { message: 'the master key is 32 random bytes written as 64 hex digits or base64' },
  master_key_unreadable: { message: 'cannot read the master key file {file} ({reason})' },
  master_key_required: { message: 'pass --master-key-file or set {env}' },
  master_key_mismatch: { message: 'this platform uses another master key than {given}' },
  key_unseal_failed: { message: 'the sealed key {kid} {problem}', details: ['kid'] },
  private_key_missing: { message: 'no private key for {kid}' },
  // Tenants, their keys and feeds.
  unknown_tenant: { message: 'no tenant {domain}', details: ['domain'] },
  tenant_disabled: { message: '{domain} is disabled' },
  tenant_exists: { message: 'a tenant {domain} already exists', details: ['domain'] },
  import_dir_unreadable: { message: 'cannot read {dir} ({reason})' },
  unknown_kid: { message: "no key {kid} in {domain}'s key ring" },
  already_revoked: { message: '{kid} is already revoked' },
  feed_exists: { message: '{domain} already has a feed named {name}', details: ['domain'] },
  ambiguous_feed: { message: '{domain} has {count} feeds with that URL; remove one by its name', details: ['domain'] },
  unknown_feed: { message: '{domain} has no feed with that name or URL', details: ['domain'] },
  // Serving and syncing.
  invalid_keep_alive: { message: 'the keep-alive is from 1 s to 1 hour' },
  invalid_admin_listen: { message: '--admin-listen is a loopback or private HOST:PORT, e.g. 127.0.0.1:9464' },
  invalid_sync_option: { message: '{option} is {rule}' },
  listen_failed: { message: 'cannot listen on {address}: {reason}' },
  /** A signature refused: the tenant's state is not confirmed within the lease (tenant-watch.ts); the next request reads it again. */
  tenant_state_stale: { status: 503, message: "{domain}'s state is not confirmed current; try again shortly" },
  // The operator console (issue 35 item 2).
  invalid_console_role: { message: 'a console role is operator or support' },
  console_read_only: { status: 403, message: 'the support role reads only: this change needs the operator role' },
  // RFC 9110 §15.5.20: a Host (or SNI name) no enabled tenant serves gets no tenant data.
  misdirected_request: { status: 421, message: 'this server does not serve that host' },
  internal_error: { status: 500, message: 'the platform could not complete the request' },
} as const satisfies CodeTable;

export type PlatformCode = keyof typeof PLATFORM_CODES;

/** Errors platform mode raises for bad input or bad state: `code` is always a `PLATFORM_CODES` code. */
export class PlatformError extends CodedError<typeof PLATFORM_CODES> {
  constructor(...args: CodeArgs<typeof PLATFORM_CODES>) {
    super(PLATFORM_CODES, args);
  }
}

/** The JSON body of an answer that carries only a code: `{"error":{"code","message"}}` with the table's message. */
export function errorBody(code: PlatformCode): string {
  return JSON.stringify({ error: { code, message: PLATFORM_CODES[code].message } });
}
