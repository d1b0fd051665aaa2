/** Spawn a TypeScript child process the way the tests need it, and read its stdout line by line. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Child {
  proc: ChildProcess;
  /** Resolves with the first stdout line starting with `prefix` (or rejects when the child exits first). */
  waitFor(prefix: string): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

export function spawnProc(
  script: 'crash-dispatch' | 'race-enforce' | 'audit-writer' | 'pg-outage' | 'open-store' | 'consume-stream',
  config: unknown,
): Child {
  const file = fileURLToPath(new URL(`./${script}.ts`, import.meta.url));
  const proc = spawn(process.execPath, ['--import', 'tsx', '--conditions=vrpkit-source', file, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (l: string) => void; reject: (e: Error) => void }[] = [];
  let err = '';
  let buf = '';
  proc.stderr!.on('data', (d) => {
    err += d;
  });
  proc.stdout!.on('data', (d) => {
    buf += d;
    let i = buf.indexOf('\n');
    while (i >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (line.startsWith(w.prefix)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
      i = buf.indexOf('\n');
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('exit', (code, signal) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`child exited (${code ?? signal}) before "${w.prefix}": ${err.slice(-2000)}`));
      resolve({ code, signal });
    });
  });
  return {
    proc,
    exited,
    stderr: () => err,
    waitFor(prefix) {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen) return Promise.resolve(seen);
      if (proc.exitCode !== null || proc.signalCode !== null) return Promise.reject(new Error(`child already exited: ${err.slice(-2000)}`));
      return new Promise((resolve, reject) => waiters.push({ prefix, resolve, reject }));
    },
  };
}
