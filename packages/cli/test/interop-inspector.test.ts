/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector --cli`), a client people use to try an
 * MCP server, against a vrpkit node, a platform tenant and `vrp gate proxy --listen` in front of the
 * node, on each protocol era the Inspector can choose (`--protocol-era legacy` is 2025-11-25,
 * `modern` is 2026-07-28): `tools/list` shows `get_verified_stay_offer`, and the offer returned by
 * `tools/call` verifies with vrpkit's verifier against the node's own JWKS (issue 32 item 8).
 *
 * The Inspector needs Node >= 22.19: it runs under `VRPKIT_NODE24` from `VRPKIT_MCP_INSPECTOR`
 * (the launcher's `clients/launcher/build/index.js`), both set by `.ci/run`; skips with a note
 * when either is absent.
 */
import { execFile } from 'node:child_process';
import { createHardenedFetch, type HardenedFetch, JwksCache, verifyEnvelopeFromNode } from '@vrpkit/agent';
import { BOUND_TOOL_NAME } from '@vrpkit/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListeningProxy } from './support/gate-proxy.js';
import { clientPreload, modernNode, proxyInFrontOfNode, serveVrpTargets, type VrpTargets } from './support/interop.js';

const inspector = process.env.VRPKIT_MCP_INSPECTOR;
const node = modernNode();
if (!inspector) console.warn('interop-inspector: VRPKIT_MCP_INSPECTOR is unset (the Inspector launcher, .ci/run installs it); not run');
else if (!node) console.warn('interop-inspector: the Inspector needs Node >= 22.19 and VRPKIT_NODE24 is unset; not run');

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const ARGS = { check_in: day(30), check_out: day(33), guests: 2 };
const ERAS = [
  ['legacy', '2025-11-25'],
  ['modern', '2026-07-28'],
] as const;

describe.skipIf(!inspector || !node)('the MCP Inspector CLI', () => {
  let vrp: VrpTargets;
  let proxy: ListeningProxy;
  let fetch: HardenedFetch;
  beforeAll(async () => {
    vrp = await serveVrpTargets();
    proxy = await proxyInFrontOfNode(vrp);
    fetch = createHardenedFetch({ connectTo: vrp.connectTo, ca: vrp.caPems });
  }, 300_000);
  afterAll(async () => {
    await fetch?.close();
    await proxy?.stop();
    await vrp?.close();
  });

  /** One Inspector CLI run (`--format json`): the `result` it prints. `--protocol-era modern` pins 2026-07-28 (no fallback). */
  function inspect(url: string, era: string, args: string[], headers: string[] = []): Promise<Record<string, unknown>> {
    const env = {
      ...process.env,
      // The Inspector reaches the node and the tenant by name with their dev CAs (support/conformance-client.mjs).
      NODE_OPTIONS: `--import ${clientPreload}`,
      VRPKIT_CONFORMANCE_RESOLVE: vrp.resolve.join(','),
      VRPKIT_CONFORMANCE_CA: vrp.caFile,
      NODE_EXTRA_CA_CERTS: vrp.caFile,
    };
    const argv = [inspector as string, '--cli', '--server-url', url, '--transport', 'http', '--protocol-era', era, '--format', 'json'];
    for (const h of headers) argv.push('--header', h);
    return new Promise((resolve, reject) => {
      execFile(node as string, [...argv, ...args], { env, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`inspector ${args.join(' ')}: ${error.message}\n${stderr}`));
        else resolve((JSON.parse(stdout) as { result: Record<string, unknown> }).result);
      });
    });
  }

  /** Where each target is and the headers the Inspector sends it. */
  function target(name: 'node' | 'tenant' | 'proxy'): { url: string; headers: string[] } {
    if (name === 'proxy') return { url: proxy.url, headers: [`Authorization: Bearer ${proxy.token}`] };
    return { url: vrp[name].url, headers: [] };
  }

  describe.each(ERAS)('--protocol-era %s (%s)', (era) => {
    it.each(['node', 'tenant', 'proxy'] as const)(
      '%s: lists the tool, and the offer the call returns verifies',
      async (name) => {
        const { url, headers } = target(name);
        const list = (await inspect(url, era, ['--method', 'tools/list'], headers)) as { tools?: { name: string }[] };
        expect(list.tools?.map((t) => t.name)).toEqual([BOUND_TOOL_NAME]);
        const call = (await inspect(
          url,
          era,
          ['--method', 'tools/call', '--tool-name', BOUND_TOOL_NAME, '--tool-args-json', JSON.stringify(ARGS)],
          headers,
        )) as { isError?: boolean; structuredContent?: unknown };
        expect(call.isError).toBeFalsy();
        const domain = name === 'tenant' ? vrp.tenant.domain : vrp.node.domain;
        const verdict = await verifyEnvelopeFromNode(call.structuredContent, ARGS, { fetch, jwksCache: new JwksCache({ fetch }) });
        expect(verdict).toMatchObject({ canonical_domain: domain, verification: { status: 'verified' } });
      },
      120_000,
    );
  });
});
