/**
 * `npm run bench [-- name … [--flag value …]] [--report]`: run the benchmarks one after another
 * (each is a standalone script that prints a table and writes bench/results/<name>.json), keeping
 * each result in bench/history/<name>/ (committed) for the trend (the last runs). Without names, all run;
 * with `--report` and no names, none run. `--report` then writes docs/performance.md and its
 * charts from the latest results on record (bench/report/).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { archiveResults, HISTORY_KEEP, thisMachine } from './report/history.js';
import { writeReport } from './report/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const results = `${here}results`;
const history = `${here}history`;
const all = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && f !== 'lib.ts')
  .map((f) => f.slice(0, -3))
  .sort();
// `npm run bench -- verify node-offer --only offline`: names first, then the flags every named bench gets.
const args = process.argv.slice(2);
const report = args.includes('--report');
const rest = args.filter((a) => a !== '--report');
const firstFlag = rest.findIndex((a) => a.startsWith('-'));
const wanted = firstFlag === -1 ? rest : rest.slice(0, firstFlag);
const flags = firstFlag === -1 ? [] : rest.slice(firstFlag);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  process.stderr.write(`error[unknown_benchmark]: ${unknown.join(', ')} (available: ${all.join(', ')})\n`);
  process.exit(64);
}
let failed = 0;
const toRun = wanted.length ? wanted : report ? [] : all;
for (const name of toRun) {
  process.stdout.write(`\n=== bench/${name} ===\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=vrpkit-source', `${here}${name}.ts`, ...flags], {
    stdio: 'inherit',
  });
  if (r.status !== 0) failed++;
  // Right after the run, so the machine recorded with it is the one it ran on, under the load it saw,
  // with the flags it ran with (the page's command to reproduce it).
  archiveResults(results, history, HISTORY_KEEP, thisMachine(), flags);
}
if (report) {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const { sections, svgs } = await writeReport({
    resultsDir: results,
    historyDir: history,
    pageFile: `${root}docs/performance.md`,
    imgDir: `${root}docs/performance`,
    benches: all,
  });
  const notRun = sections.filter((s) => !s.runs.length).map((s) => s.bench);
  process.stdout.write(
    `\ndocs/performance.md: ${sections.length - notRun.length} bench(es) with results, ${svgs.size} chart(s) in docs/performance/${notRun.length ? `; not run: ${notRun.join(', ')}` : ''}\n`,
  );
}
process.exit(failed ? 1 : 0);
