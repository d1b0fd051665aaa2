/**
 * `vrp conformance https://DOMAIN` (Node Tool Binding §10) as a real child process against a
 * real https node: a conforming node exits 0 with one capability name on all three surfaces;
 * an unreachable node is unknown (exit 2), never a pass; bad usage exits 64.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOUND_TOOL_NAME } from '@vrpkit/protocol';
import { hasChromium } from '@vrpkit/testkit/browser';
import { runVrp } from '@vrpkit/testkit/cli';
import { day, startNode, type TestNode } from '@vrpkit/testkit/surfaces';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'conformance-cli.example';
const BROWSER = hasChromium('cli conformance');
let dir: string;
let node: TestNode;
let caFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-conformance-cli-'));
  node = await startNode(DOMAIN, dir);
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, node.ca.certPem);
}, 60_000);

afterAll(async () => {
  await node?.node.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('vrp conformance', () => {
  it('reports a conforming node: three reads, one string, exit 0', async ({ skip }) => {
    skip(!BROWSER);
    const r = await runVrp(
      [
        'conformance',
        `https://${DOMAIN}`,
        '--check-in',
        day(40),
        '--check-out',
        day(43),
        '--guests',
        '2',
        '--connect-to',
        node.connectTo,
        '--cacert',
        caFile,
        '--json',
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout);
    expect(report.names).toMatchObject({ mcp: [BOUND_TOOL_NAME], a2a: [BOUND_TOOL_NAME], webmcp: [BOUND_TOOL_NAME], one_string: 'pass' });
    expect(report.conforms).toBe(true);
    expect(r.code).toBe(0);
  }, 150_000);

  it('calls an unreachable node unknown (exit 2), never conforming', async () => {
    // Dial a port nothing listens on: every read fails, so every check is unknown.
    const r = await runVrp(
      ['conformance', `https://${DOMAIN}`, '--connect-to', `${DOMAIN}:443:127.0.0.1:9`, '--cacert', caFile, '--json'],
      {
        timeoutMs: 120_000,
      },
    );
    const report = JSON.parse(r.stdout);
    expect(report.conforms).toBe(false);
    expect(report.names.one_string).toBe('unknown');
    expect(r.code).toBe(2);
  }, 150_000);

  it('refuses a target that is not a node origin (exit 64)', async () => {
    const r = await runVrp(['conformance', 'https://conformance-cli.example:8443/path']);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('error[invalid_target]');
  });
});
