/**
 * A platform database made before the SQL kit (issue 31 item 2) opens with today's code, keeps
 * its tenants, keys, feeds and blocks, and has exactly the schema a fresh one gets: the tenant
 * tables now come from the node's table definitions with a `domain` column, and must create
 * what the released migrations created.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlatformStore } from '@vrpkit/platform';
import { sqliteFromDump, sqliteSchema } from '@vrpkit/testkit/sql';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const tmp = tempDir('platform-upgrade');

describe('a platform database made by 43aece5', () => {
  // fixtures/store-43aece5.sql: made by the migrations of commit 43aece5, one tenant with a key, a feed and a block.
  it('opens, keeps its data, and has exactly the schema a fresh database has', async () => {
    const file = join(tmp, 'earlier.sqlite');
    sqliteFromDump(fileURLToPath(new URL('./fixtures/store-43aece5.sql', import.meta.url)), file);
    const store = await PlatformStore.open(`sqlite:${file}`);
    try {
      expect(await store.db.selectFrom('platform_tenant').select(['domain', 'revision']).execute()).toEqual([
        { domain: 'villa.example', revision: 1 },
      ]);
      expect(await store.db.selectFrom('platform_tenant_key').select(['kid', 'domain', 'sealed_private']).execute()).toEqual([
        { kid: 'k1', domain: 'villa.example', sealed_private: 'sealed' },
      ]);
      expect(await store.db.selectFrom('platform_tenant_feed').select(['domain', 'name', 'event_count', 'next_due_at']).execute()).toEqual([
        { domain: 'villa.example', name: 'airbnb', event_count: 2, next_due_at: '1970-01-01T00:00:00.000Z' },
      ]);
      expect(await store.db.selectFrom('platform_tenant_block').select(['id', 'domain', 'kind', 'feed_name']).execute()).toEqual([
        { id: 'blk_1', domain: 'villa.example', kind: 'import', feed_name: 'airbnb' },
      ]);
    } finally {
      await store.close();
    }
    const fresh = join(tmp, 'fresh.sqlite');
    await (await PlatformStore.open(`sqlite:${fresh}`)).close();
    expect(sqliteSchema(fresh)).toEqual(sqliteSchema(file));
  });
});
