/**
 * `vrp gate proxy` under bad input and a failing downstream, for an agent over stdio and one over
 * Streamable HTTP: malformed JSON-RPC and messages over `--max-message-bytes` get JSON-RPC errors,
 * an unknown tool gets `-32602`, a downstream that hangs gets `downstream_timeout` after
 * `--call-timeout` while other calls are served, and a downstream that crashes is started again
 * (bounded). Every effect is counted at the downstream (support/fake-mcp-server.mjs).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_MAX_BATCH_ITEMS } from '@vrpkit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentOverStdio,
  errorOf,
  fakeServer,
  type ListeningProxy,
  proxyOverHttp,
  rawStdioProxy,
  removeTmpDirs,
  SPAWN,
  tmp,
  vrpOk,
} from './support/gate-proxy.js';

afterAll(removeTmpDirs);

const CAP = 64 * 1024;

/** A store, policy and fake downstream: note_write is a state change in a hot envelope, crash and hang are reads. */
function setup() {
  const dir = tmp();
  const files = {
    store: join(dir, 'gate.db'),
    policy: join(dir, 'policy.json'),
    effects: join(dir, 'effects.log'),
    description: join(dir, 'd.txt'),
  };
  writeFileSync(files.effects, '');
  writeFileSync(files.description, 'Write a note.');
  writeFileSync(
    files.policy,
    JSON.stringify({
      version: 1,
      policy_id: 'notes',
      informative_defaults: false,
      tools: [
        { tool: 'note_write', consequence_class: 'PERSISTENT_STATE_CHANGE' },
        { tool: '*', consequence_class: 'INFORMATIONAL' },
      ],
      hot_envelopes: [{ name: 'all', consequence_classes: ['INFORMATIONAL', 'PERSISTENT_STATE_CHANGE'] }],
      provenance_rules: [],
    }),
  );
  const args = [
    '--policy',
    files.policy,
    '--store',
    files.store,
    '--name',
    'notes',
    '--call-timeout',
    '1',
    '--max-message-bytes',
    String(CAP),
    '--',
    process.execPath,
    fakeServer,
  ];
  const env = { FAKE_EFFECTS_FILE: files.effects, FAKE_DESCRIPTION_FILE: files.description };
  return { ...files, args, env };
}

describe.each(['stdio', 'streamable-http'] as const)('vrp gate proxy with a failing downstream, agent over %s', (side) => {
  const s = setup();
  let agent: Client;
  let listening: ListeningProxy | undefined;
  let logs: () => string;

  beforeAll(async () => {
    if (side === 'stdio') {
      const a = await agentOverStdio(s.args, s.env);
      agent = a.client;
      logs = a.logs;
    } else {
      listening = await proxyOverHttp(s.args, s.env);
      agent = await listening.connect();
      logs = listening.logs;
    }
    await agent.listTools();
    await vrpOk(['gate', 'tools', 'pin', '--all', '--store', s.store]);
  }, SPAWN.timeout);
  afterAll(async () => {
    if (listening) await listening.stop();
    else await agent?.close();
  });

  const write = async (t: string) => (await agent.callTool({ name: 'note_write', arguments: { text: t } })) as CallToolResult;
  const effects = () => readFileSync(s.effects, 'utf8');

  it('refuses an unknown tool with a JSON-RPC error, sending nothing', async () => {
    await expect(agent.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/-32602.*Unknown tool: no_such_tool/);
    expect(effects()).toBe('');
  });

  it('answers a call the downstream never answers with downstream_timeout after --call-timeout, serving other calls meanwhile', async () => {
    const started = Date.now();
    const hung = agent.callTool({ name: 'hang', arguments: {} }) as Promise<CallToolResult>;
    expect((await write('while hanging')).isError).toBeFalsy();
    const r = await hung;
    expect(errorOf(r)).toMatchObject({ code: 'downstream_timeout', invoked: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(effects()).toBe('call hang\ncall note_write\nwrote while hanging\n');
  });

  it('answers a call during which the downstream crashes with downstream_error, and starts the server again for the next call', async () => {
    expect(errorOf((await agent.callTool({ name: 'crash', arguments: {} })) as CallToolResult)).toMatchObject({
      code: 'downstream_error',
      invoked: true,
    });
    expect((await write('after the crash')).isError).toBeFalsy();
    expect(effects()).toContain('wrote after the crash\n');
    // Log lines are written after the answer: wait for them.
    await expect.poll(logs).toMatch(/"event":"downstream_respawned"/);
  });

  it('stops restarting a server that keeps crashing and answers downstream_unavailable without sending', SPAWN, async () => {
    // One respawn already happened above; the rest of the budget goes to crash after crash.
    for (let i = 0; i < 5; i++) await agent.callTool({ name: 'crash', arguments: {} });
    const r = await write('crash loop');
    expect(errorOf(r)).toMatchObject({ code: 'downstream_unavailable', invoked: false });
    expect(effects()).not.toContain('crash loop');
    await expect.poll(logs).toMatch(/"event":"downstream_respawn_limit"/);
  });
});

describe('vrp gate proxy --max-message-bytes', SPAWN, () => {
  it('caps a stdio line with a JSON-RPC -32600 error naming the cap, and goes on reading', async () => {
    const s = setup();
    const proxy = await rawStdioProxy(s.args, s.env);
    try {
      proxy.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(CAP)}"}}`);
      expect(await proxy.next(1)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `message exceeds ${CAP} bytes` } });
      proxy.send('{"jsonrpc":"2.0","id":2,"method":"ping"}');
      expect(await proxy.next(2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    } finally {
      proxy.kill();
    }
  });

  it('answers an HTTP body over the cap with 413 and -32600, one that is not JSON with 400 and -32700, and keeps serving', async () => {
    const s = setup();
    const proxy = await proxyOverHttp(s.args, s.env);
    try {
      const post = (body: string) =>
        fetch(proxy.url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${proxy.token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body,
        });
      const big = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(CAP) } }));
      expect(big.status).toBe(413);
      expect(await big.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `message exceeds ${CAP} bytes` } });
      const notJson = await post('this is not json');
      expect(notJson.status).toBe(400);
      expect(await notJson.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error: the message is not JSON' },
      });
      const emptyBatch = await post('[]');
      expect(emptyBatch.status).toBe(400);
      expect(await emptyBatch.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: an empty batch' },
      });
      // Issue 36 defect 12 (regression): MCP 2025-06-18 has no JSON-RPC batches; before it, at most MCP_MAX_BATCH_ITEMS.
      const pings = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })));
      for (const [version, n] of [
        ['2025-06-18', 2],
        ['2025-03-26', MCP_MAX_BATCH_ITEMS + 1],
      ] as const) {
        const batch = await fetch(proxy.url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${proxy.token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': version,
          },
          body: pings(n),
        });
        expect(batch.status, version).toBe(400);
        expect(await batch.json(), version).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      }
      const notRpc = await post('{"jsonrpc":"2.0","id":3}');
      expect(notRpc.status).toBe(400);
      expect(await notRpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });

      const agent = await proxy.connect();
      await agent.listTools();
      await vrpOk(['gate', 'tools', 'pin', 'note_write', '--store', s.store]);
      expect(((await agent.callTool({ name: 'note_write', arguments: { text: 'fine' } })) as CallToolResult).isError).toBeFalsy();
      // A tools/call over the cap inside a session gets the same answer, and nothing reaches the server.
      const over = agent.callTool({ name: 'note_write', arguments: { text: 'y'.repeat(CAP) } });
      await expect(over).rejects.toThrow();
      expect(readFileSync(s.effects, 'utf8')).toBe('call note_write\nwrote fine\n');
    } finally {
      await proxy.stop();
    }
  });
});

describe('vrp gate proxy --listen: SIGTERM drains (issue 36 defect 2, regression)', () => {
  it('answers a request in flight on a kept-alive connection before it exits, and accepts nothing new', async () => {
    const s = setup();
    const proxy = await proxyOverHttp(s.args, s.env);
    const { hostname, port, pathname } = new URL(proxy.url);
    const socket = netConnect(Number(port), hostname);
    await new Promise<void>((ok) => socket.once('connect', ok));
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    const exited = new Promise<number | null>((done) => proxy.proc.once('exit', (code) => done(code)));
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'drain', version: '1' } },
    });
    socket.write(
      `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${proxy.token}\r\n` +
        `content-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 300)); // the proxy has read the head
    proxy.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const refused = await new Promise<string>((done) => {
      const probe = netConnect(Number(port), hostname);
      probe.once('connect', () => {
        probe.destroy();
        done('connected');
      });
      probe.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    socket.write(body.slice(10));
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toContain('"serverInfo"');
    await exited;
  }, 60_000);
});
