/**
 * The npm scripts as a newcomer runs them (issue 36 frictions), through the real `npm`:
 * SIGINT to the PID of `npm start` stops the whole process tree (npm → node, the node closes and
 * exits); `npm run -s vrp` works from a workspace folder, and the paths on its command line
 * resolve against the folder the user typed it in (npm's INIT_CWD), not the package's folder.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'vrp-npm-scripts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** npm, then the CLI from source (tsx), start in seconds, and in tens of seconds on a loaded machine. */
const SLOW = { timeout: 180_000 };

/** The environment of a person's shell: not the npm script this test itself may run under. */
function shellEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && k !== 'INIT_CWD'));
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('npm start', () => {
  it(
    'SIGINT to the PID of `npm start` stops the node: npm exits and nothing listens any more',
    async () => {
      const npm = spawn('npm', ['start', '--', '--dir', join(dir, 'demo'), '--port', '0', '--quiet'], {
        cwd: repoRoot,
        env: shellEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      npm.stdout!.on('data', (d) => {
        out += d;
      });
      npm.stderr!.on('data', (d) => {
        out += d;
      });
      await expect.poll(() => out, { timeout: 150_000, interval: 100 }).toContain('Ctrl-C stops the node.');
      const port = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(out)![1]);
      expect(await listening(port)).toBe(true);
      npm.kill('SIGINT');
      const code = await Promise.race([exited(npm), new Promise<'still running'>((r) => setTimeout(() => r('still running'), 20_000))]);
      if (code === 'still running') npm.kill('SIGKILL');
      expect(code).not.toBe('still running');
      expect(await listening(port)).toBe(false);
    },
    SLOW.timeout,
  );
});

describe('npm run -s vrp', () => {
  it(
    'works from a workspace folder, with the paths it is given resolved against that folder (INIT_CWD)',
    async () => {
      const folder = join(repoRoot, 'packages/node');
      const dataDir = join(dir, 'from-workspace');
      const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          'npm',
          [
            'run',
            '-s',
            'vrp',
            '--',
            'node',
            'init',
            '--domain',
            'villa.example',
            '--sample',
            '--data-dir',
            relative(folder, dataDir),
            '--json',
          ],
          { cwd: folder, env: shellEnv(), timeout: SLOW.timeout },
          (e, stdout, stderr) => resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      );
      expect(r, r.stderr).toMatchObject({ code: 0 });
      expect(JSON.parse(r.stdout)).toMatchObject({ canonical_domain: 'villa.example' });
      expect(existsSync(join(dataDir, 'node.json'))).toBe(true);
    },
    SLOW.timeout,
  );
});
