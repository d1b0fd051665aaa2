/**
 * vrpkit installed as a library, the way its users install it: every public package built to
 * dist/, packed with `npm pack`, and the tarballs installed into a fresh project outside the
 * repository (third-party dependencies come from the npm cache or registry). There: the `vrp`
 * bin installed by @vrpkit/cli (`npx --no-install vrp --help`, `npx --no-install vrp verify offer`
 * on an official vector; `--no-install`, so that npx never fetches an unscoped registry `vrp`), `verifyOffer` imported from ESM and
 * type-checked from TypeScript with `moduleResolution: nodenext`, and a node started from the
 * library API and read over https.
 *
 * Installing the dependency tree (a native SQLite build included) takes minutes, so this runs only
 * with VRPKIT_TEST_PACK=1, which .ci/run sets.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ENABLED = process.env.VRPKIT_TEST_PACK === '1';
if (!ENABLED) console.warn('[distribution] skipped: set VRPKIT_TEST_PACK=1 to pack, install and run the packages outside the repository');

const PACKAGES = ['core', 'sql', 'protocol', 'agent', 'node', 'gate', 'conformance', 'platform', 'cli'];
const VECTOR = join(repoRoot, 'examples/conformance/offer/01-valid-fresh.json');
let root: string;
let project: string;

const sh = (cmd: string, args: string[], cwd: string, timeout = 120_000) =>
  run(cmd, args, { cwd, timeout, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: '' } });

describe.skipIf(!ENABLED)('packed packages installed outside the repository', () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'vrpkit-dist-'));
    const tarballs = join(root, 'tarballs');
    project = join(root, 'project');
    await sh('npx', ['tsc', '-b', 'packages/cli', 'packages/conformance', 'examples'], repoRoot, 600_000);
    mkdirSync(tarballs);
    for (const p of PACKAGES) await sh('npm', ['pack', '--silent', '--pack-destination', tarballs, '-w', `packages/${p}`], repoRoot);
    const packed = readdirSync(tarballs).filter((f) => f.endsWith('.tgz'));
    expect(packed).toHaveLength(PACKAGES.length);
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'vrpkit-user', private: true, type: 'module' }));
    await sh(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', ...packed.map((f) => join(tarballs, f))],
      project,
      20 * 60_000,
    );
    const v = JSON.parse(readFileSync(VECTOR, 'utf8'));
    writeFileSync(join(project, 'envelope.json'), JSON.stringify(v.input));
    writeFileSync(join(project, 'jwks.json'), JSON.stringify(v.jwks));
  }, 25 * 60_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('installs no source condition: the packages resolve to their dist/ builds', async () => {
    const { stdout } = await sh('node', ['--input-type=module', '-e', "console.log(import.meta.resolve('@vrpkit/agent'))"], project);
    expect(stdout.trim()).toMatch(/node_modules\/@vrpkit\/agent\/dist\/index\.js$/);
  });

  it('npx vrp --help and npx vrp verify offer on an official vector', async () => {
    // The `vrp` npx runs here is the project's own bin from @vrpkit/cli, not a registry package.
    expect(realpathSync(join(project, 'node_modules/.bin/vrp'))).toBe(realpathSync(join(project, 'node_modules/@vrpkit/cli/dist/bin.js')));
    const help = await sh('npx', ['--no-install', 'vrp', '--help'], project);
    expect(help.stdout).toContain('conformance');
    const verified = await sh(
      'npx',
      [
        '--no-install',
        'vrp',
        'verify',
        'offer',
        '--envelope',
        'envelope.json',
        '--jwks',
        'jwks.json',
        '--now',
        '2026-06-02T12:05:00Z',
        '--json',
      ],
      project,
    );
    expect(JSON.parse(verified.stdout)).toMatchObject({ status: 'verified', fresh: true, safe_to_quote: true });
  }, 120_000);

  it('imports verifyOffer from ESM', async () => {
    writeFileSync(
      join(project, 'esm.mjs'),
      `import { readFileSync } from 'node:fs';
import { verifyOffer } from '@vrpkit/agent';
const read = (f) => JSON.parse(readFileSync(f, 'utf8'));
const r = verifyOffer({ envelope: read('envelope.json'), jwks: read('jwks.json'), now: '2026-06-02T12:05:00Z' });
console.log(JSON.stringify({ status: r.status, fresh: r.fresh }));
`,
    );
    const { stdout } = await sh('node', ['esm.mjs'], project);
    expect(JSON.parse(stdout)).toEqual({ status: 'verified', fresh: true });
  });

  it('type-checks from TypeScript with moduleResolution nodenext', async () => {
    writeFileSync(
      join(project, 'check.ts'),
      `import { type OfferVerificationResult, verifyOffer } from '@vrpkit/agent';
import { checkNode, type NodeConformanceReport } from '@vrpkit/conformance';
const r: OfferVerificationResult = verifyOffer({ envelope: {}, jwks: { keys: [] }, now: 0 });
export const checked: [string, typeof checkNode, NodeConformanceReport | null] = [r.status, checkNode, null];
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          typeRoots: [join(repoRoot, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['check.ts'],
      }),
    );
    await sh('node', [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', '.'], project, 300_000);
    // A wrong import must fail the same check: the types are really being read.
    writeFileSync(join(project, 'check.ts'), `import { verifyOfferTypo } from '@vrpkit/agent';\nexport const x = verifyOfferTypo;\n`);
    await expect(sh('node', [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', '.'], project, 300_000)).rejects.toMatchObject({
      stdout: expect.stringContaining("has no exported member named 'verifyOfferTypo'"),
    });
  }, 600_000);

  it('starts a node from the library API and serves its discovery document over https', async () => {
    writeFileSync(
      join(project, 'node.mjs'),
      `import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initNode, serveNode } from '@vrpkit/node';
const dataDir = join(mkdtempSync(join(tmpdir(), 'vrpkit-lib-node-')), 'data');
await initNode({ domain: 'lib.example', dataDir });
const node = await serveNode({ dataDir, dev: true, port: 0 });
const ca = readFileSync(join(dataDir, 'tls', 'ca.pem'), 'utf8');
const body = await new Promise((resolve, reject) => {
  request({ host: '127.0.0.1', port: node.port, path: '/.well-known/vacation-rental.json', servername: 'lib.example', headers: { host: 'lib.example' }, ca }, (res) => {
    let b = '';
    res.on('data', (c) => (b += c));
    res.on('end', () => resolve(b));
  }).on('error', reject).end();
});
console.log(JSON.stringify({ canonical_domain: JSON.parse(body).canonical_domain }));
await node.close();
`,
    );
    const { stdout } = await sh('node', ['node.mjs'], project);
    expect(JSON.parse(stdout)).toEqual({ canonical_domain: 'lib.example' });
  }, 120_000);

  it("the checkout's built bin from any folder, as docs/gateway.md's desktop client configuration runs it (issue 36)", async () => {
    // The documented entry, with this checkout for /path/to/vrpkit, this test's folders for the
    // store and the projects, and the server from node_modules instead of `npx -y` (no registry).
    const doc = readFileSync(join(repoRoot, 'docs/gateway.md'), 'utf8');
    const config = JSON.parse(/## Desktop client configuration[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)![1]!);
    const entry = config.mcpServers.filesystem as { command: string; args: string[] };
    expect(entry.command).toBe('node');
    const server = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
    const args = entry.args
      .map((a) => a.replace('/path/to/vrpkit/', repoRoot).replace('/home/me/.config/vrp/gate.db', join(root, 'desktop-gate.db')))
      .map((a) => (a === '/home/me/projects' ? project : a));
    const at = args.indexOf('npx');
    args.splice(at, 3, process.execPath, server);
    expect(args[0]).toBe(join(repoRoot, 'packages/cli/dist/bin.js'));
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    // The client's own folder (outside the checkout), and a PATH without the checkout's tsx.
    const transport = new StdioClientTransport({ command: process.execPath, args, cwd: root, stderr: 'pipe' });
    let logs = '';
    transport.stderr?.on('data', (d) => {
      logs += d;
    });
    const client = new Client({ name: 'desktop-client', version: '1.0.0' });
    await client.connect(transport);
    try {
      // Nothing is pinned yet: no tool is listed, and the log says why.
      expect((await client.listTools()).tools).toEqual([]);
      await expect.poll(() => logs, { timeout: 10_000 }).toContain('"event":"tools_held_until_pinned"');
    } finally {
      await client.close();
    }
  }, 120_000);
});
