/**
 * `vrp verify --via all` and `vrp conformance` on a machine without Chromium, against a real node:
 * the WebMCP surface is reported as `browser_unavailable` (naming the path tried and
 * `VRPKIT_CHROMIUM`), the three surfaces that did verify keep their rows, nothing crashes, and no
 * browser temp directory is left behind. The child gets its own temp folder (`TMPDIR`), so what a
 * launch leaves there is this test's alone.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOUND_TOOL_NAME } from '@vrpkit/protocol';
import { runVrp, runVrpInProcess } from '@vrpkit/testkit/cli';
import { day, startNode, type TestNode } from '@vrpkit/testkit/surfaces';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'no-browser.example';
const MISSING = '/nonexistent/chromium';
let dir: string;
let childTmp: string;
let node: TestNode;
let reach: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-no-browser-'));
  childTmp = mkdtempSync(join(tmpdir(), 'vrpkit-no-browser-tmp-'));
  node = await startNode(DOMAIN, dir);
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, node.ca.certPem);
  reach = ['--connect-to', node.connectTo, '--cacert', caFile];
}, 60_000);

afterAll(async () => {
  await node?.node.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(childTmp, { recursive: true, force: true });
});

const withoutBrowser = (args: string[]) =>
  runVrp(args, { timeoutMs: 120_000, env: { ...process.env, VRPKIT_CHROMIUM: MISSING, TMPDIR: childTmp } });
const browserLeftovers = () => readdirSync(childTmp).filter((n) => n.startsWith('playwright'));

describe('without Chromium', () => {
  it('vrp verify --via all keeps the three surfaces that verified and reports WebMCP as browser_unavailable (exit 2, no internal_error)', async () => {
    const r = await withoutBrowser([
      'verify',
      `https://${DOMAIN}`,
      '--check-in',
      day(40),
      '--check-out',
      day(43),
      '--guests',
      '2',
      ...reach,
      '--via',
      'all',
      '--json',
    ]);
    expect(r.stderr).not.toMatch(/internal_error|\n\s+at /);
    const out = JSON.parse(r.stdout) as {
      surfaces: { surface: string; tool_name: string | null; safe_to_quote: boolean; error: { code: string; message: string } | null }[];
      exit_code: number;
    };
    expect(out.surfaces.map((s) => [s.surface, s.safe_to_quote])).toEqual([
      ['http', true],
      ['mcp', true],
      ['a2a', true],
      ['webmcp', false],
    ]);
    expect(out.surfaces.slice(1, 3).map((s) => s.tool_name)).toEqual([BOUND_TOOL_NAME, BOUND_TOOL_NAME]);
    const webmcp = out.surfaces[3];
    expect(webmcp?.error?.code).toBe('browser_unavailable');
    expect(webmcp?.error?.message).toContain(MISSING);
    expect(webmcp?.error?.message).toContain('VRPKIT_CHROMIUM');
    // Fail closed: a surface that could not be read is unknown, never safe.
    expect([out.exit_code, r.code]).toEqual([2, 2]);
    expect(browserLeftovers()).toEqual([]);
  }, 150_000);

  it('vrp conformance reports the WebMCP surface unknown with the reason, without a stack trace (exit 2)', async () => {
    const r = await withoutBrowser(['conformance', `https://${DOMAIN}`, ...reach]);
    expect(r.stderr).not.toMatch(/internal_error|\n\s+at /);
    expect(r.stdout).toMatch(/^mcp exposed/m);
    expect(r.stdout).toMatch(/^webmcp unknown/m);
    expect(r.stdout).toMatch(/^ {2}unknown +ntb-3\.name +no executable Chromium at/m);
    expect(r.stdout).toContain(`no executable Chromium at ${MISSING}: install Debian's chromium or set VRPKIT_CHROMIUM`);
    expect(r.stdout).toMatch(/DOES NOT CONFORM\n$/);
    expect(r.code).toBe(2);
    expect(browserLeftovers()).toEqual([]);
  }, 150_000);

  it('the help of both commands says they run Chromium and read VRPKIT_CHROMIUM', async () => {
    for (const command of ['verify', 'conformance']) {
      const r = await runVrpInProcess([command, '--help']);
      expect(r.stdout.replace(/\s+/g, ' ')).toMatch(/Chromium from \$VRPKIT_CHROMIUM, else \/usr\/bin\/chromium/);
    }
  }, 60_000);
});
