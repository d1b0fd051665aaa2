/**
 * CLI runner: the real `vrp` command from source, in a child process as a user runs it, or its
 * `main` in this process with stdout and stderr captured.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { main } from '@vrpkit/cli';
import { vi } from 'vitest';

/** The repository root (the CLI's working directory in tests). */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const bin = fileURLToPath(new URL('../../cli/src/bin.ts', import.meta.url));
/** tsx's loader by absolute URL, so the CLI starts from any working directory. */
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface VrpRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the real `vrp` command from source in a child process (as a user would), never throwing. */
export function runVrp(args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<VrpRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', tsxLoader, '--conditions=vrpkit-source', bin, ...args],
      { cwd: opts.cwd ?? repoRoot, timeout: opts.timeoutMs ?? 90_000, env: opts.env ?? process.env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Run the `vrp` command in this process (its `main`), capturing what it writes to stdout and stderr. */
export async function runVrpInProcess(args: string[]): Promise<VrpRun> {
  const out: string[] = [];
  const err: string[] = [];
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => out.push(String(c)) > 0);
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => err.push(String(c)) > 0);
  try {
    const code = await main(['node', 'vrp', ...args]);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = undefined;
  }
}
