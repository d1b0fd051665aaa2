import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';

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
const migrations: Record<string, Migration> = {
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
      await db.schema
        .createTable('platform_tenant_key')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('domain', 'text', (c) => c.notNull().references('platform_tenant.domain').onDelete('cascade'))
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('sealed_private', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('activates_at', 'text', (c) => c.notNull())
        .addColumn('retired_at', 'text')
        .addColumn('retain_until', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('platform_tenant_key_by_domain').on('platform_tenant_key').column('domain').execute();
      await db.schema
        .createTable('platform_tenant_feed')
        .addColumn('domain', 'text', (c) => c.notNull().references('platform_tenant.domain').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_attempt_at', 'text')
        .addColumn('last_success_at', 'text')
        .addColumn('last_error', 'text')
        .addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('platform_tenant_feed_pk', ['domain', 'name'])
        .execute();
      await db.schema
        .createTable('platform_tenant_block')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('domain', 'text', (c) => c.notNull().references('platform_tenant.domain').onDelete('cascade'))
        .addColumn('property_id', 'text', (c) => c.notNull())
        .addColumn('start_date', 'text', (c) => c.notNull())
        .addColumn('end_date', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('feed_name', 'text')
        .addColumn('note', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
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
};

export const platformMigrationProvider: MigrationProvider = { getMigrations: async () => migrations };
