/**
 * `npm run bench -- --report`: write the performance page (docs/performance.md) and its charts
 * (docs/performance/*.svg) from the benches' results on record: archive what the benches
 * left in bench/results/ into bench/history/ (history.ts), build a section per bench (page.ts, sections/), render
 * every chart to SVG (charts.ts) and replace the page and the chart folder's SVGs.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { renderSvg } from './charts.js';
import { archiveResults, loadHistory } from './history.js';
import { type BuiltSection, buildSection, pageMarkdown } from './page.js';
import { SECTIONS } from './sections/index.js';

export interface ReportOptions {
  /** bench/results: the benches' latest results (a scratch folder, not committed). */
  resultsDir: string;
  /** bench/history: the archived runs, committed (the page is drawn from them). */
  historyDir: string;
  /** docs/performance.md */
  pageFile: string;
  /** docs/performance */
  imgDir: string;
  /** Benches to show even when they have no result yet (the bench scripts), besides every section's and every bench with a result. */
  benches: string[];
  now?: Date;
}

export interface Report {
  sections: BuiltSection[];
  /** The SVG files written, by chart id. */
  svgs: Map<string, string>;
}

/** The benches in page order: those with a section of their own first, in the sections' order, then the rest by name. */
function pageOrder(names: Iterable<string>): string[] {
  const known = Object.keys(SECTIONS);
  const all = new Set(names);
  return [...known.filter((n) => all.has(n)), ...[...all].filter((n) => !known.includes(n)).sort()];
}

export async function writeReport(options: ReportOptions): Promise<Report> {
  archiveResults(options.resultsDir, options.historyDir);
  const history = loadHistory(options.historyDir);
  const sections = pageOrder([...options.benches, ...Object.keys(SECTIONS), ...history.keys()]).map((bench) =>
    buildSection(bench, history.get(bench) ?? []),
  );
  mkdirSync(options.imgDir, { recursive: true });
  const svgs = new Map<string, string>();
  for (const chart of sections.flatMap((s) => s.charts)) {
    const file = join(options.imgDir, `${chart.id}.svg`);
    writeFileSync(file, `${await renderSvg(chart.spec)}\n`);
    svgs.set(chart.id, file);
  }
  // A chart of a bench no longer on record (or renamed) is not left behind.
  for (const old of readdirSync(options.imgDir)) if (old.endsWith('.svg') && !svgs.has(old.slice(0, -4))) rmSync(join(options.imgDir, old));
  const img = relative(dirname(options.pageFile), options.imgDir).split('\\').join('/');
  mkdirSync(dirname(options.pageFile), { recursive: true });
  writeFileSync(options.pageFile, `${pageMarkdown(sections, options.now ?? new Date(), img).trimEnd()}\n`);
  return { sections, svgs };
}
