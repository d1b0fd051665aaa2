/**
 * `vrp conformance https://DOMAIN` as a real child process against a real https node: a
 * conforming node exits 0 with every rule passing and a JUnit file CI can read; a surface named
 * explicitly at another URL is read there; an unreachable node is unknown (exit 2), never a pass;
 * bad usage exits 64.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeConformanceReport } from '@vrpkit/conformance';
import { runVrp } from '@vrpkit/testkit/cli';
import { day, startNode, type TestNode } from '@vrpkit/testkit/surfaces';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'conformance-cli.example';
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

const reach = () => ['--connect-to', node.connectTo, '--cacert', caFile];

describe('vrp conformance', () => {
  it('a conforming node: every rule passes, exit 0, one JUnit test case per verdict', async () => {
    const junit = join(dir, 'conformance.xml');
    const r = await runVrp(
      [
        'conformance',
        `https://${DOMAIN}`,
        '--surfaces',
        'mcp,a2a',
        '--check-in',
        day(40),
        '--check-out',
        day(43),
        '--guests',
        '2',
        ...reach(),
        '--json',
        '--junit',
        junit,
      ],
      { timeoutMs: 120_000 },
    );
    const report = JSON.parse(r.stdout) as NodeConformanceReport;
    expect(report.results.filter((x) => x.status !== 'pass')).toEqual([]);
    expect(report.surfaces.map((s) => [s.surface, s.exposed, s.selected])).toEqual([
      ['mcp', true, 'explicit'],
      ['a2a', true, 'explicit'],
    ]);
    expect(report.conforms).toBe(true);
    expect(r.code).toBe(0);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain(`<testsuite name="${DOMAIN}" tests="${report.results.length}" failures="0" errors="0"`);
    expect(xml.match(/<testcase /g)?.length).toBe(report.results.length);
    expect(xml).toContain('classname="Node Tool Binding v0.1 §3" name="ntb-3.name [mcp]"');
  }, 150_000);

  it('reads the MCP surface at --mcp-url and reports a missing one as failing ntb-3.name (exit 1, JUnit failure)', async () => {
    const junit = join(dir, 'missing.xml');
    const r = await runVrp(
      [
        'conformance',
        `https://${DOMAIN}`,
        '--surfaces',
        'mcp',
        '--mcp-url',
        `https://${DOMAIN}/api/mcp`,
        ...reach(),
        '--json',
        '--junit',
        junit,
      ],
      { timeoutMs: 120_000 },
    );
    const report = JSON.parse(r.stdout) as NodeConformanceReport;
    expect(report.surfaces[0]).toMatchObject({ surface: 'mcp', url: `https://${DOMAIN}/api/mcp`, exposed: false });
    expect(report.results.filter((x) => x.status === 'fail').map((x) => x.rule)).toEqual(['ntb-3.name']);
    expect(r.code).toBe(1);
    expect(readFileSync(junit, 'utf8')).toMatch(/name="ntb-3.name \[mcp\]">\s*<failure type="fail"/);
  }, 150_000);

  it('vrp verify --via mcp reads the MCP surface at --mcp-url', async () => {
    const stay = ['--check-in', day(40), '--check-out', day(43), '--guests', '2'];
    const there = await runVrp(
      ['verify', `https://${DOMAIN}`, ...stay, ...reach(), '--via', 'mcp', '--mcp-url', `https://${DOMAIN}/mcp`, '--json'],
      {
        timeoutMs: 120_000,
      },
    );
    const ok = JSON.parse(there.stdout) as { surfaces: { surface_url: string; safe_to_quote: boolean }[] };
    expect(ok.surfaces[0]).toMatchObject({ surface_url: `https://${DOMAIN}/mcp`, safe_to_quote: true });
    expect(there.code).toBe(0);
    const elsewhere = await runVrp(
      ['verify', `https://${DOMAIN}`, ...stay, ...reach(), '--via', 'mcp', '--mcp-url', `https://${DOMAIN}/api/mcp`, '--json'],
      { timeoutMs: 120_000 },
    );
    const missing = JSON.parse(elsewhere.stdout) as { surfaces: { surface_url: string; reached: boolean }[] };
    expect(missing.surfaces[0]).toMatchObject({ surface_url: `https://${DOMAIN}/api/mcp`, reached: false });
    expect(elsewhere.code).toBe(2);
  }, 150_000);

  it('calls an unreachable node unknown (exit 2), never conforming', async () => {
    // Dial a port nothing listens on: every read fails, so every rule is unknown.
    const r = await runVrp(
      ['conformance', `https://${DOMAIN}`, '--connect-to', `${DOMAIN}:443:127.0.0.1:9`, '--cacert', caFile, '--json'],
      {
        timeoutMs: 120_000,
      },
    );
    const report = JSON.parse(r.stdout) as NodeConformanceReport;
    expect(report.conforms).toBe(false);
    expect(report.results.find((x) => x.rule === 'core-2.discovery')?.status).toBe('unknown');
    expect(report.results.filter((x) => x.status !== 'unknown')).toEqual([]);
    expect(r.code).toBe(2);
  }, 150_000);

  it('refuses a target that is not a node origin, and an unknown surface (exit 64)', async () => {
    const r = await runVrp(['conformance', 'https://conformance-cli.example:8443/path']);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('error[invalid_target]');
    const s = await runVrp(['conformance', `https://${DOMAIN}`, '--surfaces', 'mcp,grpc']);
    expect(s.code).toBe(64);
    expect(s.stderr).toContain('expected auto or a list of mcp,a2a,webmcp');
  });
});
