/**
 * `npm run bench [-- name … [--flag value …]]`: run the benchmarks one after another (each is a standalone
 * script that prints a table and writes bench/results/<name>.json). Without names, all run.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const all = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && f !== 'lib.ts')
  .map((f) => f.slice(0, -3))
  .sort();
// `npm run bench -- verify node-offer --only offline`: names first, then the flags every named bench gets.
const args = process.argv.slice(2);
const firstFlag = args.findIndex((a) => a.startsWith('-'));
const wanted = firstFlag === -1 ? args : args.slice(0, firstFlag);
const flags = firstFlag === -1 ? [] : args.slice(firstFlag);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  process.stderr.write(`error[unknown_benchmark]: ${unknown.join(', ')} (available: ${all.join(', ')})\n`);
  process.exit(64);
}
let failed = 0;
for (const name of wanted.length ? wanted : all) {
  process.stdout.write(`\n=== bench/${name} ===\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=vrpkit-source', `${here}${name}.ts`, ...flags], {
    stdio: 'inherit',
  });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
