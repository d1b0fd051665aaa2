/**
 * Authority for cooperating servers: on allow the gate forwards its signed authority with the call
 * (MCP `_meta`, an HTTP header), and the server — built on the official MCP SDK, or a plain HTTP
 * server — verifies it against the gate's key and spends it once in its own SQLite file before any
 * effect. A call that bypasses the gate, a replayed authority, an authority for other arguments or
 * another server: all refused at the server, effects counted there.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import {
  AUTHORITY_META_KEY,
  type CooperatingSinkOptions,
  gatedFetch,
  gateMcpClient,
  openSqliteReplayGuard,
  type PolicyDocument,
  requireAuthority,
  verifyForwardedRequest,
} from '@vrpkit/gate';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { hostContext, openTestGate, TEST_POLICY, type TestGate } from './scenarios-gate.js';

const POLICY: PolicyDocument = {
  ...TEST_POLICY,
  policy_id: 'cooperating-v1',
  tools: [...(TEST_POLICY.tools ?? []), { tool: 'http_request', consequence_class: 'PERSISTENT_STATE_CHANGE' }],
  hot_envelopes: [{ name: 'deploys', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['repo_deploy', 'http_request'] }],
};

let t: TestGate | undefined;
const closers: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await t?.close();
  t = undefined;
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  closers.push(() => new Promise<void>((ok) => server.close(() => ok())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A deploy server on the official SDK v2 whose repo_deploy requires the gate's authority, serving
 * both revisions (`createMcpHandler`: 2026-07-28 per request, 2025-11-25 statelessly): the callback
 * gets `ctx.mcpReq._meta` on both, where v1 handed it `extra._meta`.
 */
async function startCooperatingMcpServer(sink: (url: string) => CooperatingSinkOptions) {
  const deploys: string[] = [];
  let url = '';
  const handler = createMcpHandler(() => {
    const mcp = new McpServer({ name: 'deploy', version: '1.0.0' });
    mcp.registerTool(
      'repo_deploy',
      { description: 'Deploy a ref', inputSchema: z.object({ env: z.string(), ref: z.string() }) },
      requireAuthority('repo_deploy', sink(url), async ({ env, ref }) => {
        deploys.push(`${ref}->${env}`);
        return { content: [{ type: 'text' as const, text: 'deployed' }] };
      }),
    );
    return mcp;
  });
  closers.push(() => handler.close());
  url = `${await listen(createServer(getRequestListener((request) => handler.fetch(request))))}/mcp`;
  return { url, deploys };
}

/** The MCP revisions a client speaks to the cooperating server: SDK v2 pinned to 2026-07-28, SDK v1 on 2025-11-25. */
const REVISIONS = ['2026-07-28', '2025-11-25'] as const;
type Revision = (typeof REVISIONS)[number];

async function connect(url: string, revision: Revision = '2026-07-28'): Promise<Client> {
  if (revision === '2025-11-25') {
    const v1 = new V1Client({ name: 'host', version: '1.0.0' });
    await v1.connect(new V1Transport(new URL(url)));
    closers.push(() => v1.close());
    // The gated client wraps the v1 Client the same way: its callTool(params, schema?, options?) sends one tools/call.
    return v1 as unknown as Client;
  }
  const client = new Client({ name: 'host', version: '1.0.0' }, { versionNegotiation: { mode: { pin: revision } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  expect(client.getNegotiatedProtocolVersion()).toBe(revision);
  closers.push(() => client.close());
  return client;
}

describe('MCP: the server checks the forwarded authority itself and spends it once', () => {
  it.each(REVISIONS)(
    '%s: a gated call runs once; bypassing the gate, replaying its authority or changing the arguments is refused at the server',
    async (revision) => {
      t = await openTestGate({ policy: POLICY });
      const guard = openSqliteReplayGuard(join(t.dir, 'server-replay.sqlite'));
      closers.push(() => guard.close?.());
      const gate = t;
      const server = await startCooperatingMcpServer((url) => ({
        keys: [gate.publicJwk],
        gateSinkId: gate.gate.sinkId,
        destination: url,
        replay: guard,
      }));

      // Through the gate: allowed, authority attached, verified and spent at the server.
      const captured: Array<Record<string, unknown>> = [];
      const raw = await connect(server.url, revision);
      const spy = raw.callTool.bind(raw);
      raw.callTool = ((params: { _meta?: Record<string, unknown> }, ...rest: never[]) => {
        captured.push(params._meta ?? {});
        return spy(params as never, ...rest);
      }) as typeof raw.callTool;
      const gated = gateMcpClient(raw, { serverUrl: server.url, context: hostContext(t.gate), attachAuthority: true });
      const ok = await gated.callTool({ name: 'repo_deploy', arguments: { env: 'prod', ref: 'main' } });
      expect(ok.isError).toBeFalsy();
      expect(server.deploys).toEqual(['main->prod']);
      const jws = captured[0]![AUTHORITY_META_KEY] as string;
      expect(jws.split('.')).toHaveLength(3);

      // Another client, not behind the gate: no authority, a replayed one, or one for other arguments.
      const direct = await connect(server.url, revision);
      const call = (args: Record<string, unknown>, meta?: Record<string, unknown>) =>
        direct.callTool({ name: 'repo_deploy', arguments: args, ...(meta ? { _meta: meta } : {}) });
      const codeOf = (r: Awaited<ReturnType<typeof call>>) => JSON.parse((r.content as Array<{ text: string }>)[0]!.text).error.code;
      expect(codeOf(await call({ env: 'prod', ref: 'main' }))).toBe('EF_002');
      expect(codeOf(await call({ env: 'prod', ref: 'main' }, { [AUTHORITY_META_KEY]: jws }))).toBe('EF_005');
      expect(codeOf(await call({ env: 'prod', ref: 'evil' }, { [AUTHORITY_META_KEY]: jws }))).toBe('EF_SCOPE_MISMATCH');
      expect(codeOf(await call({ env: 'prod', ref: 'main' }, { [AUTHORITY_META_KEY]: `${jws.slice(0, -4)}AAAA` }))).toBe('EF_002');
      expect(server.deploys).toEqual(['main->prod']);
    },
  );

  it('an authority issued for another server is refused (EF_DESTINATION_MISMATCH)', async () => {
    t = await openTestGate({ policy: POLICY });
    const guard = openSqliteReplayGuard(join(t.dir, 'server-replay.sqlite'));
    closers.push(() => guard.close?.());
    const gate = t;
    const server = await startCooperatingMcpServer(() => ({
      keys: [gate.publicJwk],
      gateSinkId: gate.gate.sinkId,
      destination: 'mcp://other',
      replay: guard,
    }));
    const gated = gateMcpClient(await connect(server.url), { serverUrl: server.url, context: hostContext(t.gate), attachAuthority: true });
    const r = await gated.callTool({ name: 'repo_deploy', arguments: { env: 'prod', ref: 'main' } });
    expect(JSON.parse((r.content as Array<{ text: string }>)[0]!.text).error.code).toBe('EF_DESTINATION_MISMATCH');
    expect(server.deploys).toEqual([]);
  });
});

describe('HTTP: gatedFetch forwards the authority in a header, verifyForwardedRequest checks it', () => {
  it('the gated POST is accepted once; the same request replayed without the gate is refused', async () => {
    t = await openTestGate({ policy: POLICY });
    const guard = openSqliteReplayGuard(join(t.dir, 'http-replay.sqlite'));
    closers.push(() => guard.close?.());
    const effects: string[] = [];
    const seen: Array<{ headers: Record<string, string>; body: string }> = [];
    let origin = '';
    const gate = t;
    const http = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      seen.push({ headers, body: body.toString('utf8') });
      const request = new Request(`${origin}${req.url}`, { method: req.method ?? 'GET', headers, ...(body.length ? { body } : {}) });
      const v = await verifyForwardedRequest(request, {
        keys: [gate.publicJwk],
        gateSinkId: gate.gate.sinkId,
        destination: origin,
        replay: guard,
      });
      if (!v.ok) {
        res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ code: v.code }));
        return;
      }
      effects.push(body.toString('utf8'));
      res.writeHead(201).end();
    });
    origin = await listen(http);
    const f = gatedFetch({ context: hostContext(t.gate), attachAuthority: true });
    const res = await f(`${origin}/deploys`, { method: 'POST', body: '{"ref":"main"}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(201);
    expect(effects).toEqual(['{"ref":"main"}']);
    // Replay the exact request the gate sent, authority header included, straight to the server.
    const sent = seen[0]!;
    const replay = await fetch(`${origin}/deploys`, {
      method: 'POST',
      body: sent.body,
      headers: { 'content-type': 'application/json', 'agent-finality-authority': sent.headers['agent-finality-authority']! },
    });
    expect(replay.status).toBe(403);
    expect(await replay.json()).toEqual({ code: 'EF_005' });
    expect(effects).toHaveLength(1);
  });
});

describe('issue 36 defect 20: the replay guard purges only what the verifier refuses as expired (one clock)', () => {
  it('an authority still valid by the sink’s clock stays spent, whatever the guard host’s own clock says', async () => {
    // The gate and the sink run an hour behind the guard's host clock (the system clock).
    const behind = { now: () => Date.now() - 3_600_000 };
    t = await openTestGate({ policy: POLICY, clock: behind });
    const guard = openSqliteReplayGuard(join(t.dir, 'clock-replay.sqlite'));
    closers.push(() => guard.close?.());
    const gate = t;
    const sink = (url: string): CooperatingSinkOptions => ({
      keys: [gate.publicJwk],
      gateSinkId: gate.gate.sinkId,
      destination: url,
      replay: guard,
      clock: behind,
    });
    const server = await startCooperatingMcpServer(sink);
    const captured: Array<Record<string, unknown>> = [];
    const raw = await connect(server.url);
    const spy = raw.callTool.bind(raw);
    raw.callTool = ((params: { _meta?: Record<string, unknown> }, ...rest: never[]) => {
      captured.push(params._meta ?? {});
      return spy(params as never, ...rest);
    }) as typeof raw.callTool;
    const gated = gateMcpClient(raw, { serverUrl: server.url, context: hostContext(t.gate, { clock: behind }), attachAuthority: true });
    expect((await gated.callTool({ name: 'repo_deploy', arguments: { env: 'prod', ref: 'main' } })).isError).toBeFalsy();
    // Enough other authorities spent to make the guard purge (it purges every 1000 inserts).
    for (let i = 0; i < 1000; i++) await guard.consume(`filler-${i}`, behind.now() + 3_600_000, behind.now());
    const direct = await connect(server.url);
    const again = await direct.callTool({
      name: 'repo_deploy',
      arguments: { env: 'prod', ref: 'main' },
      _meta: { [AUTHORITY_META_KEY]: captured[0]![AUTHORITY_META_KEY] },
    });
    expect(JSON.parse((again.content as Array<{ text: string }>)[0]!.text).error.code).toBe('EF_005');
    expect(server.deploys).toEqual(['main->prod']);
  });
});
