/**
 * CLI runner: the real `vrp` command from source, in a child process as a user runs it (to its
 * exit, or long-running as `vrp node serve` with its listening event), or its `main` in this
 * process with stdout and stderr captured.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
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

export interface CliRun {
  child: ChildProcess;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** The exit code; 'close' waits for every holder of the stdio pipes, the inherited workers included. */
  exited: Promise<number | null>;
}

/** `vrp …` from source as a long-running child process (`vrp node serve`), with stderr collected and its exit awaited. */
export function vrpCli(args: string[]): CliRun {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=vrpkit-source', bin, ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((done) => child.on('close', done));
  return { child, stderr: () => stderr, exited };
}

/** The first stdout line of `vrp node serve --json` (the listening event), as the CLI documents it. */
export interface ListeningEvent {
  event: string;
  origin: string;
  port: number;
  ca: string;
  workers?: number;
  worker_pids?: number[];
}

/** Read the listening event from a running `vrp node serve --json`. */
export async function listeningEvent(run: CliRun): Promise<ListeningEvent> {
  return JSON.parse((await createInterface({ input: run.child.stdout! })[Symbol.asyncIterator]().next()).value as string);
}
