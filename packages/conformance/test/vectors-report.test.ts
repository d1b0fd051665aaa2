/**
 * `vrp conformance vectors`: vrpkit's verifier over the official offer and receipt corpora, written
 * as a VRP conformance-report-v0.1 that validates against the official schema. The offer report
 * matches the published reference report vector for vector (same corpus digest, outcomes,
 * observations and control); a corpus whose control the verifier does not reject does not
 * discriminate and publishes no aggregate.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConformanceReport } from '@vrpkit/conformance';
import { officialSchema } from '@vrpkit/protocol';
import { repoRoot, runVrpInProcess } from '@vrpkit/testkit/cli';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const validate = new Ajv2020({ strict: false, allErrors: true }).compile(officialSchema('conformanceReport'));
const OFFER = join(repoRoot, 'examples/conformance/offer');
const RECEIPT = join(repoRoot, 'packages/agent/fixtures/receipt');
const REFERENCE = JSON.parse(
  readFileSync(join(repoRoot, 'examples/conformance/reports/offer.reference-verifier.v0.1.json'), 'utf8'),
) as ConformanceReport;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-vectors-report-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function report(args: string[]): Promise<{ code: number; report: ConformanceReport; stderr: string }> {
  const file = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
  const r = await runVrpInProcess(['conformance', 'vectors', ...args, '--report', file]);
  return { code: r.code, stderr: r.stderr, report: JSON.parse(readFileSync(file, 'utf8')) as ConformanceReport };
}

describe('vrp conformance vectors', () => {
  it('the official offer corpus: a schema-valid report that matches the reference report', async () => {
    const { code, report: r, stderr } = await report(['--corpus', OFFER, '--corpus-path', 'examples/conformance/offer']);
    expect(validate(r), JSON.stringify(validate.errors)).toBe(true);
    expect(code).toBe(0);
    expect(stderr).toContain('5/5 vectors as expected; discriminates: true');
    expect(r.corpus.digest.value).toBe(REFERENCE.corpus.digest.value);
    expect(r.results).toEqual(REFERENCE.results);
    expect(r.must_fail_controls.map(({ note: _n, ...c }) => c)).toEqual(REFERENCE.must_fail_controls.map(({ note: _n, ...c }) => c));
    expect(r.discriminates).toBe(true);
    expect(r.aggregate).toEqual(REFERENCE.aggregate);
    // The engine is identified by a digest of the code that ran.
    expect(r.engine.digest?.value).toMatch(/^[0-9a-f]{64}$/);
    expect(r.run_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('the official receipt corpus: every vector as expected, the tampered one a rejected control', async () => {
    const { code, report: r } = await report(['--corpus', RECEIPT, '--corpus-path', 'examples/conformance/receipt']);
    expect(validate(r), JSON.stringify(validate.errors)).toBe(true);
    expect(code).toBe(0);
    expect(r.results.map((x) => [x.vector.split('/').pop(), x.outcome])).toEqual([
      ['01-offer-transport-verified.json', 'pass'],
      ['02-partial-payment-unverifiable.json', 'reject-as-required'],
      ['03-tampered-signature.json', 'reject-as-required'],
      ['04-expired-window.json', 'reject-as-required'],
      ['05-unsupported-version.json', 'reject-as-required'],
      ['06-malformed-empty-attestations.json', 'reject-as-required'],
      ['07-unparseable-validity-window.json', 'reject-as-required'],
    ]);
    for (const x of r.results) expect(x.observed).toEqual(x.expected);
    expect(r.must_fail_controls).toMatchObject([
      { vector: 'examples/conformance/receipt/03-tampered-signature.json', observed: 'reject-as-required' },
    ]);
  });

  it('a control the verifier accepts makes the report non-discriminating, with no aggregate (exit 1)', async () => {
    const corpus = join(dir, 'lying-corpus');
    rmSync(corpus, { recursive: true, force: true });
    mkdirSync(corpus);
    for (const f of readdirSync(OFFER)) copyFileSync(join(OFFER, f), join(corpus, f));
    // Declare the valid vector a must-fail control: the verifier (rightly) accepts it.
    const { code, report: r } = await report(['--corpus', corpus, '--control', '01-valid-fresh.json']);
    expect(validate(r), JSON.stringify(validate.errors)).toBe(true);
    expect(r.must_fail_controls).toMatchObject([{ vector: `${corpus}/01-valid-fresh.json`, observed: 'pass' }]);
    expect(r.discriminates).toBe(false);
    expect(r.aggregate).toBeUndefined();
    expect(code).toBe(1);
  });

  it('a vector whose expectation the verifier does not meet is inconclusive, never a pass', async () => {
    const corpus = join(dir, 'edited-corpus');
    rmSync(corpus, { recursive: true, force: true });
    mkdirSync(corpus);
    for (const f of readdirSync(OFFER)) copyFileSync(join(OFFER, f), join(corpus, f));
    const v = JSON.parse(readFileSync(join(corpus, '05-wrong-key.json'), 'utf8'));
    v.expected = { verified: true, reason: null, fresh: true };
    writeFileSync(join(corpus, '05-wrong-key.json'), JSON.stringify(v));
    const { code, report: r } = await report(['--corpus', corpus]);
    expect(validate(r)).toBe(true);
    expect(r.results.find((x) => x.vector.endsWith('05-wrong-key.json'))).toMatchObject({
      outcome: 'inconclusive',
      observed: { verified: false, reason: 'signature_mismatch', fresh: null },
    });
    expect(r.corpus.digest.value).not.toBe(REFERENCE.corpus.digest.value);
    expect(code).toBe(1);
  });

  it('refuses a corpus without a must-fail control and an empty directory (exit 64)', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty, { recursive: true });
    const r = await runVrpInProcess(['conformance', 'vectors', '--corpus', empty]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('error[corpus_empty]');
    const noControl = join(dir, 'no-control');
    mkdirSync(noControl, { recursive: true });
    copyFileSync(join(OFFER, '01-valid-fresh.json'), join(noControl, '01-valid-fresh.json'));
    const n = await runVrpInProcess(['conformance', 'vectors', '--corpus', noControl]);
    expect(n.code).toBe(64);
    expect(n.stderr).toContain('error[no_control]');
  });
});
