/**
 * `vrp verify https://DOMAIN … --via …` (issue 4 §7) as a real child process against a real
 * https node: the side-by-side table, the JSON rows, and the weakest-surface exit status —
 * including an operator's MCP surface on another domain that relays the node's offer.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { createDevCa } from '@vrpkit/node';
import { BOUND_TOOL_NAME, type OfferEnvelope } from '@vrpkit/protocol';
import { hasChromium } from '@vrpkit/testkit/browser';
import { runVrp } from '@vrpkit/testkit/cli';
import { day, mcpApp, serveSurface, startNode, type TestNode, type TestSurface, textResult, tool } from '@vrpkit/testkit/surfaces';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'via.example';
const OPERATOR = 'relay-operator.example';
const ARGS = { check_in: day(32), check_out: day(35), guests: 2 };
const BROWSER = hasChromium('cli verify --via');

let dir: string;
let node: TestNode;
let operator: TestSurface;
let relay: HardenedFetch;
let caFile: string;

const vrp = (...args: string[]) => runVrp(args);

const common = () => [
  '--check-in',
  ARGS.check_in,
  '--check-out',
  ARGS.check_out,
  '--guests',
  String(ARGS.guests),
  '--connect-to',
  node.connectTo,
  '--connect-to',
  operator.connectTo,
  '--cacert',
  caFile,
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-verify-via-'));
  node = await startNode(DOMAIN, dir);
  relay = createHardenedFetch({ connectTo: [node.connectTo], ca: node.ca.certPem });
  const operatorCa = await createDevCa({ commonName: 'operator test CA' });
  operator = await serveSurface(
    OPERATOR,
    operatorCa,
    mcpApp([tool(BOUND_TOOL_NAME)], async (_n, args) => {
      const q = new URLSearchParams(Object.entries(args).map(([k, v]) => [k, String(v)]));
      return textResult((await (await relay(`https://${DOMAIN}/api/verified-stay-offer?${q}`)).json()) as OfferEnvelope);
    }),
  );
  caFile = join(dir, 'cas.pem');
  writeFileSync(caFile, `${node.ca.certPem}\n${operatorCa.certPem}`);
});

afterAll(async () => {
  await operator?.close();
  await relay?.close();
  await node?.node.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('vrp verify --via', () => {
  it('--via all --json: four rows, every one the node’s own voice, verified and safe; exit 0', async ({ skip }) => {
    skip(!BROWSER);
    const r = await vrp('verify', `https://${DOMAIN}`, ...common(), '--via', 'all', '--json');
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as {
      exit_code: number;
      surfaces: {
        surface: string;
        tool_name: string | null;
        origin_bound: boolean;
        classification: string;
        safe_to_quote: boolean;
        verification: { status: string };
      }[];
    };
    expect(
      out.surfaces.map((s) => [s.surface, s.tool_name, s.origin_bound, s.classification, s.verification.status, s.safe_to_quote]),
    ).toEqual([
      ['http', null, true, 'node_tool', 'verified', true],
      ['mcp', BOUND_TOOL_NAME, true, 'node_tool', 'verified', true],
      ['a2a', BOUND_TOOL_NAME, true, 'node_tool', 'verified', true],
      ['webmcp', BOUND_TOOL_NAME, true, 'node_tool', 'verified', true],
    ]);
    expect(out.exit_code).toBe(0);
    expect(r.code).toBe(0);
  }, 120_000);

  it('--via mcp prints the table row', async () => {
    const r = await vrp('verify', `https://${DOMAIN}`, ...common(), '--via', 'mcp');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^surface\s+reached\s+tool name\s+origin bound\s+verified\s+safe to quote\s+total\s+classification$/);
    expect(lines[3]).toMatch(new RegExp(`^mcp\\s+yes\\s+${BOUND_TOOL_NAME}\\s+yes\\s+verified\\s+YES\\s+[0-9.]+ SEK\\s+node_tool$`));
  }, 60_000);

  it("an operator's MCP surface relaying the node's offer verifies but is not the node's voice: exit 1", async () => {
    const r = await vrp('verify', `https://${OPERATOR}`, ...common(), '--via', 'mcp', '--json');
    const out = JSON.parse(r.stdout) as {
      exit_code: number;
      surfaces: { classification: string; canonical_domain: string; safe_to_quote: boolean; verification: { status: string } }[];
    };
    expect(out.surfaces[0]).toMatchObject({
      classification: 'operator_tool',
      canonical_domain: DOMAIN,
      safe_to_quote: false,
      verification: { status: 'verified' },
    });
    expect(r.code).toBe(1);
  }, 60_000);

  it('an unknown surface is a usage error (exit 64)', async () => {
    const r = await vrp('verify', `https://${DOMAIN}`, ...common(), '--via', 'smtp');
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/expected one of http, mcp, a2a, webmcp, all/);
  }, 60_000);
});
