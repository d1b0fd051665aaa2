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
import { JwksCache, verifyEnvelopeFromNode } from '@vrpkit/agent';
import { BOUND_TOOL_NAME } from '@vrpkit/protocol';
import { describe, expect, it } from 'vitest';
import { type ClientEndpoint, clientTargetsForFile, modernNode, reachByName } from './support/interop.js';

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
  const targets = clientTargetsForFile();

  /** One Inspector CLI run (`--format json`): the `result` it prints. `--protocol-era modern` pins 2026-07-28 (no fallback). */
  function inspect({ url, authorization }: ClientEndpoint, era: string, args: string[]): Promise<Record<string, unknown>> {
    // The Inspector reaches the node and the tenant by name with their dev CAs.
    const env = { ...process.env, ...reachByName(targets().vrp) };
    const argv = [inspector as string, '--cli', '--server-url', url, '--transport', 'http', '--protocol-era', era, '--format', 'json'];
    if (authorization) argv.push('--header', `Authorization: ${authorization}`);
    return new Promise((resolve, reject) => {
      execFile(node as string, [...argv, ...args], { env, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`inspector ${args.join(' ')}: ${error.message}\n${stderr}`));
        else resolve((JSON.parse(stdout) as { result: Record<string, unknown> }).result);
      });
    });
  }

  describe.each(ERAS)('--protocol-era %s (%s)', (era) => {
    it.each(['node', 'tenant', 'proxy'] as const)(
      '%s: lists the tool, and the offer the call returns verifies',
      async (name) => {
        const endpoint = targets().endpoint(name);
        const list = (await inspect(endpoint, era, ['--method', 'tools/list'])) as { tools?: { name: string }[] };
        expect(list.tools?.map((t) => t.name)).toEqual([BOUND_TOOL_NAME]);
        const callArgs = ['--method', 'tools/call', '--tool-name', BOUND_TOOL_NAME, '--tool-args-json', JSON.stringify(ARGS)];
        const call = (await inspect(endpoint, era, callArgs)) as { isError?: boolean; structuredContent?: unknown };
        expect(call.isError).toBeFalsy();
        const { fetch } = targets();
        const verdict = await verifyEnvelopeFromNode(call.structuredContent, ARGS, { fetch, jwksCache: new JwksCache({ fetch }) });
        expect(verdict).toMatchObject({ canonical_domain: endpoint.domain, verification: { status: 'verified' } });
      },
      120_000,
    );
  });
});
