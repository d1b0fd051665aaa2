import { verifyOffer } from '@vrpkit/agent';
import { createNodeApp, offerFor, sampleProperty } from '@vrpkit/node';
import { generateMasterKeyText, openTenantNode, type PlatformStore, parseMasterKey } from '@vrpkit/platform';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newMasterKey, openInitialised, sqliteUrl, tempDir } from './helpers.js';

const NOW = Date.parse('2026-06-01T10:00:00Z');
const clock = { now: () => NOW };
const master = newMasterKey();
const pgs = pgTestSchemas('platform tenants', 'the PostgreSQL runs of the tenant store');

const tmp = tempDir('platform');
let files = 0;
const targets: [string, () => string][] = [['sqlite', () => sqliteUrl(tmp, `p${files++}`)]];
if (pgs) targets.push(['postgres', () => pgs.schemaUrl('plat')]);

const stay = { check_in: '2026-07-10', check_out: '2026-07-13', guests: 2 };

describe.each(targets)('tenant store on %s', (_kind, urlFor) => {
  let store: PlatformStore;
  beforeEach(async () => {
    store = await openInitialised(urlFor(), master, { clock, operatorDomain: 'platform.example' });
  });
  afterEach(async () => {
    await store.close();
  });

  it('serves each tenant as its own node: offers verify under its own JWKS only, discovery says the platform holds the key', async () => {
    await store.addTenants(master, [
      { domain: 'villa-one.example', property: sampleProperty(NOW) },
      { domain: 'villa-two.example', property: sampleProperty(NOW) },
    ]);
    const one = await openTenantNode(store, 'villa-one.example', [master], { clock });
    const two = await openTenantNode(store, 'villa-two.example', [master], { clock });
    expect(one.publisher.discovery().canonical_domain).toBe('villa-one.example');
    expect(one.publisher.discovery().operator?.key_custody).toBe('platform');
    const offer = await offerFor(one.publisher, stay);
    if (!offer.ok) throw new Error(offer.error.code);
    const own = verifyOffer({ envelope: JSON.parse(offer.json), jwks: await one.publisher.jwks(), now: NOW });
    expect(own.status).toBe('verified');
    expect((own.payload as { canonical_domain: string }).canonical_domain).toBe('villa-one.example');
    const other = verifyOffer({ envelope: JSON.parse(offer.json), jwks: await two.publisher.jwks(), now: NOW });
    expect(other.status).not.toBe('verified');
    // The HTTP app is the node's own: discovery over a request.
    const res = await createNodeApp(two.publisher).request('https://villa-two.example/.well-known/vacation-rental.json', {
      headers: { host: 'villa-two.example' },
    });
    expect(((await res.json()) as { canonical_domain: string }).canonical_domain).toBe('villa-two.example');
  });

  it('refuses a second tenant with the same domain and changes nothing; skipExisting makes adding idempotent', async () => {
    await store.addTenants(master, [{ domain: 'villa.example', property: sampleProperty(NOW) }]);
    await expect(store.addTenants(master, [{ domain: 'villa.example', property: sampleProperty(NOW) }])).rejects.toMatchObject({
      code: 'tenant_exists',
    });
    expect(await store.addTenants(master, [{ domain: 'villa.example', property: sampleProperty(NOW) }], { skipExisting: true })).toEqual(
      [],
    );
    expect((await store.showTenant('villa.example')).keys).toHaveLength(1);
  });

  it('a disabled tenant stops serving at its next request; a removed one is gone with its keys', async () => {
    await store.addTenants(master, [{ domain: 'villa.example', property: sampleProperty(NOW) }]);
    const node = await openTenantNode(store, 'villa.example', [master], { clock });
    expect(await node.source.live()).toMatchObject({ status: 'active' });
    await store.setTenantStatus('villa.example', 'disabled');
    expect(await node.source.live()).toBeUndefined();
    await expect(offerFor(node.publisher, stay)).rejects.toMatchObject({ code: 'tenant_disabled' });
    expect((await store.listTenants({ status: 'disabled' })).map((t) => t.domain)).toEqual(['villa.example']);
    await store.removeTenant('villa.example');
    await expect(store.showTenant('villa.example')).rejects.toMatchObject({ code: 'unknown_tenant' });
    expect(await store.countTenants()).toBe(0);
  });

  it('rotation is additive and revocation removes the key from the JWKS at once', async () => {
    await store.addTenants(master, [{ domain: 'villa.example', property: sampleProperty(NOW) }]);
    const node = await openTenantNode(store, 'villa.example', [master], { clock });
    const before = await offerFor(node.publisher, stay);
    if (!before.ok) throw new Error(before.error.code);
    const { kid, retired } = await store.rotateTenantKey(master, 'villa.example');
    expect(retired).toHaveLength(1);
    const after = await offerFor(node.publisher, stay);
    if (!after.ok) throw new Error(after.error.code);
    const jwks = await node.publisher.jwks();
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual([kid, retired[0]].sort());
    expect(verifyOffer({ envelope: JSON.parse(after.json), jwks, now: NOW }).header?.kid).toBe(kid);
    expect(verifyOffer({ envelope: JSON.parse(before.json), jwks, now: NOW }).status).toBe('verified');
    await store.revokeTenantKey(master, 'villa.example', retired[0]!);
    const revoked = verifyOffer({ envelope: JSON.parse(before.json), jwks: await node.publisher.jwks(), now: NOW });
    expect(revoked.code).toBe('kid_not_in_jwks');
    const detail = await store.showTenant('villa.example');
    expect(detail.keys.filter((k) => k.status === 'active')).toHaveLength(1);
  });

  it('master-key rotation re-seals every private key; the old key no longer opens them and the platform refuses it', async () => {
    await store.addTenants(master, [
      { domain: 'villa-one.example', property: sampleProperty(NOW) },
      { domain: 'villa-two.example', property: sampleProperty(NOW) },
    ]);
    const next = newMasterKey();
    expect((await store.rotateMasterKey(master, next)).resealed).toBe(2);
    await expect(store.assertMasterKey(master)).rejects.toMatchObject({ code: 'master_key_mismatch' });
    await expect(openTenantNode(store, 'villa-one.example', [master], { clock })).rejects.toMatchObject({ code: 'key_unseal_failed' });
    const node = await openTenantNode(store, 'villa-one.example', [next], { clock });
    expect((await offerFor(node.publisher, stay, { fresh: true })).ok).toBe(true);
    // A re-run after an interruption converges (nothing left to re-seal).
    expect((await store.rotateMasterKey(master, next)).resealed).toBe(0);
  });

  it('shows each feed with its URL redacted and its sync state; removes a feed by name or URL, with stable codes for bad input', async () => {
    await store.addTenants(master, [{ domain: 'villa.example', property: sampleProperty(NOW) }]);
    const url = 'https://calendar.example/export/private-abc123/basic.ics?token=s3cret';
    await store.addTenantFeeds([
      { domain: 'villa.example', name: 'airbnb', url },
      { domain: 'villa.example', name: 'airbnb-copy', url },
      { domain: 'villa.example', name: 'vrbo', url: 'https://vrbo.example/ical/1.ics' },
    ]);
    const shown = await store.showTenant('villa.example');
    expect(shown.feeds.map((f) => [f.name, f.state, f.last_success_at, f.last_error_code, f.next_due_at])).toEqual([
      ['airbnb', 'stale', null, null, new Date(NOW).toISOString()],
      ['airbnb-copy', 'stale', null, null, new Date(NOW).toISOString()],
      ['vrbo', 'stale', null, null, new Date(NOW).toISOString()],
    ]);
    expect(shown.feeds[0]!.url).toMatch(/^https:\/\/calendar\.example\/… \(url sha256 [0-9a-f]{12}\)$/);
    expect(JSON.stringify(shown)).not.toMatch(/s3cret|private-abc123/);

    const revision = shown.revision;
    const refusals: [string, string, string][] = [
      ['villa.example', url, 'ambiguous_feed'],
      ['villa.example', 'https://calendar.example/other.ics?token=s3cret', 'unknown_feed'],
      ['nobody.example', 'vrbo', 'unknown_tenant'],
    ];
    for (const [domain, feed, code] of refusals) {
      const e = await store.removeTenantFeed(domain, feed).catch((x: unknown) => x);
      expect(e).toMatchObject({ code });
      expect((e as Error).message).not.toContain('s3cret');
    }
    expect((await store.showTenant('villa.example')).revision).toBe(revision);
    expect((await store.showTenant('villa.example')).feeds).toHaveLength(3);

    expect(await store.removeTenantFeed('villa.example', 'airbnb')).toEqual({ name: 'airbnb' });
    expect(await store.removeTenantFeed('villa.example', url)).toEqual({ name: 'airbnb-copy' });
    const after = await store.showTenant('villa.example');
    expect(after.feeds.map((f) => f.name)).toEqual(['vrbo']);
    expect(after.revision).toBe(revision + 2);
  });

  it('activeTenantSnapshots: the enabled tenants among the domains in one statement, and still after a migration adds a column', async () => {
    await store.addTenants(
      master,
      ['villa-one.example', 'villa-two.example', 'villa-off.example'].map((domain) => ({ domain, property: sampleProperty(NOW) })),
    );
    await store.setTenantStatus('villa-off.example', 'disabled');
    const asked = ['villa-one.example', 'villa-two.example', 'villa-off.example', 'unknown.example', 'example'];
    const found = async () =>
      (await store.activeTenantSnapshots(asked))
        .map((s) => ({ domain: s.info.canonical_domain, keys: s.sealed.size, status: s.status }))
        .sort((a, b) => a.domain.localeCompare(b.domain));
    const expected = [
      { domain: 'villa-one.example', keys: 1, status: 'active' },
      { domain: 'villa-two.example', keys: 1, status: 'active' },
    ];
    // On PostgreSQL a named prepared statement: prepared on the pool's connections by the first calls.
    for (let i = 0; i < 3; i++) expect(await found()).toEqual(expected);
    expect(await store.activeTenantSnapshots(['villa-one.example'])).toHaveLength(1);
    // A later version's migration adds a column while this process serves (a rolling upgrade): the prepared lookup keeps working.
    await sql`alter table platform_tenant add column lookup_test_extra text`.execute(store.db);
    for (let i = 0; i < 3; i++) expect(await found()).toEqual(expected);
  });

  it('rejects a property whose url is off the tenant domain, naming the field', async () => {
    const p = { ...sampleProperty(NOW), url: 'https://elsewhere.example/' };
    await expect(store.addTenants(master, [{ domain: 'villa.example', property: p }])).rejects.toMatchObject({ code: 'invalid_property' });
    expect(await store.countTenants()).toBe(0);
  });
});

describe('master key', () => {
  it('never appears in JSON or inspected output; a wrong length is refused', async () => {
    const text = generateMasterKeyText().trim();
    const key = parseMasterKey(text);
    const { inspect } = await import('node:util');
    expect(JSON.stringify(key)).not.toContain(text);
    expect(inspect(key)).not.toContain(key.bytes.toString('hex'));
    expect(() => parseMasterKey('abcd')).toThrow(expect.objectContaining({ code: 'invalid_master_key' }));
  });
});
