/**
 * The node-surface vectors under examples/conformance/node/, replayed offline by `vrp conformance
 * --vectors`: every rule gets its expected verdict, every broken node's vector expects exactly one
 * failing rule (the one its name says), and a recording edited to break another rule is reported
 * as a mismatch (exit 1) rather than passing.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeVector } from '@vrpkit/conformance';
import { repoRoot, runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it } from 'vitest';

const VECTORS = join(repoRoot, 'examples/conformance/node');
const files = readdirSync(VECTORS).filter((n) => n.endsWith('.json'));
const load = (f: string) => JSON.parse(readFileSync(join(VECTORS, f), 'utf8')) as NodeVector;
const dir = mkdtempSync(join(tmpdir(), 'vrpkit-node-vectors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('node-surface vectors', () => {
  it('one conforming node and at least 12 broken ones, each broken one expecting exactly one failing rule', () => {
    expect(files.length).toBeGreaterThanOrEqual(13);
    for (const f of files) {
      const v = load(f);
      const failing = [
        ...new Set(
          Object.entries(v.expected)
            .filter(([, s]) => s === 'fail')
            .map(([k]) => k.split('@')[0]),
        ),
      ];
      if (f.startsWith('00-')) expect(Object.values(v.expected).every((s) => s === 'pass')).toBe(true);
      else {
        expect(failing).toHaveLength(1);
        expect(f).toContain((failing[0] as string).replace(/\./g, '-'));
      }
    }
  });

  it('vrp conformance --vectors replays every vector offline with the expected verdicts (exit 0)', async () => {
    const r = await runVrpInProcess(['conformance', '--vectors', VECTORS, '--json']);
    const out = JSON.parse(r.stdout) as { vector: string; matches: boolean; mismatches: unknown[] }[];
    expect(out.map((o) => o.vector)).toEqual(files.sort());
    expect(out.filter((o) => !o.matches)).toEqual([]);
    expect(r.code).toBe(0);
  }, 120_000);

  it('a recording edited to drop the JWKS cache header no longer matches its expectation (exit 1)', async () => {
    const v = load('00-conforming-node.json');
    for (const e of v.exchanges) if (e.request.url.endsWith('/.well-known/jwks.json')) delete e.response.headers['cache-control'];
    writeFileSync(join(dir, 'edited.json'), JSON.stringify(v));
    const r = await runVrpInProcess(['conformance', '--vectors', dir]);
    expect(r.stdout).toContain('MISMATCH edited.json');
    expect(r.stdout).toContain('core-3.1.jwks-cache: expected pass, observed fail');
    expect(r.code).toBe(1);
  }, 60_000);

  it('refuses a directory without vectors, and a target together with --vectors (exit 64)', async () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    expect((await runVrpInProcess(['conformance', '--vectors', empty])).stderr).toContain('error[vectors_empty]');
    const both = await runVrpInProcess(['conformance', 'https://node.example', '--vectors', VECTORS]);
    expect(both.code).toBe(64);
    expect(both.stderr).toContain('error[conflicting_options]');
  });
});
