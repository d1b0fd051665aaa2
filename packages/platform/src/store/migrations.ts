import {
  BLOCKED_RANGE_COLUMNS,
  BOOKING_REQUEST_COLUMNS,
  CALENDAR_FEED_COLUMNS,
  SIGNING_KEY_COLUMNS,
  UCP_IDEMPOTENCY_COLUMNS,
  UCP_SESSION_COLUMNS,
  UCP_SESSION_PARTY_COLUMN,
} from '@vrpkit/node';
import { type Columns, createTable, perTenant, type TableOptions, withColumnsAfter } from '@vrpkit/sql';
import { type Kysely, type Migration, PostgresAdapter, sql } from 'kysely';
import { KEYS_PAYLOAD_PREFIX, TENANT_CHANNEL_PREFIX } from './channel.js';

/**
 * A tenant's keys are the node's with the private half sealed under the master key beside the
 * public one, and an activation time from the start (the node's came with its 0003).
 */
const TENANT_KEY_COLUMNS = withColumnsAfter(
  withColumnsAfter(SIGNING_KEY_COLUMNS, 'public_jwk', { sealed_private: { type: 'text' } }),
  'created_at',
  { activates_at: { type: 'text', notNull: true } },
);

/** One of the node's tables (`@vrpkit/node`'s definitions), a tenant's rows among many: with a `domain` column. */
function createTenantTable(db: Kysely<unknown>, table: string, columns: Columns, key: 'store-wide' | 'per-tenant', o: TableOptions = {}) {
  const scoped = perTenant(columns, { tenantKey: 'platform_tenant.domain', key });
  return createTable(db, table, scoped.columns, { ...scoped.options, ...o });
}

/** The columns `table` has now (in the current schema on PostgreSQL), so a migration adds only what is missing. */
async function columnsOf(db: Kysely<unknown>, table: string): Promise<Set<string>> {
  const tables = (await db.introspection.getTables()).filter((t) => t.name === table);
  // PostgreSQL lists every schema's tables; the platform's is the first on the search path.
  const current = tables.some((t) => t.schema !== undefined)
    ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
    : undefined;
  return new Set(tables.filter((t) => t.schema === current).flatMap((t) => t.columns.map((c) => c.name)));
}

/**
 * Versioned migrations in code (as the node and gate stores): the portable schema builder only,
 * so the same migrations run on SQLite and PostgreSQL. Never edit a released migration; add the next.
 */
export const platformMigrations: Readonly<Record<string, Migration>> = {
  '0001_tenants': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('platform_info')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('operator_domain', 'text')
        .addColumn('master_key_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('platform_tenant')
        .addColumn('domain', 'text', (c) => c.primaryKey())
        .addColumn('node_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('property', 'text', (c) => c.notNull())
        .addColumn('revision', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await createTenantTable(db, 'platform_tenant_key', TENANT_KEY_COLUMNS, 'store-wide');
      await db.schema.createIndex('platform_tenant_key_by_domain').on('platform_tenant_key').column('domain').execute();
      await createTenantTable(db, 'platform_tenant_feed', CALENDAR_FEED_COLUMNS, 'per-tenant');
      await createTenantTable(db, 'platform_tenant_block', BLOCKED_RANGE_COLUMNS, 'store-wide');
      await db.schema.createIndex('platform_tenant_block_by_domain').on('platform_tenant_block').column('domain').execute();
    },
    async down(db: Kysely<unknown>) {
      for (const t of ['platform_tenant_block', 'platform_tenant_feed', 'platform_tenant_key', 'platform_tenant', 'platform_info'])
        await db.schema.dropTable(t).execute();
    },
  },
  /**
   * Calendar sync by workers (`vrp platform sync-worker`): each feed's due time, its failures in
   * a row (the backoff step) and its lease. Idempotent: a column or index already present is kept.
   */
  '0002_feed_sync': {
    async up(db: Kysely<unknown>) {
      const have = await columnsOf(db, 'platform_tenant_feed');
      const alter = () => db.schema.alterTable('platform_tenant_feed');
      // The epoch: every feed present before this migration is due at once.
      if (!have.has('next_due_at'))
        await alter()
          .addColumn('next_due_at', 'text', (c) => c.notNull().defaultTo('1970-01-01T00:00:00.000Z'))
          .execute();
      if (!have.has('failures'))
        await alter()
          .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
      if (!have.has('lease_owner')) await alter().addColumn('lease_owner', 'text').execute();
      if (!have.has('lease_until')) await alter().addColumn('lease_until', 'text').execute();
      await db.schema.createIndex('platform_tenant_feed_by_due').ifNotExists().on('platform_tenant_feed').column('next_due_at').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('platform_tenant_feed_by_due').ifExists().execute();
      for (const c of ['lease_until', 'lease_owner', 'failures', 'next_due_at'])
        await db.schema.alterTable('platform_tenant_feed').dropColumn(c).execute();
    },
  },
  /**
   * A feed's sync bumps its tenant's revision only when what serving processes read changed: the
   * digest of the blocks it last imported tells an unchanged feed, and the success time the
   * tenant's revision carries tells when freshness must be republished. Idempotent, as 0002.
   */
  '0003_feed_digest': {
    async up(db: Kysely<unknown>) {
      const have = await columnsOf(db, 'platform_tenant_feed');
      if (!have.has('blocks_digest')) await db.schema.alterTable('platform_tenant_feed').addColumn('blocks_digest', 'text').execute();
      if (!have.has('published_success_at'))
        await db.schema.alterTable('platform_tenant_feed').addColumn('published_success_at', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      for (const c of ['published_success_at', 'blocks_digest']) await db.schema.alterTable('platform_tenant_feed').dropColumn(c).execute();
    },
  },
  /**
   * PostgreSQL: every change to a tenant's row — and every write to a tenant bumps its revision
   * there, in the same transaction (tenants.ts `bump`) — notifies the schema's channel with the
   * tenant's domain at commit (LISTEN/NOTIFY), so serving processes keeping tenant state in memory
   * learn of a disable, a key rotation or revocation, a calendar or property change without
   * polling (tenant-watch.ts). A trigger, not a call beside each write: no write path can forget it.
   * SQLite serving processes read the head per request and need none.
   */
  '0004_tenant_notify': {
    async up(db: Kysely<unknown>) {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      await sql
        .raw(
          `CREATE OR REPLACE FUNCTION platform_tenant_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('${TENANT_CHANNEL_PREFIX}' || left(md5(TG_TABLE_SCHEMA), 16), COALESCE(NEW.domain, OLD.domain));
  RETURN NULL;
END $$`,
        )
        .execute(db);
      // Idempotent, as 0002: a trigger already there is replaced.
      await sql.raw('DROP TRIGGER IF EXISTS platform_tenant_notify ON platform_tenant').execute(db);
      await sql
        .raw(
          'CREATE TRIGGER platform_tenant_notify AFTER UPDATE OR DELETE ON platform_tenant FOR EACH ROW EXECUTE FUNCTION platform_tenant_notify()',
        )
        .execute(db);
    },
    async down(db: Kysely<unknown>) {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      await sql.raw('DROP TRIGGER IF EXISTS platform_tenant_notify ON platform_tenant').execute(db);
      await sql.raw('DROP FUNCTION IF EXISTS platform_tenant_notify()').execute(db);
    },
  },
  /**
   * The operator console (issue 35 item 2): its passkeys with their role and the digests of its
   * one-time enrollment links (never a token), the audit trail every tenant change writes (the CLI's
   * and the console's alike), the console's last origin (for `vrp platform console enroll`), and
   * the indexes its tenant list pages by (status then domain; the node id it also searches).
   */
  '0005_console': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('platform_console_passkey')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('counter', 'bigint', (c) => c.notNull())
        .addColumn('transports', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema
        .createTable('platform_console_enrollment')
        .ifNotExists()
        .addColumn('token_sha256', 'text', (c) => c.primaryKey())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('platform_audit')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('domain', 'text')
        .addColumn('detail', 'text')
        .execute();
      await db.schema.createIndex('platform_audit_by_domain').ifNotExists().on('platform_audit').columns(['domain', 'at']).execute();
      if (!(await columnsOf(db, 'platform_info')).has('console_origin'))
        await db.schema.alterTable('platform_info').addColumn('console_origin', 'text').execute();
      await db.schema.createIndex('platform_tenant_by_status').ifNotExists().on('platform_tenant').columns(['status', 'domain']).execute();
      await db.schema.createIndex('platform_tenant_by_node_id').ifNotExists().on('platform_tenant').column('node_id').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('platform_tenant_by_node_id').ifExists().execute();
      await db.schema.dropIndex('platform_tenant_by_status').ifExists().execute();
      await db.schema.alterTable('platform_info').dropColumn('console_origin').execute();
      for (const t of ['platform_audit', 'platform_console_enrollment', 'platform_console_passkey'])
        await db.schema.dropTable(t).ifExists().execute();
    },
  },
  /**
   * Every tenant a UCP lodging business (issue 34 item 1): its booking sessions and the holds its
   * guests' confirmations make, the node's `ucp_session` (with its 0006 party) and `booking_request`
   * rows with their tenant's domain. An idempotency key is the tenant's own: unique per domain,
   * not across the platform. A hold's nights are a `booking` row of `platform_tenant_block` (the
   * hold's id), as on a node. No booking-event outbox: a platform sends no booking webhook (yet).
   * Idempotent, as 0002.
   */
  '0006_ucp_sessions': {
    async up(db: Kysely<unknown>) {
      const { unique: _, ...idempotencyKey } = BOOKING_REQUEST_COLUMNS.idempotency_key;
      const keep = { ifNotExists: true } as const;
      await createTenantTable(
        db,
        'platform_tenant_booking',
        // decision_reason: the node's 0008_booking_notice column (the host's reason for a decline).
        { ...BOOKING_REQUEST_COLUMNS, idempotency_key: idempotencyKey, decision_reason: { type: 'text' } },
        'store-wide',
        keep,
      );
      await db.schema
        .createIndex('platform_tenant_booking_by_key')
        .ifNotExists()
        .unique()
        .on('platform_tenant_booking')
        .columns(['domain', 'idempotency_key'])
        .execute();
      await db.schema
        .createIndex('platform_tenant_booking_by_status')
        .ifNotExists()
        .on('platform_tenant_booking')
        .columns(['domain', 'status', 'hold_expires_at'])
        .execute();
      await createTenantTable(
        db,
        'platform_tenant_ucp_session',
        // cancel_reason: the node's 0008_booking_notice column (a declined hold's reason, the session's message).
        { ...UCP_SESSION_COLUMNS, ...UCP_SESSION_PARTY_COLUMN, cancel_reason: { type: 'text' } },
        'store-wide',
        keep,
      );
      await db.schema
        .createIndex('platform_tenant_ucp_session_by_status')
        .ifNotExists()
        .on('platform_tenant_ucp_session')
        .columns(['domain', 'status', 'created_at'])
        .execute();
      // The UCP Idempotency-Keys (the node's 0007_ucp_idempotency): ids are digests over the business
      // or session scope, so they are store-wide; every statement names the tenant as well.
      await createTenantTable(db, 'platform_tenant_ucp_idempotency', UCP_IDEMPOTENCY_COLUMNS, 'store-wide', keep);
      await db.schema
        .createIndex('platform_tenant_ucp_idempotency_by_expiry')
        .ifNotExists()
        .on('platform_tenant_ucp_idempotency')
        .column('expires_at')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const t of ['platform_tenant_ucp_idempotency', 'platform_tenant_ucp_session', 'platform_tenant_booking'])
        await db.schema.dropTable(t).ifExists().execute();
    },
  },
  /**
   * PostgreSQL: a write that can take a signing key away from a tenant — any change to its key
   * rows (rotation, revocation, a master-key reseal), its status changed (disable, enable) or the
   * tenant removed — also notifies `keys:{domain}` at commit, beside 0004's `{domain}`. A serving
   * process then holds back signatures (tenant-watch.ts `signable`) only after such a write, not
   * after a hold, a session or a calendar sync (those still end serving the kept state from
   * memory). A trigger, as 0004: no key write path can forget it. Processes of the previous
   * version take `keys:…` for an unknown domain and still get 0004's notification (every such
   * write bumps the revision). SQLite serving processes read the head per request and need none.
   */
  '0007_tenant_keys_notify': {
    async up(db: Kysely<unknown>) {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      await sql
        .raw(
          `CREATE OR REPLACE FUNCTION platform_tenant_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'platform_tenant_key' OR TG_OP = 'DELETE' OR OLD.status IS DISTINCT FROM NEW.status THEN
    PERFORM pg_notify('${TENANT_CHANNEL_PREFIX}' || left(md5(TG_TABLE_SCHEMA), 16), '${KEYS_PAYLOAD_PREFIX}' || COALESCE(NEW.domain, OLD.domain));
  END IF;
  RETURN NULL;
END $$`,
        )
        .execute(db);
      // Idempotent, as 0002: triggers already there are replaced.
      for (const table of ['platform_tenant', 'platform_tenant_key']) {
        await sql.raw(`DROP TRIGGER IF EXISTS platform_tenant_keys_notify ON ${table}`).execute(db);
        await sql
          .raw(
            `CREATE TRIGGER platform_tenant_keys_notify AFTER UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION platform_tenant_keys_notify()`,
          )
          .execute(db);
      }
    },
    async down(db: Kysely<unknown>) {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      for (const table of ['platform_tenant', 'platform_tenant_key'])
        await sql.raw(`DROP TRIGGER IF EXISTS platform_tenant_keys_notify ON ${table}`).execute(db);
      await sql.raw('DROP FUNCTION IF EXISTS platform_tenant_keys_notify()').execute(db);
    },
  },
};
