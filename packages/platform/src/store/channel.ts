/**
 * The LISTEN/NOTIFY channel of a platform schema: a channel is database-wide and at most 63
 * bytes, so it is named by a digest of the schema (several platforms share a database, one schema
 * each). The migration's trigger computes the same name in SQL (`md5(TG_TABLE_SCHEMA)`).
 */
import { createHash } from 'node:crypto';

export const TENANT_CHANNEL_PREFIX = 'vrpkit_platform_';

/** A notification's payload is `{domain}` for any write to the tenant, `keys:{domain}` for one that can take a signing key away (migration 0007; no domain holds a colon). */
export const KEYS_PAYLOAD_PREFIX = 'keys:';

/** The channel the tenant rows of `schema` notify on. */
export function tenantChannel(schema: string): string {
  // md5 here names a channel (as the trigger does); it protects nothing.
  return `${TENANT_CHANNEL_PREFIX}${createHash('md5').update(schema).digest('hex').slice(0, 16)}`;
}
