/** Helpers shared by the benchmark scripts (not a benchmark itself; bench/run.ts skips it). */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** `--name N` from the command line: a positive number, or exit 64 (usage) with a clear error. */
export function numberFlag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) {
    process.stderr.write(`error[usage]: --${name} takes a positive number\n`);
    process.exit(64);
  }
  return v;
}

const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU seconds (user + system) the processes `pids` have used so far, from /proc/PID/stat, or
 * null where there is no /proc. On a shared machine throughput swings with the neighbours' load;
 * CPU per request is what a code change moves, so the tables report both.
 */
export function cpuSeconds(pids: number[]): number | null {
  try {
    let ticks = 0;
    for (const pid of pids) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/**
 * Wait until the processes `pids` are idle (under 2% of one core over a 200 ms window), at most
 * `maxMs`: work a process still does after its row ended (a collection of the offers a cache-miss
 * row evicted) then neither lands on the next row's CPU nor competes with it for the cores.
 */
export async function waitIdle(pids: number[], maxMs = 5000): Promise<void> {
  const end = performance.now() + maxMs;
  while (performance.now() < end) {
    const before = cpuSeconds(pids);
    await new Promise((r) => setTimeout(r, 200));
    const after = cpuSeconds(pids);
    if (before === null || after === null || after - before < 0.004) return;
  }
}

/**
 * Start `script` again as a child process with `args` (its servers then never share the load
 * generator's event loop) and return the JSON object it prints as its first stdout line.
 */
export async function startChild(script: string | URL, args: string[]): Promise<{ child: ChildProcess; hello: Record<string, unknown> }> {
  // VRP_BENCH_CPU_PROF=DIR: a V8 CPU profile of each child (the servers) is written into DIR when it exits,
  // sampled every VRP_BENCH_CPU_PROF_INTERVAL µs (default 1000).
  const prof = process.env.VRP_BENCH_CPU_PROF
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${process.env.VRP_BENCH_CPU_PROF}`,
        `--cpu-prof-interval=${process.env.VRP_BENCH_CPU_PROF_INTERVAL ?? 1000}`,
      ]
    : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', '--conditions=vrpkit-source', fileURLToPath(script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  if (first.done) throw new Error(`${String(script)} ${args.join(' ')} exited before it was ready`);
  return { child, hello: JSON.parse(first.value as string) as Record<string, unknown> };
}

/** The raw Ed25519 signature the benches measure against: a fixed key over a 4 KB input (an offer's signing input is about that). */
export const RAW_SIGN = {
  key: createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32, 7)]),
    format: 'der',
    type: 'pkcs8',
  }),
  input: Buffer.from('e'.repeat(4000), 'ascii'),
};

/**
 * CPU microseconds one raw Ed25519 `crypto.sign` takes over a signing input the size of a real
 * offer's (about 4 KB of base64url): the unit the fresh-offer target is stated in.
 */
export function rawSignCpuMicros(ms: number): number {
  const { key, input } = RAW_SIGN;
  for (let i = 0; i < 200; i++) sign(null, input, key);
  let n = 0;
  const cpu = process.cpuUsage();
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) sign(null, input, key);
    n += 100;
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / n;
}

/** A plain text table: one header row, columns padded to their widest cell. */
export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  for (const r of rows) process.stdout.write(`${r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')}\n`);
}

/** What a closed-loop load row reports (bench/node-offer, bench/booking's session rows). */
export interface LoadRun {
  requests: number;
  /** Answers with a status the row did not expect. */
  errors: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** CPU the serving processes spent per answered request (Linux /proc; null elsewhere). */
  server_cpu_us_per_request: number | null;
}

/** The `p`th percentile of ascending `sorted` (NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
