/**
 * The performance page generator (bench/report/) on a fixture result set shaped like what the
 * benches write (bench/<bench>.ts): the charts are rendered to SVG by Vega, every figure on the
 * page is a ratio with its in-run baseline named and computed from the two values, the runs are
 * kept for the trend up to the bound, and a bench without results is shown as not run. With
 * Chromium (`VRPKIT_CHROMIUM`), every chart is parsed by a browser's XML parser as SVG and drawn.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { archiveResults, loadHistory, thisMachine } from '../report/history.js';
import { writeReport } from '../report/index.js';

let dir: string;
const results = () => join(dir, 'results');
const history = () => join(dir, 'history');
const page = () => join(dir, 'docs', 'performance.md');
const img = () => join(dir, 'docs', 'performance');

/** Write `bench`'s result as the bench does, dated `at` (the archive names a run by its write time). */
function writeResult(bench: string, result: unknown, at: Date): void {
  const file = join(results(), `${bench}.json`);
  writeFileSync(file, `${JSON.stringify(result)}\n`);
  utimesSync(file, at, at);
}

const surfaces = (a2aRps: number) => ({
  bench: 'surfaces',
  rows: [
    { surface: 'plain', rps: 1000, server_cpu_us: 50, ratio_to_plain: 1 },
    { surface: 'mcp 2025-11-25', rps: 600, server_cpu_us: 80, baseline: 'plain', target_ratio_min: 0.5 },
    { surface: 'a2a', rps: a2aRps, server_cpu_us: 90, baseline: 'plain', target_ratio_min: 0.5 },
    // A reference row: no target, so not on the trend.
    { surface: 'a2a, SDK path', rps: 290, server_cpu_us: 200, baseline: 'plain' },
    { surface: 'plain, cache off', rps: 500, server_cpu_us: 150 },
    { surface: 'mcp 2025-11-25, cache off', rps: 250, server_cpu_us: 300 },
  ],
});
const stats = (p50: number, p99: number) => ({ n: 1000, p50, p99 });
const FIXTURES: Record<string, unknown> = {
  gateway: {
    results: [
      { side: 'stdio', store: 'sqlite', mode: 'enforce', direct: stats(0.5, 1), proxied: stats(1.5, 4), added_p50_ms: 1, added_p99_ms: 3 },
      { side: 'http', store: 'sqlite', mode: 'enforce', direct: stats(1, 2), proxied: stats(3, 8), added_p50_ms: 2, added_p99_ms: 6 },
    ],
  },
  gate: {
    results: [
      {
        store: 'sqlite',
        raw_durable_cas: stats(0.2, 1),
        enforce: stats(0.3, 1.8),
        ungated_invoke: stats(0.001, 0.01),
        hot_path: stats(0.4, 2),
      },
    ],
    concurrent: [
      { enforcers: 1, enforce: stats(1, 2), throughput_per_s: 800 },
      { enforcers: 8, enforce: stats(3, 10), throughput_per_s: 2000 },
    ],
  },
  platform: {
    rows: [
      { row: 'node (baseline)', rps: 400, p99_ms: 20, server_cpu_ms_per_req: 1 },
      { row: 'platform, 10 tenants', rps: 380, p99_ms: 22, server_cpu_ms_per_req: 1.1 },
      { row: 'platform, 10,000 tenants (1,000 served)', rps: 320, p99_ms: 30, server_cpu_ms_per_req: 1.3 },
      { row: 'platform, 10,000 tenants in PostgreSQL (1,000 served)', rps: 200, p99_ms: 50, server_cpu_ms_per_req: 2 },
    ],
  },
  'platform-first-visit': {
    baseline: 'single-domain node on SQLite, new connection each, same run',
    rows: [
      { row: 'first visit: node on SQLite, new connection each (baseline)', rps: 32, p99_ms: 1761, ratio_spread: '1–1' },
      { row: 'first visit: 1,000 cold tenants in PostgreSQL, one wildcard certificate', rps: 24, p99_ms: 1534, ratio_spread: '0.68–0.71' },
    ],
  },
  'node-offer': {
    rows: [
      { name: 'bare JSON (baseline)', median: { rps: 8000, server_cpu_us_per_request: 50 }, ratio_to_bare: 1 },
      { name: 'static offer-sized body (baseline 2)', median: { rps: 6400, server_cpu_us_per_request: 60 }, ratio_to_bare: 0.8 },
      { name: 'signed offer, cache hit', median: { rps: 5600, server_cpu_us_per_request: 75 }, ratio_to_bare: 0.7 },
      { name: 'signed offer, fresh (cache off)', median: { rps: 1600, server_cpu_us_per_request: 180 }, ratio_to_bare: 0.2 },
    ],
  },
  verify: {
    offline: { median_round_ratio_vs_raw: { verifyOffer: 0.89 } },
    online: { rows: [{ name: 'warm caches', ratio_vs_bare: 1.06 }] },
  },
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-report-'));
  mkdirSync(results());
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

const BROWSER = hasChromium('performance page charts');
const T0 = Date.parse('2026-12-01T10:00:00Z');
const HOUR = 3_600_000;

/** The fixture set: three runs of bench/surfaces (the a2a row improving), one of each other fixture. */
async function report(benches = ['surfaces', 'gateway', 'gate', 'platform', 'verify', 'node-burst']) {
  for (const [i, rps] of [280, 450, 600].entries()) {
    writeResult('surfaces', surfaces(rps), new Date(T0 + i * HOUR));
    // The latest run under `npm run bench -- surfaces --seconds 2`.
    archiveResults(results(), history(), 12, thisMachine(), i === 2 ? ['--seconds', '2'] : undefined);
  }
  for (const [bench, result] of Object.entries(FIXTURES)) writeResult(bench, result, new Date(T0 + 3 * HOUR));
  return writeReport({
    resultsDir: results(),
    historyDir: history(),
    pageFile: page(),
    imgDir: img(),
    benches,
    now: new Date(T0 + 4 * HOUR),
  });
}

/** The page's figure table rows: [figure, value, baseline, baseline value, ratio, better, target]. */
function figureRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| figure') && !l.startsWith('| bench') && !l.startsWith('| ---'))
    .map((l) =>
      l
        .slice(2, -2)
        .split(' | ')
        .map((c) => c.trim()),
    )
    .filter((cells) => cells.length === 7);
}

describe('npm run bench -- --report on a fixture result set', () => {
  it('renders every chart to an SVG with its data, and links each from the page', async () => {
    const { svgs } = await report();
    expect([...svgs.keys()].sort()).toEqual(
      [
        'gate-concurrency',
        'node-offer-rps',
        'node-offer-trend',
        'gate-trend',
        'gateway-latency',
        'gateway-trend',
        'platform-tenants',
        'platform-trend',
        'platform-first-visit-tenants',
        'platform-first-visit-trend',
        'surfaces-rps',
        'surfaces-trend',
      ].sort(),
    );
    const markdown = readFileSync(page(), 'utf8');
    for (const [id, file] of svgs) {
      const svg = readFileSync(file, 'utf8');
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg).toContain('<path'); // marks drawn, not an empty frame
      expect(markdown).toContain(`(performance/${id}.svg)`);
    }
    expect(readFileSync(svgs.get('surfaces-rps') as string, 'utf8')).toContain('a2a');
    expect(readFileSync(svgs.get('surfaces-rps') as string, 'utf8')).toContain('0.60×');
    expect(readFileSync(svgs.get('gateway-latency') as string, 'utf8')).toContain('stdio sqlite enforce');
  });

  it('shows every figure as a ratio with its in-run baseline named, the ratio taken from the two values', async () => {
    await report();
    const rows = figureRows(readFileSync(page(), 'utf8'));
    expect(rows.length).toBeGreaterThan(20);
    for (const [name, value, baseline, baseValue, ratio] of rows) {
      expect(baseline, name).toMatch(/\S/);
      expect(ratio, name).toMatch(/^\d+\.\d\d×$/);
      if (value !== '—' && baseValue !== '—')
        expect(Number.parseFloat(ratio as string)).toBeCloseTo(
          Number.parseFloat(value as string) / Number.parseFloat(baseValue as string),
          1,
        );
    }
    const byName = new Map(rows.map((r) => [r[0], r]));
    expect(byName.get('a2a: round trips/s')).toEqual([
      'a2a: round trips/s',
      '600 req/s',
      'plain (same run)',
      '1000 req/s',
      '0.60×',
      'higher',
      '≥ 0.5×',
    ]);
    // [figure, its baseline, the baseline's value, the ratio], one per section kind.
    const expected = [
      ['mcp 2025-11-25, cache off: round trips/s', 'plain, cache off (same run)', '500 req/s', '0.50×'],
      ['sqlite: enforce p99', 'the raw durable compare-and-set, same store (same run)', '1 ms', '1.80×'],
      ['postgres: enforce with 8 concurrent enforcers, throughput', '1 enforcer, same store (same run)', '800 enforces/s', '2.50×'],
      ['platform, 10,000 tenants (1,000 served): throughput', 'node (baseline) (same run)', '400 req/s', '0.80×'],
      [
        'first visit: 1,000 cold tenants in PostgreSQL, one wildcard certificate: throughput',
        'first visit: node on SQLite, new connection each (baseline) (same run)',
        '32 req/s',
        '0.75×',
      ],
      ['signed offer, cache hit: offers/s', 'static offer-sized body (baseline 2) (same run)', '6400 req/s', '0.88×'],
      ['signed offer, fresh (cache off): server CPU per request', 'static offer-sized body (baseline 2) (same run)', '60 µs', '3.00×'],
      // A bench without a section of its own still shows the ratios its result names, baseline named by the member.
      ['online warm caches: ratio_vs_bare', 'bare', '—', '1.06×'],
      ['offline median_round_ratio_vs_raw: verifyOffer', 'raw', '—', '0.89×'],
    ];
    for (const [name, ...cells] of expected) expect(byName.get(name as string)?.slice(2, 5), name).toEqual(cells);
    expect(byName.get('stdio sqlite enforce: proxied p99')?.[6]).toBe('added ≤ 4 ms (added: 3.00 ms)');
  });

  it('names the machine and the command of each run, and shows a bench without results as not run', async () => {
    await report();
    const markdown = readFileSync(page(), 'utf8');
    expect(markdown).toMatch(/\| surfaces +\| 2026-12-01T12:00:00\.000Z +\| +\d+ \| .+ \| v\d+\.\d+\.\d+ +\|/);
    // With the flags the latest run had; a result a bench wrote on its own, with none.
    expect(markdown).toContain('Reproduce: `npm run bench -- surfaces --seconds 2`');
    expect(markdown).toContain('Reproduce: `npm run bench -- gate`');
    expect(markdown).toContain('3 run(s) kept');
    expect(markdown).toMatch(
      /## Node connection burst\n\n\*\*Not run yet\*\*: no result of `bench\/node-burst` on record\. Run `npm run bench -- node-burst`/,
    );
  });

  it('writes the page as Biome formats Markdown, so `npx biome check .` passes on it as generated', async () => {
    await report();
    const markdown = readFileSync(page(), 'utf8');
    const biome = fileURLToPath(new URL('../../node_modules/.bin/biome', import.meta.url));
    const formatted = execFileSync(biome, ['format', '--stdin-file-path=performance.md'], { input: markdown, encoding: 'utf8' });
    expect(formatted).toBe(markdown);
  });

  it('keeps the last runs of a bench for the trend, bounded', async () => {
    for (const [i, rps] of [100, 200, 300, 400].entries()) {
      writeResult('surfaces', surfaces(rps), new Date(T0 + i * HOUR));
      archiveResults(results(), history(), 3);
    }
    // Archiving again adds nothing: a run is archived once.
    expect(archiveResults(results(), history(), 3)).toEqual([]);
    const runs = loadHistory(history()).get('surfaces') ?? [];
    expect(runs.map((r) => r.at)).toEqual([1, 2, 3].map((i) => new Date(T0 + i * HOUR).toISOString()));
    expect(runs.every((r) => r.machine !== null && r.machine.cpus > 0)).toBe(true);
    const { sections } = await writeReport({
      resultsDir: results(),
      historyDir: history(),
      pageFile: page(),
      imgDir: img(),
      benches: ['surfaces'],
    });
    const trend = sections[0]?.charts.find((c) => c.id === 'surfaces-trend');
    expect(JSON.stringify(trend?.spec)).toContain('"y":0.4'); // the latest run's a2a ratio, 400 / 1000
    expect(JSON.stringify(trend?.spec)).not.toContain('"y":0.1,'); // the oldest run fell out of the bound
    expect(JSON.stringify(trend?.spec)).not.toContain('a2a, SDK path'); // a row without a target is not a headline
  });

  it('with no results at all, writes a page of benches not run and no chart', async () => {
    const { svgs, sections } = await writeReport({
      resultsDir: results(),
      historyDir: history(),
      pageFile: page(),
      imgDir: img(),
      benches: ['surfaces', 'gate'],
    });
    expect(svgs.size).toBe(0);
    // The benches named and every bench with a section of its own, each marked not run.
    expect(sections.map((s) => s.bench)).toEqual(
      expect.arrayContaining(['surfaces', 'gate', 'gateway', 'platform', 'platform-first-visit']),
    );
    expect(sections.every((s) => s.runs.length === 0)).toBe(true);
    expect(readFileSync(page(), 'utf8').match(/\*\*Not run yet\*\*/g)).toHaveLength(sections.length);
  });

  it.skipIf(!BROWSER)('in Chromium: every chart parses as SVG (no parser error) and draws as an image of its size', async () => {
    const { svgs } = await report();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      for (const [id, file] of svgs) {
        const svg = readFileSync(file, 'utf8');
        const parsed = await page.evaluate(async (text) => {
          const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
          const root = doc.documentElement;
          const img = new Image();
          img.src = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
          await img.decode();
          return {
            errors: doc.getElementsByTagName('parsererror').length,
            root: `${root.namespaceURI} ${root.localName}`,
            width: Number(root.getAttribute('width')),
            drawn: [img.naturalWidth, img.naturalHeight],
          };
        }, svg);
        expect(parsed.errors, id).toBe(0);
        expect(parsed.root, id).toBe('http://www.w3.org/2000/svg svg');
        expect(parsed.width, id).toBeGreaterThan(0);
        expect(parsed.drawn[0], id).toBe(parsed.width);
        expect(parsed.drawn[1], id).toBeGreaterThan(0);
      }
    } finally {
      await browser.close();
    }
  });
});
