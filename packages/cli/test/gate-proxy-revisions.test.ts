/**
 * Issue 32 acceptance, the gateway rows: an SDK v2 client pinned to MCP 2026-07-28 and an SDK v1
 * client on 2025-11-25 each list and call tools through `vrp gate proxy` in front of
 * `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-filesystem` (both
 * 2025-only servers on SDK v1), with the agent over stdio and over Streamable HTTP (`--listen`),
 * with the shipped example policies. Each agent's negotiated revision is checked, so a proxy that
 * answered a pinned 2026 client on 2025 (or refused it) fails here.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot, runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentOverStdio,
  everythingServer,
  filesystemServer,
  type ListeningProxy,
  proxyOverHttp,
  removeTmpDirs,
  SPAWN,
  tmp,
  vrpArgs,
  vrpOk,
} from './support/gate-proxy.js';

afterAll(removeTmpDirs);

/** A call each downstream answers from the hot envelope of its example policy, and what its text says. */
const DOWNSTREAMS = [
  {
    name: 'server-everything',
    policy: join(repoRoot, 'examples/policies/everything.yaml'),
    command: (_dir: string) => [everythingServer, 'stdio'],
    call: { name: 'echo', arguments: { message: 'both revisions' } },
    says: 'Echo: both revisions',
  },
  {
    name: 'server-filesystem',
    policy: join(repoRoot, 'examples/policies/filesystem.yaml'),
    command: (dir: string) => [filesystemServer, dir],
    call: { name: 'list_allowed_directories', arguments: {} },
    says: 'Allowed directories',
  },
] as const;

/** The agents of one row: the v2 client pinned to 2026-07-28 and the v1 client on 2025-11-25. */
const REVISIONS = ['2026-07-28', '2025-11-25'] as const;

/** The text of a result (what the downstream wrote). */
function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

/** An SDK v2 client pinned to 2026-07-28 (no fallback: a proxy that cannot serve it fails the connect). */
function pinnedClient(): Client {
  return new Client({ name: 'v2-agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
}

/** The common surface of both SDKs' clients this file uses. */
interface Agent {
  revision: string | undefined;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

describe.each(DOWNSTREAMS)('vrp gate proxy in front of $name', (downstream) => {
  const dir = tmp();
  const store = join(dir, 'gate.db');
  const proxyArgs = [
    '--policy',
    downstream.policy,
    '--store',
    store,
    '--name',
    downstream.name,
    '--approval-timeout',
    '0',
    '--',
    process.execPath,
    ...downstream.command(dir),
  ];
  let listening: ListeningProxy;
  const agents = new Map<string, Agent>();

  beforeAll(async () => {
    listening = await proxyOverHttp(proxyArgs);
    const v1Http = await listening.connect();
    // The first listing records what the downstream shows; a person pins it (here: all of it).
    expect((await v1Http.listTools()).tools).toEqual([]);
    await vrpOk(['gate', 'tools', 'pin', '--all', '--store', store]);

    const v2Http = pinnedClient();
    await v2Http.connect(
      new StreamableHTTPClientTransport(new URL(listening.url), {
        requestInit: { headers: { authorization: `Bearer ${listening.token}` } },
      }),
    );
    const v1Stdio = (await agentOverStdio(proxyArgs)).client;
    const v2Stdio = pinnedClient();
    await v2Stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...vrpArgs, 'gate', 'proxy', ...proxyArgs],
        cwd: repoRoot,
        env: process.env as Record<string, string>,
        stderr: 'ignore',
      }),
    );
    const v1 = (c: typeof v1Http): Agent => Object.assign(c, { revision: '2025-11-25' }) as unknown as Agent;
    const v2 = (c: Client): Agent => Object.assign(c, { revision: c.getNegotiatedProtocolVersion() }) as unknown as Agent;
    agents.set('http 2025-11-25', v1(v1Http));
    agents.set('http 2026-07-28', v2(v2Http));
    agents.set('stdio 2025-11-25', v1(v1Stdio));
    agents.set('stdio 2026-07-28', v2(v2Stdio));
  }, SPAWN.timeout);
  afterAll(async () => {
    for (const [key, agent] of agents) if (key.startsWith('stdio')) await agent.close().catch(() => {});
    await listening?.stop();
  });

  describe.each(['stdio', 'http'] as const)('agent over %s', (side) => {
    it.each(REVISIONS)('a client on %s lists the pinned tools and calls one', async (revision) => {
      const agent = agents.get(`${side} ${revision}`)!;
      expect(agent.revision).toBe(revision);
      const names = (await agent.listTools()).tools.map((t) => t.name);
      expect(names).toContain(downstream.call.name);
      const result = (await agent.callTool({ ...downstream.call })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain(downstream.says);
    });
  });
});

describe('--allowed-host (Host/Origin names accepted besides loopback)', () => {
  it('needs --listen: a usage error that starts nothing', async () => {
    const r = await runVrpInProcess([
      'gate',
      'proxy',
      '--policy',
      'p.yaml',
      '--store',
      's.db',
      '--allowed-host',
      'gate.internal',
      '--',
      'x',
    ]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--allowed-host needs --listen/);
  });
});

describe('--auth-class-scope (scopes per tool class)', () => {
  const proxyWith = (...extra: string[]) =>
    runVrpInProcess(['gate', 'proxy', '--policy', 'p.yaml', '--store', 's.db', '--listen', '127.0.0.1:0', ...extra, '--', 'x']);

  it('is a usage error that starts nothing without --auth-issuer, with an unknown class, or without scopes', async () => {
    const cases: [string[], RegExp][] = [
      [['--auth-class-scope', 'FINANCIAL=payments'], /--auth-class-scope need --auth-issuer/],
      [
        ['--auth-issuer', 'https://as.example', '--auth-resource', 'http://127.0.0.1:1/mcp', '--auth-class-scope', 'MONEY=payments'],
        /unknown consequence class MONEY/,
      ],
      [
        ['--auth-issuer', 'https://as.example', '--auth-resource', 'http://127.0.0.1:1/mcp', '--auth-class-scope', 'FINANCIAL='],
        /must be CLASS=SCOPES/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await proxyWith(...args);
      expect(r.code, args.join(' ')).toBe(64);
      expect(r.stderr).toMatch(message);
    }
  });
});
