/**
 * The performance page as Markdown: per bench, the latest run's figures (each a ratio to its
 * in-run baseline, the baseline named), the machine it ran on, the command that reproduces it,
 * its charts and the trend of its headline figures over the kept runs; a bench with no result is
 * shown as not run.
 */
import { lineChart } from './charts.js';
import type { Chart, Figure } from './figures.js';
import type { RunRecord } from './history.js';
import { sectionOf } from './sections/index.js';

/** A section as built from a bench's runs: the latest run's figures and charts, the headline trend. */
export interface BuiltSection {
  bench: string;
  title: string;
  command: string;
  runs: RunRecord[];
  figures: Figure[];
  charts: Chart[];
}

/** Build the section of `bench` from its runs (oldest first); no runs: a section marked not run. */
export function buildSection(bench: string, runs: RunRecord[]): BuiltSection {
  const kind = sectionOf(bench);
  const latest = runs.at(-1);
  // The latest run's flags after those the section's command already names (`platform --only first-visit`).
  const base = kind.command ?? bench;
  const named = base.split(' ').slice(1).join(' ');
  const flags = latest?.args?.join(' ') ?? '';
  const extra = named && flags.startsWith(named) ? flags.slice(named.length).trim() : flags;
  const command = `npm run bench -- ${base}${extra ? ` ${extra}` : ''}`;
  if (!latest) return { bench, title: kind.title, command, runs, figures: [], charts: [] };
  const extracted = kind.extract(latest.result);
  // Chart ids are the section's own (`rps`); the file is named by the bench too (`surfaces-rps.svg`).
  const charts = extracted.charts.map((c) => ({ ...c, id: `${bench}-${c.id}` }));
  const { figures } = extracted;
  const trend = runs.flatMap((run) =>
    kind
      .extract(run.result)
      .figures.filter((f) => f.headline)
      .map((f) => ({ x: run.at.slice(0, 16).replace('T', ' '), y: f.ratio, series: f.name })),
  );
  if (trend.length)
    charts.push({
      id: `${bench}-trend`,
      title: `${bench}: headline ratios over the last ${runs.length} run(s)`,
      spec: lineChart(`bench/${bench}: headline ratios to their in-run baselines, last ${runs.length} run(s)`, trend, {
        x: 'run (UTC)',
        y: 'ratio',
        xType: 'ordinal',
      }),
    });
  return { bench, title: kind.title, command, runs, figures, charts };
}

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
/** A value as the page prints it: whole from 100 up, else three significant digits (never an exponent). */
const number = (v: number | null, unit: string) => {
  if (v === null) return '—';
  const text = Number.isInteger(v) || Math.abs(v) >= 100 ? String(Math.round(v)) : String(Number(v.toPrecision(3)));
  return `${text} ${unit}`.trim();
};

/**
 * A Markdown table with its columns padded to their widest cell, as Biome formats Markdown (so the
 * generated page passes `npx biome check` as written); `right` marks the right-aligned columns.
 */
function markdownTable(header: string[], right: boolean[], rows: string[][]): string[] {
  const widths = header.map((h, c) => Math.max(3, h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((v, c) => (right[c] ? v.padStart(widths[c] as number) : v.padEnd(widths[c] as number))).join(' | ')} |`;
  const rule = `| ${widths.map((w, c) => (right[c] ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)];
}

/** The figures of a section as a table: every figure a ratio, its baseline named. */
function figureTable(figures: Figure[]): string[] {
  if (!figures.length) return ['No figures in this result.'];
  return markdownTable(
    ['figure', 'value', 'baseline (same run)', 'baseline value', 'ratio', 'better', 'target'],
    [false, true, false, true, true, false, false],
    figures.map((f) => [
      cell(f.name),
      number(f.value, f.unit),
      cell(f.baseline),
      number(f.baseline_value, f.unit),
      `${f.ratio.toFixed(2)}×`,
      f.better ?? '',
      cell(f.target ?? ''),
    ]),
  );
}

/** One section's Markdown; `img` is the charts' folder relative to the page. */
function sectionMarkdown(s: BuiltSection, img: string): string[] {
  const out = [`## ${s.title}`, ''];
  const latest = s.runs.at(-1);
  if (!latest)
    return [
      ...out,
      `**Not run yet**: no result of \`bench/${s.bench}\` on record. Run \`${s.command}\`, then \`npm run bench -- --report\`.`,
      '',
    ];
  const m = latest.machine;
  const machine = m
    ? `${m.cpus} CPUs (${m.cpu_model}), Node ${m.node}, load average ${m.load_average.join(' / ')}`
    : 'machine not recorded';
  out.push(`Latest run ${latest.at} on ${machine}; ${s.runs.length} run(s) kept. Reproduce: \`${s.command}\`.`, '');
  for (const c of s.charts) out.push(`![${c.title}](${img}/${c.id}.svg)`, '');
  return [...out, ...figureTable(s.figures), ''];
}

/** The whole page. */
export function pageMarkdown(sections: BuiltSection[], generatedAt: Date, img: string): string {
  const machines = sections.filter((s) => s.runs.length);
  const head = [
    '# Performance',
    '',
    `Generated by \`npm run bench -- --report\` at ${generatedAt.toISOString()} from the latest run of each bench`,
    '(`bench/history/<bench>/`, committed: the last runs, kept for the trend). Every figure is a ratio to a baseline measured in',
    'the same run, named beside it: the machines are small and shared, so absolute numbers move with the neighbours’',
    'load while in-run ratios compare across runs. Do not edit this file by hand; rerun the command.',
    '',
    '## Reproduce',
    '',
    '```sh',
    'npm run bench                      # every bench (or name some: npm run bench -- surfaces gate)',
    'npm run bench -- --report          # this page and its charts, from the results on record',
    'npm run bench -- surfaces --report # one bench, then the page',
    '```',
    '',
    '## Machines',
    '',
    ...markdownTable(
      ['bench', 'latest run', 'CPUs', 'CPU model', 'Node', 'load average (1 / 5 / 15 min)'],
      [false, false, true, false, false, false],
      machines.length
        ? machines.map((s) => {
            const r = s.runs.at(-1) as RunRecord;
            const m = r.machine;
            return [s.bench, r.at, String(m?.cpus ?? '—'), cell(m?.cpu_model ?? '—'), m?.node ?? '—', m?.load_average.join(' / ') ?? '—'];
          })
        : [['—', 'not run yet', '', '', '', '']],
    ),
    '',
  ];
  return [...head, ...sections.flatMap((s) => sectionMarkdown(s, img))].join('\n');
}
