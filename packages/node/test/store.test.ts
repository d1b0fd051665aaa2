/**
 * The node store: the same Kysely migrations and queries on a real SQLite file and on a real
 * PostgreSQL (when VRPKIT_TEST_PG_URL is set; each run uses its own schema
 * `vrp_node_test_<random>`, testkit's `pgTestSchemas`, dropped afterwards). A whole node also runs on PostgreSQL end to end.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixedClock } from '@vrpkit/core';
import { initNode, NodeStore, type ServedNode, type StoreTarget, sampleProperty, serveNode } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { nodeClient, tempDir } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { sqliteFromDump, sqliteSchema } from '@vrpkit/testkit/sql';
import { afterAll, describe, expect, it } from 'vitest';
import { jwksAt } from '../src/keys.js';

const pgs = pgTestSchemas('node store', 'the PostgreSQL cases (the SQLite cases run)');

const tmp = tempDir('store');
afterAll(() => tmp.cleanup());

const targets: { name: string; skip: boolean; target: () => StoreTarget }[] = [
  { name: 'SQLite', skip: false, target: () => ({ kind: 'sqlite', file: join(tmp.dir, `${randomBytes(4).toString('hex')}.sqlite`) }) },
  { name: 'PostgreSQL', skip: !pgs, target: () => ({ kind: 'postgres', url: pgs!.url, schema: pgs!.schema('vrp_node_test') }) },
];

const T0 = Date.parse('2027-02-01T09:00:00Z');

describe.each(targets)('store on $name', ({ skip, target }) => {
  it.skipIf(skip)('migrates, is idempotent on reopen, and round-trips the property with its rate plan and fees', async () => {
    const t = target();
    const store = await NodeStore.open(t);
    const property = sampleProperty(T0);
    await store.setNodeInfo({ canonical_domain: 'store.example', node_id: 'store.example' }, T0);
    await store.putProperty(property, T0);
    await store.close();
    const again = await NodeStore.open(t);
    expect(await again.nodeInfo()).toEqual({
      canonical_domain: 'store.example',
      node_id: 'store.example',
      created_at: '2027-02-01T09:00:00.000Z',
    });
    // The store spells out the defaults: an absent weekend rate is the nightly rate.
    const rates = property.rates;
    expect(await again.property()).toEqual({
      ...property,
      rates: {
        ...rates,
        weekend: rates.weekend ?? rates.nightly,
        seasons: rates.seasons.map((x) => ({ ...x, weekend: x.weekend ?? x.nightly })),
      },
    });
    await again.close();
  });

  it.skipIf(skip)('replaces a feed’s imports atomically and keeps them when a sync fails', async () => {
    const store = await NodeStore.open(target());
    await store.addBlock('p', { start_date: '2027-03-10', end_date: '2027-03-14', kind: 'booking' }, T0);
    await store.addFeed({ name: 'f', url: 'https://feeds.example/f.ics', file: null }, T0);
    await store.recordFeedSuccess('p', 'f', [{ start_date: '2027-04-01', end_date: '2027-04-03', note: null }], T0);
    const ranges = async () => (await store.listBlocks()).map((b) => [b.start_date, b.end_date, b.kind, b.feed_name]);
    expect(await ranges()).toEqual([
      ['2027-03-10', '2027-03-14', 'booking', null],
      ['2027-04-01', '2027-04-03', 'import', 'f'],
    ]);
    await store.recordFeedSuccess('p', 'f', [{ start_date: '2027-04-05', end_date: '2027-04-06', note: 'x' }], T0 + 1000);
    await store.recordFeedFailure('f', 'feed_http_error: 503', T0 + 2000);
    expect(await ranges()).toEqual([
      ['2027-03-10', '2027-03-14', 'booking', null],
      ['2027-04-05', '2027-04-06', 'import', 'f'],
    ]);
    expect(await store.feeds()).toEqual([
      expect.objectContaining({
        name: 'f',
        last_success_at: '2027-02-01T09:00:01.000Z',
        last_error: 'feed_http_error: 503',
        event_count: 1,
      }),
    ]);
    await expect(store.addFeed({ name: 'f', url: null, file: '/x.ics' }, T0)).rejects.toMatchObject({ code: 'feed_exists' });
    expect(await store.removeFeed('f')).toBe(true);
    expect(await ranges()).toEqual([['2027-03-10', '2027-03-14', 'booking', null]]);
    await store.close();
  });

  it.skipIf(skip)(
    'a snapshot is reused while the revision stands and reloaded after any write, from this or another connection',
    async () => {
      const t = target();
      const a = await NodeStore.open(t);
      await a.setNodeInfo({ canonical_domain: 'store.example', node_id: 'store.example' }, T0);
      await a.putProperty(sampleProperty(T0), T0);
      const s1 = await a.snapshot();
      expect(await a.snapshot()).toBe(s1);
      const b = await NodeStore.open(t);
      await b.addBlock('villa-demo', { start_date: '2027-05-01', end_date: '2027-05-02', kind: 'block' }, T0);
      const s2 = await a.snapshot();
      expect(s2).not.toBe(s1);
      expect(s2.revision).toBeGreaterThan(s1.revision);
      expect(s2.blocks.map((x) => x.start_date)).toEqual(['2027-05-01']);
      // A failed write changes nothing, the revision included.
      await b.addFeed({ name: 'dup', url: null, file: '/a.ics' }, T0);
      const s3 = await a.snapshot();
      await expect(b.addFeed({ name: 'dup', url: null, file: '/b.ics' }, T0)).rejects.toMatchObject({ code: 'feed_exists' });
      expect(await a.snapshot()).toBe(s3);
      await b.close();
      await a.close();
    },
  );

  it.skipIf(skip)(
    'keeps exactly one active key; publishes retired keys only inside their retention window; never revoked ones',
    async () => {
      const store = await NodeStore.open(target());
      const jwk = (kid: string) => JSON.stringify({ kty: 'OKP', crv: 'Ed25519', kid, alg: 'EdDSA', x: 'AAAA' });
      await store.activateKey({ kid: 'k1', public_jwk: jwk('k1') }, T0 + 900_000, T0);
      await store.activateKey({ kid: 'k2', public_jwk: jwk('k2') }, T0 + 900_000 + 60_000, T0 + 60_000);
      expect((await store.keys()).map((k) => [k.kid, k.status])).toEqual([
        ['k1', 'retired'],
        ['k2', 'active'],
      ]);
      const published = async (at: number) => jwksAt(await store.keys(), at).keys.map((k) => k.kid);
      expect(await published(T0 + 960_000 - 1)).toEqual(['k1', 'k2']);
      expect(await published(T0 + 960_000)).toEqual(['k2']);
      await store.setKeyStatus('k2', 'revoked', T0 + 120_000);
      expect(await published(T0 + 120_000)).toEqual(['k1']);
      await store.close();
    },
  );
});

describe.skipIf(!pgs)('a whole node on PostgreSQL', () => {
  let node: ServedNode | undefined;
  afterAll(async () => {
    await node?.close();
  });

  it('init, serve and sign offers with the store in a PostgreSQL schema', async () => {
    const url = pgs!.schemaUrl('vrp_node_test');
    const dataDir = join(tmp.dir, 'pg-node');
    const r = await initNode({ domain: 'pg-node.example', dataDir, databaseUrl: url, clock: fixedClock(T0) });
    expect(r.store).toBe('postgres');
    await expect(initNode({ domain: 'pg-node.example', dataDir: join(tmp.dir, 'pg-node-2'), databaseUrl: url })).rejects.toMatchObject({
      code: 'store_not_empty',
    });
    await expect(serveNode({ dataDir, dev: true })).rejects.toMatchObject({ code: 'database_url_required' });
    node = await serveNode({ dataDir, dev: true, databaseUrl: url, clock: fixedClock(T0) });
    const client = nodeClient('pg-node.example', node.port, node.caPem!);
    const res = await client.get(`${OFFER_ENDPOINT_PATH}?check_in=2027-03-01&check_out=2027-03-05&guests=2`);
    await client.close();
    const envelope = JSON.parse(res.text) as OfferEnvelope;
    expect(envelope.offer.availability.available).toBe(true);
    expect(envelope.signature.kid).toBe('pg-node.example-2027-02-01-01');
  });
});

describe('a store made before the SQL kit (issue 31 item 2)', () => {
  // fixtures/store-43aece5.sql: made by the migrations of commit 43aece5, with a row in each table the platform shares.
  it('opens, keeps its data, and has exactly the schema the shared table definitions create', async () => {
    const file = join(tmp.dir, 'earlier.sqlite');
    sqliteFromDump(fileURLToPath(new URL('./fixtures/store-43aece5.sql', import.meta.url)), file);
    const store = await NodeStore.open({ kind: 'sqlite', file });
    try {
      expect(await store.nodeInfo()).toMatchObject({ canonical_domain: 'villa.example' });
      expect((await store.listBlocks()).map((b) => [b.id, b.start_date, b.note])).toEqual([['blk_1', '2027-01-10', 'main']]);
      expect((await store.feeds()).map((f) => [f.name, f.url, f.event_count])).toEqual([['airbnb', 'https://cal.example/a.ics', 3]]);
      expect((await store.keys()).map((k) => [k.kid, k.status])).toEqual([['k1', 'active']]);
    } finally {
      await store.close();
    }
    const fresh = join(tmp.dir, 'fresh.sqlite');
    await (await NodeStore.open({ kind: 'sqlite', file: fresh })).close();
    expect(sqliteSchema(fresh)).toEqual(sqliteSchema(file));
  });
});
