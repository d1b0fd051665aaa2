/**
 * `vrp platform serve --workers 2` through the real CLI: two processes serve every tenant on one
 * port; the primary's admin listener sums both workers' metrics; a tenant disabled by another
 * process is gone from both workers at their next request (each request reads the tenant's head
 * row), and SIGTERM stops the primary and both workers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleProperty } from '@vrpkit/node';
import { generateMasterKeyText, PlatformStore, parseMasterKey } from '@vrpkit/platform';
import { listeningEvent, vrpCli } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Three processes start under tsx on a shared 2-core machine.
vi.setConfig({ testTimeout: 90_000 });
const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-platform-workers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const NOW = Date.now();
const TENANTS = ['villa-a.example', 'villa-b.example'];
const stay = (() => {
  const d = (n: number) => new Date(NOW + n * 86_400_000).toISOString().slice(0, 10);
  return `check_in=${d(20)}&check_out=${d(23)}&guests=2`;
})();

/** One request on its own connection: the primary hands each new connection to the next worker. */
function get(port: number, ca: string, domain: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, servername: domain, ca, path, headers: { host: domain }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A metric's value in Prometheus text, or undefined. */
const metric = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('vrp platform serve --workers', () => {
  it('two workers serve every tenant; /metrics sums them; a disable is seen by both at their next request', async () => {
    const keyText = generateMasterKeyText();
    const keyFile = join(tmp, 'master.key');
    writeFileSync(keyFile, keyText, { mode: 0o600 });
    const master = parseMasterKey(keyText);
    const url = `sqlite:${join(tmp, 'platform.sqlite')}`;
    const store = await PlatformStore.open(url);
    try {
      await store.init(master, null);
      await store.addTenants(
        master,
        TENANTS.map((domain) => ({ domain, property: sampleProperty(NOW) })),
      );
      const run = vrpCli([
        'platform',
        'serve',
        '--database-url',
        url,
        '--master-key-file',
        keyFile,
        '--dev',
        join(tmp, 'dev'),
        '--admin-listen',
        '127.0.0.1:0',
        '--workers',
        '2',
        '--json',
      ]);
      // The platform's listening event: the node's fields plus the admin listener's port.
      const first = (await listeningEvent(run)) as Awaited<ReturnType<typeof listeningEvent>> & { admin_port: number };
      expect(first).toMatchObject({ event: 'listening', port: expect.any(Number), workers: 2, admin_port: expect.any(Number) });
      const pids = first.worker_pids ?? [];
      expect(new Set(pids).size).toBe(2);
      expect(pids.every(alive)).toBe(true);
      const ca = readFileSync(first.ca, 'utf8');
      const scrape = async () => (await fetch(`http://127.0.0.1:${first.admin_port}/metrics`)).text();

      // Four connections per tenant: each worker serves each tenant, so each worker has loaded both.
      for (const domain of TENANTS)
        for (let i = 0; i < 4; i++) expect(await get(first.port, ca, domain, `/api/verified-stay-offer?${stay}`)).toBe(200);
      let text = await scrape();
      expect(metric(text, 'vrp_platform_tenants_loaded')).toBe(4); // 2 tenants × 2 workers
      expect(metric(text, 'vrp_platform_requests_total{surface="offer",status="2xx"}')).toBe(8);
      expect(metric(text, 'vrp_platform_tenants{status="active"}')).toBe(2); // a database count, not summed
      expect(metric(text, 'vrp_platform_signatures_total')).toBeGreaterThanOrEqual(2);

      // Disabled by another process: both workers refuse it at their next request, and drop it.
      await store.setTenantStatus(TENANTS[0]!, 'disabled');
      for (let i = 0; i < 4; i++) expect(await get(first.port, ca, TENANTS[0]!, `/api/verified-stay-offer?${stay}`)).toBe(421);
      expect(await get(first.port, ca, TENANTS[1]!, `/api/verified-stay-offer?${stay}`)).toBe(200);
      text = await scrape();
      expect(metric(text, 'vrp_platform_tenants_loaded')).toBe(2);
      expect(metric(text, 'vrp_platform_misdirected_total{reason="unknown_host"}')).toBe(4);

      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(run.stderr()).toBe('');
      expect(pids.some(alive)).toBe(false);
    } finally {
      await store.close();
    }
  });
});
