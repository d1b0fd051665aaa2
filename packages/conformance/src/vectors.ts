/**
 * Verifier conformance reports (VRP `conformance-report-v0.1`): run vrpkit's verifier over one
 * vector corpus (a directory of `*.json` vectors) and record, per vector, what was expected and
 * what was observed, with the reproducibility binding the schema asks for: the engine (a digest
 * of the exact code that ran), the corpus digest (the schema's own directory method), the
 * configuration, the environment and the run instant, and at least one must-fail control.
 *
 * Two vector formats are run, both as published with the official corpora:
 * - offer vectors `{name, description, clock, jwks, input, expected:{verified, reason, fresh}}`
 *   through `verifyOffer` (Core VRP v0.1 §9 codes as the reference verifier names them);
 * - receipt vectors `{name, description, now, jwks, receipt, expected}` through `verifyReceipt`
 *   with the vector's inline JWKS (receipt v1 §6).
 * Every key comes from the vector itself and every clock is the vector's: nothing is fetched and
 * the wall clock is read only for `run_at`.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_MODULE_URL, verifyOffer, verifyReceipt } from '@vrpkit/agent';
import { type Clock, isRecord, systemClock, toUtcSecond } from '@vrpkit/core';
import { ConformanceError } from './errors.js';

export type VectorOutcome = 'pass' | 'reject-as-required' | 'not-exercised' | 'inconclusive' | 'void';

export interface Digest {
  alg: 'sha256';
  value: string;
  method: string;
}

export interface ConformanceReport {
  kind: 'vrp_conformance_report';
  report_version: '0.1';
  engine: { name: string; version: string; source?: { repository: string; revision: string; path?: string }; digest?: Digest };
  corpus: { repository?: string; revision?: string; path: string; version: string; digest: Digest };
  config: Record<string, unknown>;
  environment: { runtime: string; platform?: string; notes?: string };
  run_at: string;
  results: {
    vector: string;
    outcome: VectorOutcome;
    expected: Record<string, unknown>;
    observed: Record<string, unknown>;
    note?: string;
  }[];
  must_fail_controls: { vector: string; expected: 'reject-as-required'; observed: VectorOutcome; note?: string }[];
  discriminates: boolean;
  aggregate?: {
    denominator: number;
    exercised: number;
    distinguished: number;
    not_exercised: number;
    inconclusive: number;
    void: number;
    note?: string;
  };
  reporter?: string;
}

export interface CorpusRunOptions {
  /** The corpus as named in the report (default: the directory as given). */
  path?: string;
  /** The corpus version (default "0.1"). */
  version?: string;
  repository?: string;
  revision?: string;
  /**
   * Vector file names that MUST be rejected (the must-fail controls). Default: every vector whose
   * file name says it was tampered with. At least one is required.
   */
  controls?: string[];
  /** The engine's source, when the run is from a known revision of a public repository. */
  source?: { repository: string; revision: string; path?: string };
  reporter?: string;
  clock?: Clock;
}

const sha256Hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/**
 * The corpus digest by the schema's directory method: a `sha256sum` manifest of the *.json files
 * sorted bytewise (LC_ALL=C), then the SHA-256 of that manifest text.
 */
export function corpusDigest(dir: string): Digest {
  const names = vectorFiles(dir);
  const manifest = names.map((n) => `${sha256Hex(readFileSync(join(dir, n)))}  ${n}\n`).join('');
  return { alg: 'sha256', value: sha256Hex(manifest), method: 'cd <corpus> && ls *.json | LC_ALL=C sort | xargs sha256sum | sha256sum' };
}

function vectorFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    throw new ConformanceError('corpus_unreadable', { dir });
  }
  const json = names.filter((n) => n.endsWith('.json')).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  if (json.length === 0) throw new ConformanceError('corpus_empty', { dir });
  return json;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/**
 * The engine: the verifier package that ran (`@vrpkit/agent`, its source or its build, whichever
 * this process loaded), identified by a digest of every file of that tree, by the corpus method.
 */
export function engineDigest(): { name: string; version: string; digest: Digest } {
  const entry = fileURLToPath(AGENT_MODULE_URL);
  const root = dirname(entry);
  const pkg = JSON.parse(readFileSync(join(root, '..', 'package.json'), 'utf8')) as { name: string; version: string };
  const files = filesUnder(root)
    .filter((p) => !p.endsWith('.tsbuildinfo'))
    .map((p) => relative(root, p).split('\\').join('/'))
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const manifest = files.map((f) => `${sha256Hex(readFileSync(join(root, f)))}  ${f}\n`).join('');
  const tree = relative(join(root, '..'), root);
  return {
    name: `${pkg.name} (verifyOffer, verifyReceipt)`,
    version: pkg.version,
    digest: {
      alg: 'sha256',
      value: sha256Hex(manifest),
      method: `cd ${pkg.name}/${tree} && find . -type f ! -name '*.tsbuildinfo' | sed 's|^./||' | LC_ALL=C sort | xargs sha256sum | sha256sum`,
    },
  };
}

/** Same JSON value (key order ignored). */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return a === b;
}

/** What the engine returned, in the shape of the vector's `expected` (null = not evaluated). */
function pick(observed: Record<string, unknown>, expected: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(expected).map((k) => [k, k in observed ? observed[k] : null]));
}

async function runVector(doc: unknown): Promise<{ observed: Record<string, unknown>; accepts: boolean } | { error: string }> {
  if (!isRecord(doc) || !isRecord(doc.expected)) return { error: 'not a vector: no expected block' };
  const expected = doc.expected;
  if ('input' in doc && typeof doc.clock === 'string') {
    const r = verifyOffer({ envelope: doc.input, jwks: doc.jwks, now: doc.clock });
    const verified = r.status === 'verified' || r.status === 'expired';
    return { observed: pick({ verified, reason: r.code, fresh: r.fresh }, expected), accepts: expected.verified === true };
  }
  if ('receipt' in doc && typeof doc.now === 'string') {
    const now = Date.parse(doc.now);
    if (!Number.isFinite(now)) return { error: `unusable now ${doc.now}` };
    const jwks = doc.jwks;
    const r = await verifyReceipt(doc.receipt, { resolveJwks: () => jwks, now });
    return { observed: pick(r as unknown as Record<string, unknown>, expected), accepts: expected.fully_verified === true };
  }
  return { error: 'unknown vector format (neither an offer nor a receipt vector)' };
}

type VectorResult = ConformanceReport['results'][number];

/** The must-fail controls: named, else every vector whose file name says it was tampered with; at least one, each a vector of `dir`. */
function mustFailControls(dir: string, names: readonly string[], named: readonly string[] | undefined): readonly string[] {
  const controls = named ?? names.filter((n) => /tamper/i.test(n));
  const unknownControl = controls.find((c) => !names.includes(c));
  if (unknownControl) throw new ConformanceError('control_not_in_corpus', { control: unknownControl, dir });
  if (controls.length === 0) throw new ConformanceError('no_control');
  return controls;
}

/** One vector file through the engine: its outcome against its `expected` block (void when it cannot be run). */
async function vectorResult(dir: string, name: string, label: string): Promise<VectorResult> {
  const vector = `${label}/${name}`;
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  } catch {
    return { vector, outcome: 'void', expected: {}, observed: {}, note: 'not JSON' };
  }
  const expected = isRecord(doc) && isRecord(doc.expected) ? doc.expected : {};
  const ran = await runVector(doc).catch((e: unknown) => ({ error: `the engine threw: ${e instanceof Error ? e.message : String(e)}` }));
  if ('error' in ran) return { vector, outcome: 'void', expected, observed: {}, note: ran.error };
  const outcome: VectorOutcome = !sameJson(ran.observed, expected) ? 'inconclusive' : ran.accepts ? 'pass' : 'reject-as-required';
  return {
    vector,
    outcome,
    expected,
    observed: ran.observed,
    ...(outcome === 'inconclusive' ? { note: 'observed differs from expected' } : {}),
  };
}

/** The schema's aggregate counts (published only when every control was rejected). */
function aggregateOf(results: readonly VectorResult[]): NonNullable<ConformanceReport['aggregate']> {
  const count = (o: VectorOutcome) => results.filter((r) => r.outcome === o).length;
  return {
    denominator: results.length,
    exercised: results.length - count('not-exercised') - count('void'),
    distinguished: count('pass') + count('reject-as-required'),
    not_exercised: count('not-exercised'),
    inconclusive: count('inconclusive'),
    void: count('void'),
    note: 'Counts only. Not a trust, safety, compliance, certification or whole-agent verdict.',
  };
}

/** Run every vector of `dir` and build the report (never throws for a failing vector: it reports). */
export async function runVectorCorpus(dir: string, options: CorpusRunOptions = {}): Promise<ConformanceReport> {
  const runAt = toUtcSecond((options.clock ?? systemClock).now());
  const names = vectorFiles(dir);
  const label = (options.path ?? dir).replace(/\/+$/, '');
  const controls = mustFailControls(dir, names, options.controls);
  const results: VectorResult[] = [];
  for (const name of names) results.push(await vectorResult(dir, name, label));
  const must_fail_controls = controls.map((c) => ({
    vector: `${label}/${c}`,
    expected: 'reject-as-required' as const,
    observed: results.find((r) => r.vector === `${label}/${c}`)?.outcome ?? ('void' as const),
    note: 'Declared must-fail control: the engine MUST reject this vector.',
  }));
  const discriminates = must_fail_controls.every((c) => c.observed === 'reject-as-required');
  const engine = engineDigest();
  return {
    kind: 'vrp_conformance_report',
    report_version: '0.1',
    engine: { ...engine, ...(options.source ? { source: options.source } : {}) },
    corpus: {
      ...(options.repository ? { repository: options.repository } : {}),
      ...(options.revision ? { revision: options.revision } : {}),
      path: label,
      version: options.version ?? '0.1',
      digest: { ...corpusDigest(dir), method: `cd ${label} && ls *.json | LC_ALL=C sort | xargs sha256sum | sha256sum` },
    },
    config: {
      clock: 'injected per vector (`clock` or `now` field); no wall-clock dependency',
      key_resolution: 'JWKS embedded in each vector; nothing fetched',
      exclusions: [],
    },
    environment: { runtime: `node ${process.version}`, platform: `${process.platform} ${process.arch}` },
    run_at: runAt,
    results,
    must_fail_controls,
    discriminates,
    // The schema: no aggregate may be published when a control was not rejected.
    ...(discriminates ? { aggregate: aggregateOf(results) } : {}),
    ...(options.reporter ? { reporter: options.reporter } : {}),
  };
}
