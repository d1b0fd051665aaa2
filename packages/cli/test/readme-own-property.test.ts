/**
 * The README's "Run a node for your own property" block, run as written (issue 36 frictions) by
 * `sh` with HOME in a temp folder: the node's files land outside the checkout, init, key
 * rotation, the backup and the restore (with its passphrase) work as typed, and the secret files
 * those commands name are git-ignored should they land in the checkout. The serving lines (which
 * run until stopped) and the feed line (a placeholder URL) are left out; node.test.ts serves.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it } from 'vitest';

const home = mkdtempSync(join(tmpdir(), 'vrp-readme-home-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** The lines of the README's sh block under `heading`. */
function readmeBlock(heading: string): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const at = readme.indexOf(`## ${heading}\n`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))![1]!;
  return block.trim().split('\n');
}

function sh(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  // A person's shell: HOME is theirs, and none of the npm script this test may run under.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && k !== 'INIT_CWD'));
  return new Promise((resolve) =>
    execFile('sh', ['-c', line], { cwd: repoRoot, env: { ...env, HOME: home }, timeout: 120_000 }, (e, stdout, stderr) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

const git = (args: string[]) => new Promise<string>((resolve) => execFile('git', args, { cwd: repoRoot }, (_e, stdout) => resolve(stdout)));

describe("the README's own-property commands", () => {
  it('run as written: files outside the checkout, init, keys rotate, backup to .vrpbak and restore with the passphrase', async () => {
    const lines = readmeBlock('Run a node for your own property');
    const runnable = lines.filter((l) => !l.includes(' node serve ') && !l.includes('…'));
    expect(runnable.length).toBeGreaterThanOrEqual(7);
    for (const line of runnable) {
      expect(line, 'a path in the checkout').not.toMatch(/ \.\/villa|--data-dir villa|--out villa/);
      const r = await sh(line);
      expect([line, r.code, r.stderr]).toEqual([line, 0, '']);
    }
    const vrp = join(home, 'vrp');
    expect(readdirSync(join(vrp, 'villa-node/keys')).some((f) => f.endsWith('.jwk'))).toBe(true);
    expect(existsSync(join(vrp, 'villa.vrpbak'))).toBe(true);
    // The restore holds the same node: its keys and node.json.
    expect(readFileSync(join(vrp, 'villa-restored/node.json'), 'utf8')).toBe(readFileSync(join(vrp, 'villa-node/node.json'), 'utf8'));
    expect(readdirSync(join(vrp, 'villa-restored/keys')).sort()).toEqual(readdirSync(join(vrp, 'villa-node/keys')).sort());
  }, 600_000);

  it('the secrets they name are git-ignored in the checkout (keys, a restored copy, the passphrase, backups)', async () => {
    const paths = [
      'villa-node/keys/villa.example-2027-01-01-01.jwk',
      'villa-restored/node.json',
      'pass.txt',
      'villa.vrpbak',
      'villa.backup',
    ];
    const ignored = (await git(['check-ignore', '--no-index', ...paths])).trim().split('\n');
    expect(ignored).toEqual(paths);
  });

  it("the node README's restore line gives the passphrase", () => {
    const nodeReadme = readFileSync(join(repoRoot, 'packages/node/README.md'), 'utf8');
    expect(nodeReadme).toMatch(/`vrp node restore --in villa\.vrpbak --data-dir \S+ --passphrase-file FILE`/);
  });
});
