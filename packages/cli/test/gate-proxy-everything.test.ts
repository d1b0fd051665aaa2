/**
 * `vrp gate proxy` in front of `@modelcontextprotocol/server-everything`, the reference server
 * that exercises every MCP feature, with the shipped example policy
 * (examples/policies/everything.yaml), for an agent over stdio and one over Streamable HTTP:
 * reads run, effects are gated, and resources, prompts, notifications and progress arrive
 * exactly as the same server answers a client connected to it directly.
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, LoggingMessageNotificationSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentOverStdio,
  errorOf,
  everythingServer,
  type ListeningProxy,
  proxyOverHttp,
  removeTmpDirs,
  SPAWN,
  text,
  tmp,
  vrpOk,
} from './support/gate-proxy.js';

const policy = join(repoRoot, 'examples/policies/everything.yaml');

afterAll(removeTmpDirs);

/** The same server, connected to directly: what pass-through must reproduce. */
let direct: Client;
beforeAll(async () => {
  // Declaring what the proxy's client declares (elicitation, issue 32 item 5): the server lists its tools by the client's capabilities.
  direct = new SdkClient({ name: 'direct-agent', version: '1.0.0' }, { capabilities: { elicitation: { form: {}, url: {} } } });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [everythingServer, 'stdio'], stderr: 'ignore' }));
}, SPAWN.timeout);
afterAll(async () => {
  await direct?.close();
});

describe.each(['stdio', 'streamable-http'] as const)('vrp gate proxy in front of server-everything, agent over %s', (side) => {
  const dir = tmp();
  const store = join(dir, 'gate.db');
  let agent: Client;
  let listening: ListeningProxy | undefined;
  let logs: () => string;
  const messages: string[] = [];

  beforeAll(async () => {
    // Escalated calls are denied at once (no wait for a person): this file checks what reaches the server.
    const args = [
      '--policy',
      policy,
      '--store',
      store,
      '--name',
      'everything',
      '--approval-timeout',
      '0',
      '--',
      process.execPath,
      everythingServer,
      'stdio',
    ];
    if (side === 'stdio') {
      const a = await agentOverStdio(args);
      agent = a.client;
      logs = a.logs;
    } else {
      listening = await proxyOverHttp(args);
      agent = await listening.connect();
      logs = listening.logs;
    }
    agent.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      messages.push(String(n.params.data));
    });
    expect((await agent.listTools()).tools).toEqual([]);
    await vrpOk(['gate', 'tools', 'pin', '--all', '--store', store]);
  }, SPAWN.timeout);
  afterAll(async () => {
    if (listening) await listening.stop();
    else await agent?.close();
  });

  it('lists the pinned tools exactly as the server defines them', async () => {
    const proxied = (await agent.listTools()).tools;
    const own = (await direct.listTools()).tools;
    expect(proxied.map((t) => t.name).sort()).toEqual(own.map((t) => t.name).sort());
    const echo = own.find((t) => t.name === 'echo')!;
    expect(proxied.find((t) => t.name === 'echo')).toEqual({
      name: echo.name,
      description: echo.description,
      inputSchema: echo.inputSchema,
      annotations: echo.annotations,
      ...(echo.title !== undefined ? { title: echo.title } : {}),
    });
  });

  it('runs reads (the hot envelope) with the result unchanged', async () => {
    const args = { name: 'get-structured-content', arguments: { location: 'Chicago' } };
    const proxied = (await agent.callTool(args)) as CallToolResult;
    expect(proxied.isError).toBeFalsy();
    expect(proxied).toEqual(await direct.callTool(args));
    expect(text((await agent.callTool({ name: 'echo', arguments: { message: 'hi there' } })) as CallToolResult)).toBe('Echo: hi there');
  });

  it('gates every tool with an effect, and get-env (it would disclose the environment holding the credentials)', async () => {
    for (const name of ['toggle-simulated-logging', 'toggle-subscriber-updates', 'get-env']) {
      const r = (await agent.callTool({ name, arguments: {} })) as CallToolResult;
      expect(errorOf(r), name).toMatchObject({ code: 'EF_APPROVAL_REQUIRED', invoked: false });
    }
    // Nothing reached the server: simulated logging would have sent a message at once.
    expect(messages.filter((m) => /-level message/.test(m))).toEqual([]);
  });

  it('passes resources/* and prompts/* through unchanged', async () => {
    const resources = await agent.listResources();
    expect(resources).toEqual(await direct.listResources());
    expect(resources.resources.length).toBeGreaterThan(0);
    expect(await agent.listResourceTemplates()).toEqual(await direct.listResourceTemplates());
    const uri = resources.resources[0]!.uri;
    expect(await agent.readResource({ uri })).toEqual(await direct.readResource({ uri }));
    const prompts = await agent.listPrompts();
    expect(prompts).toEqual(await direct.listPrompts());
    const get = { name: 'args-prompt', arguments: { city: 'Lisbon', state: 'PT' } };
    expect(await agent.getPrompt(get)).toEqual(await direct.getPrompt(get));
  });

  it('passes the server’s notifications through (a log message answering resources/subscribe)', async () => {
    const uri = (await agent.listResources()).resources[0]!.uri;
    await agent.subscribeResource({ uri });
    await expect
      .poll(() => messages.some((m) => m.includes(`Received Subscribe Resource request for URI: ${uri}`)), { timeout: 20_000 })
      .toBe(true);
    await agent.unsubscribeResource({ uri });
  });

  it('carries progress notifications of a long call to the agent, with its own progress token', async () => {
    const progress: Progress[] = [];
    const r = (await agent.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p),
    })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    // The steps are 100 ms apart, so the first two arrive well before the result. The last one
    // is sent right before the result, and the SDK's Protocol runs notification handlers a
    // microtask after a response in the same read, so any SDK client (the proxy's too) may
    // drop it: progress is best effort, its order is not.
    const seen = progress.map((p) => [p.progress, p.total]);
    expect(seen.slice(0, 2)).toEqual([
      [1, 3],
      [2, 3],
    ]);
    expect([
      [1, 3],
      [2, 3],
      [3, 3],
    ]).toEqual(expect.arrayContaining(seen));
    expect(seen.length).toBeLessThanOrEqual(3);
  });

  it('logs digests, never the arguments', () => {
    expect(logs()).toMatch(/"event":"tools\/call"/);
    expect(logs()).not.toContain('hi there');
  });
});
