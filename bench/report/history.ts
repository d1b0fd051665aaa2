/**
 * The benches' results kept over runs, for the performance page's trend. Each bench writes its
 * latest result to `bench/results/<bench>.json` in a shape of its own (not committed: a scratch
 * file per checkout); `archiveResults` copies each such file, once per version (named by the time
 * it was written), to `bench/history/<bench>/<time>.json` with the machine it ran on, and keeps
 * the last `HISTORY_KEEP` of each bench. The history is committed with the page it was drawn
 * from, so the page's figures and trend can be regenerated from a fresh clone and a new run adds
 * to the trend instead of starting it over. `npm run bench` archives after every bench it runs,
 * and `--report` archives what a bench run on its own (`npx tsx bench/<bench>.ts`) left behind.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

/** Runs of each bench kept for the trend. */
export const HISTORY_KEEP = 12;

/** Where a run was measured: what the page names beside every figure. */
export interface Machine {
  cpus: number;
  cpu_model: string;
  node: string;
  /** 1, 5 and 15 minute load averages when the run was archived (right after it, under `npm run bench`). */
  load_average: number[];
}

/** One archived run of one bench: its result file as the bench wrote it. */
export interface RunRecord {
  bench: string;
  /** When the bench wrote its result (ISO 8601). */
  at: string;
  machine: Machine | null;
  /** The flags it ran with under `npm run bench` (`--seconds 2`); absent when it ran on its own. */
  args?: string[];
  result: unknown;
}

/** This machine, as a run on it is recorded. */
export function thisMachine(): Machine {
  const list = cpus();
  return {
    cpus: list.length,
    cpu_model: list[0]?.model.trim() ?? 'unknown',
    node: process.version,
    load_average: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** A file name from an instant: ISO 8601 without the colons (sortable, portable). */
const stampOf = (at: Date) => at.toISOString().replaceAll(':', '-');

/**
 * Archive every `<bench>.json` in `dir` not archived yet in `historyDir` (its write time names
 * it), then keep the last `keep` runs of each bench. Returns the benches that got a new run. A
 * result that is not JSON is left where it is (the bench's own output is never changed).
 */
export function archiveResults(dir: string, historyDir: string, keep = HISTORY_KEEP, machine = thisMachine(), args?: string[]): string[] {
  if (!existsSync(dir)) return [];
  const added: string[] = [];
  for (const file of readdirSync(dir)) {
    const path = join(dir, file);
    if (!file.endsWith('.json') || !statSync(path).isFile()) continue;
    const bench = file.slice(0, -'.json'.length);
    const at = statSync(path).mtime;
    const target = join(historyDir, bench, `${stampOf(at)}.json`);
    if (existsSync(target)) continue;
    let result: unknown;
    try {
      result = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      continue;
    }
    mkdirSync(join(historyDir, bench), { recursive: true });
    const record: RunRecord = { bench, at: at.toISOString(), machine, ...(args ? { args } : {}), result };
    writeFileSync(target, `${JSON.stringify(record, null, 2)}\n`);
    added.push(bench);
    for (const old of archivedFiles(join(historyDir, bench)).slice(0, -keep)) rmSync(join(historyDir, bench, old));
  }
  return added;
}

/** The archived runs' file names in a bench's folder, oldest first. */
function archivedFiles(benchDir: string): string[] {
  return readdirSync(benchDir)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

/** Every archived run in `dir` (bench/history), by bench, oldest first; a file that does not parse is skipped. */
export function loadHistory(dir: string): Map<string, RunRecord[]> {
  const history = new Map<string, RunRecord[]>();
  if (!existsSync(dir)) return history;
  for (const bench of readdirSync(dir).sort()) {
    const benchDir = join(dir, bench);
    if (!statSync(benchDir).isDirectory()) continue;
    const runs: RunRecord[] = [];
    for (const file of archivedFiles(benchDir)) {
      try {
        runs.push(JSON.parse(readFileSync(join(benchDir, file), 'utf8')) as RunRecord);
      } catch {
        // A torn or hand-edited file: the other runs still show.
      }
    }
    if (runs.length) history.set(bench, runs);
  }
  return history;
}
