/**
 * `npm run bench [-- name …]`: run the benchmarks one after another (each is a standalone
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
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  process.stderr.write(`error[unknown_benchmark]: ${unknown.join(', ')} (available: ${all.join(', ')})\n`);
  process.exit(64);
}
let failed = 0;
for (const name of wanted.length ? wanted : all) {
  process.stdout.write(`\n=== bench/${name} ===\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=vrpkit-source', `${here}${name}.ts`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
