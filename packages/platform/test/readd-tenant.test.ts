/**
 * A tenant removed and added again under the same domain is a new tenant (new property, new
 * signing key): a running server must serve the new one from its next request on — its JWKS,
 * its property and offers signed by its key — never the removed tenant's cached state or cached
 * signed offers (Core VRP v0.1 §3: the JWKS is the key set the node signs with). Real SQLite,
 * real https.
 */
import { join } from 'node:path';
import { sampleProperty } from '@vrpkit/node';
import type { PlatformStore, ServedPlatform } from '@vrpkit/platform';
import { servePlatform } from '@vrpkit/platform';
import { OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMasterKey, openInitialised, sqliteUrl, tempDir, tenantGet } from './helpers.js';

const master = newMasterKey();
const NOW = Date.now();
const DOMAIN = 'readd.example';
const tmp = tempDir('platform-readd');
const d = (n: number) => new Date(NOW + n * 86_400_000).toISOString().slice(0, 10);
const stayQuery = `check_in=${d(20)}&check_out=${d(23)}&guests=2`;

const get = (port: number, ca: string, path: string) => tenantGet(port, ca, DOMAIN, path);

describe('platform serve: a tenant removed and added again', () => {
  let store: PlatformStore;
  let served: ServedPlatform;
  let ca: string;
  beforeAll(async () => {
    store = await openInitialised(sqliteUrl(tmp, 'p'), master, { operatorDomain: 'platform.example' });
    served = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, 'dev-tls') } });
    ca = served.caPem!;
  });
  afterAll(async () => {
    await served?.close();
    await store?.close();
  });

  it('serves the new tenant’s key, property and offers, not the removed one’s', async () => {
    const first = sampleProperty(NOW);
    await store.addTenants(master, [{ domain: DOMAIN, property: { ...first, name: 'First Owner Villa' } }]);
    const jwks1 = (await get(served.port, ca, '/.well-known/jwks.json')).text;
    const offer1 = await get(served.port, ca, `${OFFER_ENDPOINT_PATH}?${stayQuery}`);
    expect(offer1.status).toBe(200);
    expect(offer1.text).toContain('First Owner Villa');

    await store.removeTenant(DOMAIN);
    expect((await get(served.port, ca, '/.well-known/jwks.json')).status).toBe(421);
    await store.addTenants(master, [{ domain: DOMAIN, property: { ...first, name: 'Second Owner Villa' } }]);

    const jwks2 = (await get(served.port, ca, '/.well-known/jwks.json')).text;
    const offer2 = await get(served.port, ca, `${OFFER_ENDPOINT_PATH}?${stayQuery}`);
    expect(jwks2).not.toBe(jwks1);
    expect(offer2.text).toContain('Second Owner Villa');
    expect(offer2.text).not.toContain('First Owner Villa');
  });

  it('without a request while removed, the next request still serves the new tenant', async () => {
    const jwks1 = (await get(served.port, ca, '/.well-known/jwks.json')).text;
    await store.removeTenant(DOMAIN);
    await store.addTenants(master, [{ domain: DOMAIN, property: { ...sampleProperty(NOW), name: 'Third Owner Villa' } }]);
    const jwks2 = (await get(served.port, ca, '/.well-known/jwks.json')).text;
    const offer = await get(served.port, ca, `${OFFER_ENDPOINT_PATH}?${stayQuery}`);
    expect(jwks2).not.toBe(jwks1);
    expect(offer.text).toContain('Third Owner Villa');
  });
});
