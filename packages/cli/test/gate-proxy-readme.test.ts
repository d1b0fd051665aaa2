/**
 * The README's gate proxy line, run as written (issue 36 friction): the shipped example policy,
 * `npx -y` for the server, a fresh store. The client lists zero tools, because no person pinned
 * any, and the proxy's log says so once, naming the commands that pin; after `vrp gate tools pin
 * --all` (the command the log names) the client lists them.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { repoRoot, runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vrp-gate-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The README's line: `npm run -s vrp -- gate proxy --policy … --store gate.db -- npx -y @modelcontextprotocol/server-filesystem ~/notes`. */
function readmeProxyLine(): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const line = /^npm run -s vrp -- (gate proxy .+)$/m.exec(readme)?.[1];
  if (!line) throw new Error('README.md has no `npm run -s vrp -- gate proxy …` line');
  return line.split(' ');
}

describe("the README's gate proxy line", () => {
  it('names a policy that exists and npx -y; with nothing pinned the client lists zero tools and the log says why, once; pinning lists them', async () => {
    const args = readmeProxyLine();
    const policy = args[args.indexOf('--policy') + 1]!;
    expect(readFileSync(join(repoRoot, policy), 'utf8')).toContain('policy_id: filesystem');
    expect(args.slice(args.indexOf('--') + 1, -1)).toEqual(['npx', '-y', '@modelcontextprotocol/server-filesystem']);
    const notes = join(dir, 'notes');
    mkdirSync(notes);
    const store = join(dir, 'gate.db');
    // As written, but with this test's store and folder for gate.db and ~/notes.
    const line = args.map((a) => (a === 'gate.db' ? store : a === '~/notes' ? notes : a));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', '--conditions=vrpkit-source', bin, ...line],
      cwd: repoRoot,
      env: process.env as Record<string, string>,
      stderr: 'pipe',
    });
    let logs = '';
    transport.stderr?.on('data', (d) => {
      logs += d;
    });
    const client = new Client({ name: 'readme-agent', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools).toEqual([]);
      await expect.poll(() => logs, { timeout: 10_000 }).toContain('"event":"tools_held_until_pinned"');
      const hint = logs.split('\n').find((l) => l.includes('tools_held_until_pinned'))!;
      expect(JSON.parse(hint).message).toContain(`vrp gate tools pin TOOL… --store ${store}`);
      await client.listTools();
      await new Promise((r) => setTimeout(r, 200));
      expect(logs.match(/tools_held_until_pinned/g)).toHaveLength(1);

      const pinned = await runVrpInProcess(['gate', 'tools', 'pin', '--all', '--store', store]);
      expect(pinned.code, pinned.stderr).toBe(0);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('read_text_file');
    } finally {
      await client.close();
    }
  }, 180_000);
});
