/**
 * Platform tables (Kysely types), portable across SQLite and PostgreSQL like the node store's:
 * text instants (RFC 3339 with milliseconds), integers, no booleans. Every tenant is one row in
 * `platform_tenant` plus its keys, feeds and blocks, keyed by its canonical domain.
 */
import type { BlockedRangeTable, BookingRequestTable, SigningKeyTable, UcpIdempotencyTable, UcpSessionTable } from '@vrpkit/node';

export interface PlatformInfoTable {
  /** Always 1. */
  id: number;
  /** The platform's own domain (the operator surface, Node Tool Binding §7), if it serves one. */
  operator_domain: string | null;
  /** Id (digest) of the master key every sealed private key is under; never the key. */
  master_key_id: string;
  created_at: string;
  /** Where the operator console last listened (`vrp platform console enroll` prints a whole link with it). */
  console_origin: string | null;
}

export type TenantStatus = 'active' | 'disabled';

export interface TenantTable {
  /** The tenant's canonical domain (Core VRP v0.1 §2): the routing key for SNI and Host. */
  domain: string;
  node_id: string;
  status: TenantStatus;
  /** The validated property description as JSON (amounts in minor units). */
  property: string;
  /** Bumped in the same transaction as every write to the tenant: a server reloads a tenant only when it moved. */
  revision: number;
  created_at: string;
  updated_at: string;
}

/** A tenant's signing key: the node's key row (one definition, node/store/tables.ts) with its domain and sealed private half. */
export type TenantKeyTable = SigningKeyTable & {
  domain: string;
  /** The private JWK sealed with the master key (master-key.ts); null once the key stopped signing. */
  sealed_private: string | null;
};

export interface TenantFeedTable {
  domain: string;
  name: string;
  url: string | null;
  created_at: string;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  event_count: number;
  /** When the feed is next due for a sync (a sync worker claims due feeds); a new feed is due at once. */
  next_due_at: string;
  /** Failed syncs in a row (0 after a success): the backoff step of the next retry. */
  failures: number;
  /** The sync worker holding the feed's lease, until `lease_until`; an expired lease is free for any worker. */
  lease_owner: string | null;
  lease_until: string | null;
  /** sha256 of the blocks the last successful sync imported: an unchanged feed is not written again and bumps nothing. */
  blocks_digest: string | null;
  /**
   * The `last_success_at` the tenant's current revision carries (the last success that bumped it):
   * serving processes judge freshness by the revision they loaded, so a later success is
   * republished (bumped) before this one would turn the calendar stale for them.
   */
  published_success_at: string | null;
}

/** A tenant's blocked range: the node's row with its domain. */
export type TenantBlockTable = BlockedRangeTable & { domain: string };

/** The operator console's roles: `operator` changes tenants, `support` reads only. */
export type ConsoleRole = 'operator' | 'support';

/** An operator console passkey (the node console's `ConsolePasskey` with its role): never a private key. */
export interface ConsolePasskeyTable {
  id: string;
  /** COSE public key, base64url. */
  public_key: string;
  counter: number | string;
  /** JSON array of the authenticator's transports. */
  transports: string;
  role: ConsoleRole;
  created_at: string;
  last_used_at: string | null;
}

/** A one-time enrollment link: the SHA-256 of its token (never the token), the role it enrolls, its expiry. */
export interface ConsoleEnrollmentTable {
  token_sha256: string;
  role: ConsoleRole;
  expires_at: string;
}

/** One change to a tenant, whoever made it (`cli`, or `console:ROLE:PASSKEY-DIGEST`): ids and codes only. */
export interface AuditTable {
  id: string;
  at: string;
  actor: string;
  action: string;
  domain: string | null;
  detail: string | null;
}

/** A tenant's booking request (the hold a guest's confirmation made): the node's row with its domain. */
export type TenantBookingTable = BookingRequestTable & { domain: string };

/** A tenant's UCP booking session: the node's row with its domain. */
export type TenantUcpSessionTable = UcpSessionTable & { domain: string };

/** A tenant's UCP `Idempotency-Key` and the answer it was given: the node's row with its domain. */
export type TenantUcpIdempotencyTable = UcpIdempotencyTable & { domain: string };

export interface PlatformDatabase {
  platform_tenant_booking: TenantBookingTable;
  platform_tenant_ucp_session: TenantUcpSessionTable;
  platform_tenant_ucp_idempotency: TenantUcpIdempotencyTable;
  platform_console_passkey: ConsolePasskeyTable;
  platform_console_enrollment: ConsoleEnrollmentTable;
  platform_audit: AuditTable;
  platform_info: PlatformInfoTable;
  platform_tenant: TenantTable;
  platform_tenant_key: TenantKeyTable;
  platform_tenant_feed: TenantFeedTable;
  platform_tenant_block: TenantBlockTable;
}
