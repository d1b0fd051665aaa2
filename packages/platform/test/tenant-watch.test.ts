/**
 * What a serving process's watch (tenant-watch.ts) makes of each kind of tenant write on
 * PostgreSQL: any write ends serving the kept state from memory; only a write that can take a
 * signing key away (a key row changed, the status changed, migration 0007's `keys:{domain}`) holds
 * back signatures with a state read before it. A hold or a calendar change racing a guest's
 * confirmation then no longer refuses the confirmation's signature (503 `tenant_state_stale`).
 */
import { sampleProperty } from '@vrpkit/node';
import type { PlatformStore } from '@vrpkit/platform';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StateMark, TENANT_STATE_LEASE_MS, TenantWatch } from '../src/tenant-watch.js';
import { bump } from '../src/tenants.js';
import { newMasterKey, openInitialised } from './helpers.js';

const pgs = pgTestSchemas('platform tenant-watch', 'the kinds of tenant write a serving process tells apart');
const DOMAIN = 'watch-a.example';

describe.skipIf(!pgs)('a serving process tells a key write from any other write (PostgreSQL)', () => {
  const master = newMasterKey();
  let store: PlatformStore;
  let watch: TenantWatch;

  beforeAll(async () => {
    store = await openInitialised(pgs!.schemaUrl('watch'), master);
    await store.addTenants(master, [{ domain: DOMAIN, property: sampleProperty(Date.now()) }]);
    watch = await TenantWatch.open(store.target);
    while (!watch.listening()) await new Promise((r) => setTimeout(r, 20));
  });
  afterAll(async () => {
    await watch?.close();
    await store?.close();
  });

  /** A state read long enough ago that only the listener's confirmations can keep it signable. */
  const readLongAgo = (): StateMark => ({ ...watch.mark(), at: performance.now() - TENANT_STATE_LEASE_MS - 1000 });

  /** Run `write`, then wait until its notifications have arrived (a listener confirmation started after the commit). */
  async function committed(write: () => Promise<unknown>): Promise<void> {
    await write();
    const after = watch.mark();
    // Another domain's confirmation: the listener's, of everything committed before it started (this tenant's is -Infinity once notified).
    while (watch.confirmedAt('never-written.example', after) <= after.at) await new Promise((r) => setTimeout(r, 20));
  }

  it('a state read before a write that cannot take a key away is stale but still signs; one before a key write does not', async () => {
    let m = readLongAgo();
    await committed(async () => {});
    expect({ memory: watch.servesFromMemory(DOMAIN, m), signs: watch.signable(DOMAIN, m) }).toEqual({ memory: true, signs: true });

    // A hold, a session, a calendar sync: the revision bumped, nothing else of the tenant's row or keys.
    await committed(() => store.db.transaction().execute((tx) => bump(tx, DOMAIN, Date.now())));
    expect({ memory: watch.servesFromMemory(DOMAIN, m), signs: watch.signable(DOMAIN, m) }).toEqual({ memory: false, signs: true });

    // A key rotation (the same trigger fires for a revocation and a master-key reseal): the keys read before are not signed with.
    m = readLongAgo();
    await committed(() => store.rotateTenantKey(master, DOMAIN));
    expect({ memory: watch.servesFromMemory(DOMAIN, m), signs: watch.signable(DOMAIN, m) }).toEqual({ memory: false, signs: false });
    // A state read now (after the write) signs again.
    expect(watch.signable(DOMAIN, watch.mark())).toBe(true);

    // A status change (a disable) holds signatures back; a row update leaving the status alone does not.
    m = readLongAgo();
    await committed(() => store.db.updateTable('platform_tenant').set({ status: sql`status` }).where('domain', '=', DOMAIN).execute());
    expect(watch.signable(DOMAIN, m)).toBe(true);
    await committed(() => store.db.updateTable('platform_tenant').set({ status: 'disabled' }).where('domain', '=', DOMAIN).execute());
    expect(watch.signable(DOMAIN, m)).toBe(false);
  });
});
