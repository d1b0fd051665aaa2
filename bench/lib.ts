/** Helpers shared by the benchmark scripts (not a benchmark itself; bench/run.ts skips it). */

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
