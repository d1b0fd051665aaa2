import type { Kysely, Migration, MigrationProvider } from 'kysely';

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
};

export const platformMigrationProvider: MigrationProvider = { getMigrations: async () => migrations };
