/**
 * What a SQLite serving process reads per request (tenant-node.ts `TenantSource.liveNow`): its
 * tenant's head only once something was written since the head was last read (the store's commit
 * counter, tenants.ts `commitCounterNow`, rechecked once a millisecond at most as the node's
 * revision). A write by another process is then honoured within `REVISION_RECHECK_MS`, a hold
 * this process wrote at once, and `disable` by the time it returns.
 */
import { REVISION_RECHECK_MS, sampleProperty } from '@vrpkit/node';
import type { PlatformStore } from '@vrpkit/platform';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TenantSource } from '../src/tenant-node.js';
import { TenantWatch } from '../src/tenant-watch.js';
import { SQLITE_INVALIDATION_WINDOW_MS } from '../src/tenants.js';
import { newMasterKey, openInitialised, sqliteUrl, tempDir } from './helpers.js';

const DOMAIN = 'source-a.example';
const past = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a SQLite serving process reads a tenant's head only after a write", () => {
  const master = newMasterKey();
  const url = sqliteUrl(tempDir('platform-source'), 'platform');
  /** The serving process's store, and another connection to the same file (another process's, as the CLI's). */
  let store: PlatformStore;
  let other: PlatformStore;

  beforeAll(async () => {
    store = await openInitialised(url, master);
    await store.addTenants(master, [{ domain: DOMAIN, property: sampleProperty(Date.now()) }]);
    other = await openInitialised(url, master);
  });
  afterAll(async () => {
    await other?.close();
    await store?.close();
  });

  /** A source opened as the router opens one (the state its lookup read), and a count of its head reads. */
  async function opened() {
    const watch = new TenantWatch();
    const mark = watch.mark();
    const [snapshot] = await store.activeTenantSnapshots([DOMAIN]);
    const source = new TenantSource(store, DOMAIN, watch, { snapshot: snapshot!, mark });
    const heads = vi.spyOn(store, 'tenantHeadNow');
    heads.mockClear();
    return { watch, source, snapshot: snapshot!, heads };
  }

  it('no head read while nothing is written; one after a hold of its own, at once; another process’s write within the recheck bound', async () => {
    const { watch, source, snapshot, heads } = await opened();
    expect(source.liveNow()).toBe(snapshot);
    expect(heads).toHaveBeenCalledTimes(1);
    // Later requests, the commit counter read again in between: nothing written, so no head read.
    await past(REVISION_RECHECK_MS + 2);
    expect(source.liveNow()).toBe(snapshot);
    expect(source.liveNow()).toBe(snapshot);
    expect(heads).toHaveBeenCalledTimes(1);

    // A hold this process wrote notifies the watch (tenant-bookings.ts): the next request reads the head, at once.
    watch.notify(DOMAIN);
    expect(source.liveNow()).toBe(snapshot);
    expect(heads).toHaveBeenCalledTimes(2);

    // Another connection disables the tenant in SQL (no wait): honoured once the counter is read again.
    await other.db.updateTable('platform_tenant').set({ status: 'disabled' }).where('domain', '=', DOMAIN).execute();
    await past(REVISION_RECHECK_MS + 2);
    expect(source.liveNow()).toBeUndefined();
    await other.db.updateTable('platform_tenant').set({ status: 'active' }).where('domain', '=', DOMAIN).execute();
  });

  it('a write that leaves the revision alone is still looked at: any commit moves the counter', async () => {
    const { source, snapshot, heads } = await opened();
    expect(source.liveNow()).toBe(snapshot);
    await other.db.updateTable('platform_tenant').set({ updated_at: new Date().toISOString() }).where('domain', '=', DOMAIN).execute();
    await past(REVISION_RECHECK_MS + 2);
    expect(source.liveNow()).toBe(snapshot);
    expect(heads).toHaveBeenCalledTimes(2);
  });

  it('another process’s write is honoured once the counter is read again, at most `REVISION_RECHECK_MS` after it; `disable` waits that out', async () => {
    const { source, snapshot } = await opened();
    let now = performance.now();
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      expect(source.liveNow()).toBe(snapshot);
      await other.db.updateTable('platform_tenant').set({ status: 'disabled' }).where('domain', '=', DOMAIN).execute();
      // Within the bound the counter read before the write stands (as the node's revision)…
      now += REVISION_RECHECK_MS / 2;
      expect(source.liveNow()).toBe(snapshot);
      // …and at the bound it is read again.
      now += REVISION_RECHECK_MS / 2;
      expect(source.liveNow()).toBeUndefined();
    } finally {
      clock.mockRestore();
      await other.db.updateTable('platform_tenant').set({ status: 'active' }).where('domain', '=', DOMAIN).execute();
    }
    expect(SQLITE_INVALIDATION_WINDOW_MS).toBeGreaterThan(REVISION_RECHECK_MS);
    const started = performance.now();
    await other.setTenantStatus(DOMAIN, 'disabled');
    expect(performance.now() - started).toBeGreaterThanOrEqual(SQLITE_INVALIDATION_WINDOW_MS - 1);
    await other.setTenantStatus(DOMAIN, 'active');
  });

  it('once `disable` returns, the tenant is no longer served, though its state was confirmed just before', async () => {
    const { source, snapshot } = await opened();
    let state = snapshot;
    for (let i = 0; i < 3; i++) {
      expect(source.liveNow()).toBe(state);
      await other.setTenantStatus(DOMAIN, 'disabled');
      expect(source.liveNow()).toBeUndefined();
      await other.setTenantStatus(DOMAIN, 'active');
      // Enabled again under a new revision: read again as the router would (`live`).
      state = (await source.live())!;
      expect(state.status).toBe('active');
    }
  });
});
