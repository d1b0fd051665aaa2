/**
 * What the operator console reads beyond `PlatformStore`'s own verbs: a page of tenants found by
 * domain or node id (keyset paging over the primary key, a status filter over the (status, domain)
 * index, so a page costs the same among 10,000 tenants as among ten), a tenant's audit trail, and
 * the fleet facts the health plots sample from the database (failing feeds by the host they are
 * fetched from, key rotation progress).
 */
import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { PlatformDatabase, TenantStatus } from '../store/schema.js';

/** Tenants a page of the list shows. */
export const TENANT_PAGE_SIZE = 50;

export interface TenantRow {
  domain: string;
  node_id: string;
  status: TenantStatus;
  updated_at: string;
}

export interface TenantPage {
  rows: TenantRow[];
  /** The domain the next page starts after, or null on the last page. */
  next: string | null;
}

/** `%` and `_` taken literally in a LIKE pattern (escaped with `\`, declared by ESCAPE). */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * One page of tenants in domain order after `after`: all of them, those of `status`, those whose
 * domain contains `q` (lower-cased: domains are stored lower-case) or whose node id is `q`.
 */
export async function tenantPage(
  db: Kysely<PlatformDatabase>,
  o: { q?: string; status?: TenantStatus; after?: string; limit?: number },
): Promise<TenantPage> {
  const limit = o.limit ?? TENANT_PAGE_SIZE;
  let query = db
    .selectFrom('platform_tenant')
    .select(['domain', 'node_id', 'status', 'updated_at'])
    .orderBy('domain')
    .limit(limit + 1);
  if (o.status) query = query.where('status', '=', o.status);
  if (o.after) query = query.where('domain', '>', o.after);
  const q = o.q?.trim();
  if (q) {
    const pattern = `%${likeLiteral(q.toLowerCase())}%`;
    // ESCAPE named: SQLite has no default LIKE escape character, PostgreSQL's is the same `\`.
    query = query.where((eb) => eb.or([eb('node_id', '=', q), sql<boolean>`domain like ${pattern} escape '\\'`]));
  }
  const rows = await query.execute();
  const more = rows.length > limit;
  const shown = rows.slice(0, limit);
  return { rows: shown, next: more ? (shown[shown.length - 1]?.domain ?? null) : null };
}

export interface AuditLine {
  at: string;
  actor: string;
  action: string;
  detail: string | null;
}

/** The latest changes made to `domain`, newest first. */
export async function auditTrail(db: Kysely<PlatformDatabase>, domain: string, limit = 20): Promise<AuditLine[]> {
  return db
    .selectFrom('platform_audit')
    .select(['at', 'actor', 'action', 'detail'])
    .where('domain', '=', domain)
    .orderBy('at', 'desc')
    .limit(limit)
    .execute();
}

/** What the fleet plots sample from the database each minute. */
export interface FleetFacts {
  /** Feeds whose last sync failed, by the host their URL names (the others' hosts are not read). */
  failingFeedsByHost: Record<string, number>;
  /** Enabled tenants, and how many of them sign with a key created within the last day (rotation progress). */
  activeTenants: number;
  rotatedLastDay: number;
  /** Retired keys still published (rotations whose old key has not yet left the JWKS). */
  retainedKeys: number;
}

/** Most failing feeds read for one sample (the plot shows hosts, not feeds). */
const MAX_FAILING_FEEDS_READ = 10_000;

function hostOf(url: string | null): string {
  try {
    return url ? new URL(url).hostname : 'unknown';
  } catch {
    return 'unknown';
  }
}

export async function fleetFacts(db: Kysely<PlatformDatabase>, now: number): Promise<FleetFacts> {
  const failing = await db
    .selectFrom('platform_tenant_feed')
    .select('url')
    .where('last_error', 'is not', null)
    .limit(MAX_FAILING_FEEDS_READ)
    .execute();
  const failingFeedsByHost: Record<string, number> = {};
  for (const f of failing) {
    const host = hostOf(f.url);
    failingFeedsByHost[host] = (failingFeedsByHost[host] ?? 0) + 1;
  }
  const dayAgo = new Date(now - 86_400_000).toISOString();
  const keys = await db
    .selectFrom('platform_tenant_key as k')
    .innerJoin('platform_tenant as t', 't.domain', 'k.domain')
    .where('t.status', '=', 'active')
    .select((eb) => {
      const counted = (when: Expression<SqlBool>) => eb.fn.count<number>(eb.case().when(when).then(1).end());
      return [
        counted(eb.and([eb('k.status', '=', 'active'), eb('k.created_at', '>', dayAgo)])).as('rotated'),
        counted(eb.and([eb('k.status', '=', 'retired'), eb('k.retain_until', '>', new Date(now).toISOString())])).as('retained'),
      ];
    })
    .executeTakeFirstOrThrow();
  const active = await db
    .selectFrom('platform_tenant')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return {
    failingFeedsByHost,
    activeTenants: Number(active.n),
    rotatedLastDay: Number(keys.rotated),
    retainedKeys: Number(keys.retained),
  };
}
