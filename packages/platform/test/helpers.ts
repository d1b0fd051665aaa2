/**
 * Setup the platform tests share: a temporary folder removed after the file's tests, database
 * URLs (a SQLite file; PostgreSQL schemas come from testkit's `pgTestSchemas`), a fresh master key, a platform
 * store opened and initialised under it, an https GET to one tenant of a served platform
 * (SNI and Host set to the tenant, the platform's CA trusted).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '@vrpkit/core';
import { generateMasterKeyText, type MasterKey, PlatformStore, parseMasterKey, type ServedPlatform, servePlatform } from '@vrpkit/platform';
import { afterAll } from 'vitest';

/** A temporary folder, removed once the calling file's tests are done. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `vrpkit-${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export const newMasterKey = (): MasterKey => parseMasterKey(generateMasterKeyText());

export const sqliteUrl = (dir: string, name: string): string => `sqlite:${join(dir, `${name}.sqlite`)}`;

/** A platform store at `url`, initialised under `master` (`vrp platform init`). */
export async function openInitialised(
  url: string,
  master: MasterKey,
  o: { clock?: Clock; operatorDomain?: string | null; poolSize?: number } = {},
): Promise<PlatformStore> {
  const store = await PlatformStore.open(url, { ...(o.clock ? { clock: o.clock } : {}), ...(o.poolSize ? { poolSize: o.poolSize } : {}) });
  try {
    await store.init(master, o.operatorDomain ?? null);
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}

/**
 * GET `path` from tenant `domain` of a platform served on 127.0.0.1:`port`: SNI and Host name the
 * tenant (`o.host`: another Host), a fresh connection each time unless `keepAlive`.
 */
export function tenantGet(
  port: number,
  ca: string,
  domain: string,
  path: string,
  o: { keepAlive?: boolean; host?: string } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        servername: domain,
        ca,
        path,
        headers: { host: o.host ?? domain },
        ...(o.keepAlive ? {} : { agent: false }),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * `store`'s tenants served over https (dev CA under `dir`) on `clock`, mailing guests' codes through
 * the SMTP server at `smtpUrl`. Every test client is 127.0.0.1: no per-address booking limits.
 */
export function serveBookingPlatform(
  store: PlatformStore,
  master: MasterKey,
  dir: string,
  clock: Clock,
  smtpUrl: string,
): Promise<ServedPlatform> {
  return servePlatform({
    store,
    masterKeys: [master],
    tls: { kind: 'dev', dir: join(dir, 'dev-tls') },
    clock,
    guestMail: { url: smtpUrl },
    bookings: { rateLimitPerMinute: 100_000, holdsPerDay: 0 },
    onError: () => {},
  });
}
