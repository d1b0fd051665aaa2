/**
 * Platform error codes as data: every code comes from `PLATFORM_CODES` with its message template
 * (and, for an answer, its HTTP status); a throw site supplies only the values. Real SQLite, real https.
 */
import { join } from 'node:path';
import { isVrpError } from '@vrpkit/core';
import { sampleProperty } from '@vrpkit/node';
import { PLATFORM_CODES, PlatformError, PlatformStore, type ServedPlatform, servePlatform } from '@vrpkit/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMasterKey, openInitialised, sqliteUrl, tempDir, tenantGet } from './helpers.js';

const tmp = tempDir('platform-errors');

describe('platform error codes', () => {
  it('fills the template from the values and carries the values the table names as details', () => {
    const e = new PlatformError('unknown_tenant', { domain: 'nowhere.example' });
    expect(isVrpError(e)).toBe(true);
    expect(e.toJSON()).toEqual({ code: 'unknown_tenant', message: 'no tenant nowhere.example', details: { domain: 'nowhere.example' } });
    expect(new PlatformError('platform_not_initialized').toJSON()).toEqual({
      code: 'platform_not_initialized',
      message: PLATFORM_CODES.platform_not_initialized.message,
    });
  });

  it('a store refuses what it cannot do with a table code', async () => {
    const master = newMasterKey();
    await expect(PlatformStore.open('mysql://x')).rejects.toMatchObject({ code: 'invalid_database_url' });
    const store = await openInitialised(sqliteUrl(tmp, 'codes'), master);
    try {
      await expect(store.showTenant('nowhere.example')).rejects.toMatchObject({
        code: 'unknown_tenant',
        message: 'no tenant nowhere.example',
        details: { domain: 'nowhere.example' },
      });
      await expect(store.init(newMasterKey(), null)).rejects.toMatchObject({
        code: 'master_key_mismatch',
        message: 'this platform uses another master key than the one given',
      });
    } finally {
      await store.close();
    }
  });

  describe('answers', () => {
    let store: PlatformStore;
    let served: ServedPlatform;
    beforeAll(async () => {
      const master = newMasterKey();
      store = await openInitialised(sqliteUrl(tmp, 'serve'), master);
      await store.addTenants(master, [{ domain: 'villa.example', property: sampleProperty(Date.now()) }]);
      served = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, 'dev-tls') } });
    });
    afterAll(async () => {
      await served?.close();
      await store?.close();
    });

    it('a Host no tenant serves gets 421 with the table message (RFC 9110 §15.5.20)', async () => {
      const r = await tenantGet(served.port, served.caPem!, 'villa.example', '/.well-known/jwks.json', { host: 'nowhere.example' });
      expect(r.status).toBe(PLATFORM_CODES.misdirected_request.status);
      expect(JSON.parse(r.text)).toEqual({
        error: { code: 'misdirected_request', message: PLATFORM_CODES.misdirected_request.message },
      });
    });

    it('a serving process refuses a master key the platform does not use', async () => {
      await expect(
        servePlatform({ store, masterKeys: [newMasterKey()], tls: { kind: 'dev', dir: join(tmp, 'dev-tls') } }),
      ).rejects.toMatchObject({
        code: 'master_key_mismatch',
        message: 'this platform uses another master key than any of those given',
      });
    });
  });
});
