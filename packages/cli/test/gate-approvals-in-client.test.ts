/**
 * Approvals inside the client over stdio (issue 32 item 4): `vrp gate proxy --ui` is a real child
 * process in front of `@modelcontextprotocol/server-filesystem`; the agent is an SDK v2 client
 * pinned to 2026-07-28, then an SDK v1 client on 2025-11-25, over the proxy's stdin/stdout, each
 * declaring URL-mode elicitation. The escalated `write_file` sends the client the approvals page's
 * link to exactly that act; the person signs in and approves on that page (real HTTP), and the
 * call runs once. (The HTTP agent side, rejection, "accept" without a decision and a foreign
 * `requestState` are in packages/gate/test/proxy-approval-in-client.test.ts.)
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it } from 'vitest';
import { filesystemServer, removeTmpDirs, SPAWN, tmp, vrpArgs, vrpOk } from './support/gate-proxy.js';

afterAll(removeTmpDirs);

const policy = join(repoRoot, 'examples/policies/filesystem.yaml');

/** The person on the page the link opens: sign in with the page's token, then the link's own Approve form. */
async function approveOnPage(page: { url: string; token: string }, link: string): Promise<string> {
  const token = link.slice(link.lastIndexOf('/') + 1);
  const signin = await fetch(`${page.url}signin`, {
    method: 'POST',
    body: new URLSearchParams({ token: page.token, link: token }),
    redirect: 'manual',
  });
  const cookie = (signin.headers.get('set-cookie') ?? '').split(';')[0]!;
  const html = await (await fetch(link, { headers: { cookie } })).text();
  const approve = html.split('<form').find((f) => f.includes('class="approve"')) ?? '';
  const body = new URLSearchParams([...approve.matchAll(/name="(\w+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!] as [string, string]));
  return (await fetch(`${page.url}decide`, { method: 'POST', headers: { cookie }, body })).text();
}

interface Started {
  connect(
    logs: (d: string) => void,
  ): Promise<{ list(): Promise<unknown>; call(args: Record<string, unknown>): Promise<CallToolResult>; close(): Promise<void> }>;
}

/** The proxy's command line on a fresh store, and the two agents that start it. */
function proxyArgs(dir: string): string[] {
  return [
    'gate',
    'proxy',
    '--policy',
    policy,
    '--store',
    join(dir, 'gate.db'),
    '--name',
    'fs',
    '--ui',
    '--approver',
    'alice',
    '--',
    process.execPath,
    filesystemServer,
    join(dir, 'root'),
  ];
}

const URL_ELICITATION = { elicitation: { url: {} } };

function agents(dir: string, onElicit: (url: string) => Promise<void>): Record<string, Started> {
  const spawnSpec = (stderr: (d: string) => void) => ({
    command: process.execPath,
    args: [...vrpArgs, ...proxyArgs(dir)],
    cwd: repoRoot,
    stderr: 'pipe' as const,
    onStderr: stderr,
  });
  return {
    '2026-07-28': {
      async connect(logs) {
        const c = new V2Client(
          { name: 'v2-agent', version: '1.0.0' },
          { capabilities: URL_ELICITATION, versionNegotiation: { mode: { pin: '2026-07-28' } } },
        );
        c.setRequestHandler('elicitation/create', async (req) => {
          await onElicit((req.params as { url: string }).url);
          return { action: 'accept' };
        });
        const s = spawnSpec(logs);
        const t = new V2Stdio({ command: s.command, args: s.args, cwd: s.cwd, stderr: 'pipe' });
        t.stderr?.on('data', (d) => s.onStderr(String(d)));
        await c.connect(t);
        return {
          list: () => c.listTools(),
          call: (a) => c.callTool({ name: 'write_file', arguments: a }) as Promise<CallToolResult>,
          close: () => c.close(),
        };
      },
    },
    '2025-11-25': {
      async connect(logs) {
        const c = new V1Client({ name: 'v1-agent', version: '1.0.0' }, { capabilities: URL_ELICITATION });
        c.setRequestHandler(ElicitRequestSchema, async (req) => {
          await onElicit((req.params as { url: string }).url);
          return { action: 'accept' };
        });
        const s = spawnSpec(logs);
        const t = new V1Stdio({ command: s.command, args: s.args, cwd: s.cwd, stderr: 'pipe' });
        t.stderr?.on('data', (d) => s.onStderr(String(d)));
        await c.connect(t, SPAWN);
        return {
          list: () => c.listTools(),
          call: (a) => c.callTool({ name: 'write_file', arguments: a }, undefined, { timeout: 120_000 }) as Promise<CallToolResult>,
          close: () => c.close(),
        };
      },
    },
  };
}

describe('vrp gate proxy over stdio: an escalated call sends the client to the approvals page', SPAWN, () => {
  for (const revision of ['2026-07-28', '2025-11-25'] as const) {
    it(`${revision}: the elicited URL opens exactly the act; approved there, the call runs once`, SPAWN, async () => {
      const dir = tmp();
      mkdirSync(join(dir, 'root'));
      let logs = '';
      const urls: string[] = [];
      let decided = '';
      const page = () =>
        JSON.parse(logs.split('\n').find((l) => l.includes('"event":"approvals_page"'))!) as { url: string; token: string };
      const agent = await agents(dir, async (url) => {
        urls.push(url);
        decided = await approveOnPage(page(), url);
      })[revision]!.connect((d) => {
        logs += d;
      });
      try {
        // The agent lists the tools (the proxy records them for review); a person pins write_file.
        const path = join(dir, 'root', 'letter.txt');
        await agent.list();
        await vrpOk(['gate', 'tools', 'pin', 'write_file', '--store', join(dir, 'gate.db')]);
        const r = await agent.call({ path, content: `approved over stdio on ${revision}` });
        expect(r.isError, JSON.stringify(r)).toBeFalsy();
        expect(readFileSync(path, 'utf8')).toBe(`approved over stdio on ${revision}`);
        expect(urls).toHaveLength(1);
        expect(urls[0]).toMatch(new RegExp(`^${page().url}act/[A-Za-z0-9_-]{43}$`));
        expect(decided).toContain('Approved candidate act');
        // One downstream invocation (the log line is written after the answer: polled).
        const invoked = () => logs.split('\n').filter((l) => l.includes('"event":"tools/call"') && l.includes('"invoked":true')).length;
        await expect.poll(invoked).toBe(1);
      } finally {
        await agent.close();
      }
    });
  }
});
