/**
 * A platform tenant is a full VRP node on its own origin (Node Tool Binding §14): the node checker
 * judges it exactly as it judges a single-domain node, and it passes every rule on every surface
 * it exposes. Real `servePlatform` with dev TLS over a SQLite tenant store; MCP and A2A, and the
 * WebMCP page in Chromium when `VRPKIT_CHROMIUM` names one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkNode, failedRules } from '@vrpkit/conformance';
import { sampleProperty } from '@vrpkit/node';
import { generateMasterKeyText, PlatformStore, parseMasterKey, type ServedPlatform, servePlatform } from '@vrpkit/platform';
import { hasChromium } from '@vrpkit/testkit/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const TENANT = 'villa-one.example';
const NOW = Date.now();
const day = (n: number) => new Date(NOW + n * 86_400_000).toISOString().slice(0, 10);
const BROWSER = hasChromium('conformance of a platform tenant (its WebMCP surface)');

describe('vrp conformance on a platform tenant', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-conformance-platform-'));
  const master = parseMasterKey(generateMasterKeyText());
  let store: PlatformStore;
  let served: ServedPlatform;
  beforeAll(async () => {
    store = await PlatformStore.open(`sqlite:${join(tmp, 'platform.sqlite')}`);
    await store.init(master, 'platform.example');
    await store.addTenants(master, [{ domain: TENANT, property: sampleProperty(NOW) }]);
    served = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, 'dev-tls') } });
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    await store?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('passes every rule, with the same checker and rule ids as a single-domain node', async () => {
    const report = await checkNode(TENANT, {
      network: { connectTo: [`${TENANT}:443:127.0.0.1:${served.port}`], ca: [served.caPem!] },
      args: { check_in: day(31), check_out: day(34), guests: 2 },
      ...(BROWSER ? {} : { surfaces: ['mcp', 'a2a'] as const }),
    });
    expect(failedRules(report)).toEqual([]);
    expect(report.results.filter((r) => r.status !== 'pass')).toEqual([]);
    expect(report.conforms).toBe(true);
    expect(report.surfaces.filter((s) => s.exposed).map((s) => s.surface)).toEqual(BROWSER ? ['mcp', 'a2a', 'webmcp'] : ['mcp', 'a2a']);
  }, 120_000);
});
