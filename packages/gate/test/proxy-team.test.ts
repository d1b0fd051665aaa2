/**
 * The gateway for a team (issue 33 items 1–2): `startProxy` with an OAuth resource server on its
 * HTTP listener and a policy set, a real `oidc-provider` issuing every token, an SDK v2 downstream,
 * and the official SDK clients as two users' agents. Two users get different tool lists and
 * different decisions; the audit log names each, and its chain still verifies; a request without a
 * valid token for this resource reaches nothing.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type GateStore, loadPolicy, openSqliteStore, verifyAuditChain } from '@vrpkit/gate';
import { startAuthorizationServer, type TestAuthorizationServer } from '@vrpkit/testkit/oidc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPolicySet } from '../src/auth/policy-set.js';
import { ResourceServer } from '../src/auth/resource-server.js';
import { type RunningProxy, startProxy } from '../src/proxy/index.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { startV2HttpServer } from './procs/mcp-v2-server.js';
import { agentWithToken, freePort, teamAgent } from './procs/team-agent.js';

const alice = { client_id: 'alice-agent', client_secret: 'alice-secret-0123456789abcdef0123', groups: ['staff'] };
const bob = { client_id: 'bob-agent', client_secret: 'bob-secret-0123456789abcdef01234', groups: ['contractors'] };

let as: TestAuthorizationServer;
let store: GateStore;
let proxy: RunningProxy;
let downstream: Awaited<ReturnType<typeof startV2HttpServer>>;
let resource: string;
const dir = tmpDir('proxy-team');

beforeAll(async () => {
  as = await startAuthorizationServer({ clients: [alice, bob] });
  downstream = await startV2HttpServer('dual');
  const rules = [
    'tools:',
    '  - { tool: "read_*", consequence_class: INFORMATIONAL }',
    'hot_envelopes:',
    '  - { name: reads, consequence_classes: [INFORMATIONAL] }',
  ];
  writeFileSync(join(dir, 'staff.yaml'), ['version: 1', 'policy_id: staff', 'informative_defaults: false', ...rules].join('\n'));
  writeFileSync(
    join(dir, 'contractors.yaml'),
    ['version: 1', 'policy_id: contractors', 'informative_defaults: false', 'allowed_tools: [read_echo]', ...rules].join('\n'),
  );
  writeFileSync(
    join(dir, 'team.yaml'),
    [
      'version: 1',
      'policy_set_id: team',
      'default: staff.yaml',
      'members:',
      '  - { name: contractors, when: { group: contractors }, policy: contractors.yaml }',
    ].join('\n'),
  );
  const port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  store = await openSqliteStore(join(dir, 'gate.db'));
  proxy = await startProxy({
    policy: loadPolicy({ version: 1, policy_id: 'unused' }),
    store,
    name: 'team',
    downstream: { kind: 'http', url: downstream.url, headers: {} },
    listen: { host: '127.0.0.1', port },
    pinOnFirstUse: true,
    log: () => {},
    auth: {
      resourceServer: new ResourceServer({ resource, issuer: as.issuer, validation: { kind: 'jwt' } }),
      policySet: loadPolicySet(join(dir, 'team.yaml')),
    },
  });
});
afterAll(async () => {
  await proxy?.stop();
  await store?.close();
  await downstream?.close();
  await as?.close();
  removeTmpDirs();
});

function agentOf(user: typeof alice): Promise<Client> {
  return teamAgent(as, user, resource);
}

describe('a team behind one gateway', () => {
  it('two users get different tool lists and different decisions from their policies', async () => {
    const [a, b] = [await agentOf(alice), await agentOf(bob)];
    try {
      expect((await a.listTools()).tools.map((t) => t.name).sort()).toEqual(['read_echo', 'read_grow']);
      expect((await b.listTools()).tools.map((t) => t.name)).toEqual(['read_echo']);
      expect((await b.callTool({ name: 'read_echo', arguments: { text: 'hi' } })).content).toEqual([{ type: 'text', text: 'echo: hi' }]);
      // A tool bob was never shown is refused again at the call: nothing reaches the downstream.
      const calls = downstream.state.calls;
      const refused = await b.callTool({ name: 'read_grow', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('EF_NOT_AUTHORIZED');
      expect(downstream.state.grown).toBe(false);
      expect(downstream.state.calls).toBe(calls);
      expect((await a.callTool({ name: 'read_echo', arguments: { text: 'yo' } })).content).toEqual([{ type: 'text', text: 'echo: yo' }]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('the audit log names each user, and its chain verifies', async () => {
    const log = await store.audit.read({ limit: 100 });
    const actors = new Set(log.filter((e) => e.kind === 'allow' || e.kind === 'deny').map((e) => e.actor));
    expect(actors).toEqual(new Set(['alice-agent', 'bob-agent']));
    expect(log.find((e) => e.kind === 'deny' && e.tool === 'read_grow')?.actor).toBe('bob-agent');
    expect((await verifyAuditChain(store.audit)).ok).toBe(true);
  });

  it('without a valid token for this resource, nothing is forwarded: 401 naming the metadata, which names the server', async () => {
    const calls = downstream.state.calls;
    const post = (authorization?: string) =>
      fetch(resource, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_echo', arguments: { text: 'x' } } }),
      });
    const missing = await post();
    expect(missing.status).toBe(401);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(missing.headers.get('www-authenticate') ?? '')?.[1] as string;
    expect(await (await fetch(metadataUrl)).json()).toMatchObject({ resource, authorization_servers: [as.issuer] });
    const foreign = await post(`Bearer ${await as.clientCredentialsToken(alice, 'http://127.0.0.1:9/other')}`);
    expect(foreign.status).toBe(401);
    expect(await foreign.json()).toMatchObject({ error: 'auth_token_audience' });
    expect(downstream.state.calls).toBe(calls);
  });

  it('a 2025 session is its opener’s alone: another user presenting its id gets an unknown session', async () => {
    const aliceToken = await as.clientCredentialsToken(alice, resource);
    const transport = new V1Transport(new URL(resource), { requestInit: { headers: { authorization: `Bearer ${aliceToken}` } } });
    const v1 = new V1Client({ name: 'alice-v1', version: '1.0.0' });
    await v1.connect(transport);
    try {
      const bobToken = await as.clientCredentialsToken(bob, resource);
      const hijack = await fetch(resource, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${bobToken}`,
          'mcp-session-id': transport.sessionId as string,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
      });
      expect(hijack.status).toBe(404);
      expect((await v1.listTools()).tools.map((t) => t.name).sort()).toEqual(['read_echo', 'read_grow']);
    } finally {
      await v1.close();
    }
  });
});

describe('scopes per tool class (step-up)', () => {
  let scoped: RunningProxy;
  let scopedStore: GateStore;
  let scopedResource: string;

  beforeAll(async () => {
    // read_grow changes the tool list: PERSISTENT_STATE_CHANGE, which this resource asks `tools:admin` for.
    writeFileSync(
      join(dir, 'scoped.yaml'),
      [
        'version: 1',
        'policy_id: scoped',
        'informative_defaults: false',
        // No escalation of unknown provenance here: the test is about the scope, not about approvals.
        'provenance_rules: []',
        'tools:',
        '  - { tool: "read_echo", consequence_class: INFORMATIONAL }',
        '  - { tool: "read_grow", consequence_class: PERSISTENT_STATE_CHANGE }',
        'hot_envelopes:',
        '  - { name: all, consequence_classes: [INFORMATIONAL, PERSISTENT_STATE_CHANGE] }',
      ].join('\n'),
    );
    const port = await freePort();
    scopedResource = `http://127.0.0.1:${port}/mcp`;
    scopedStore = await openSqliteStore(join(dir, 'scoped.db'));
    scoped = await startProxy({
      policy: loadPolicy(join(dir, 'scoped.yaml')),
      store: scopedStore,
      name: 'scoped',
      downstream: { kind: 'http', url: downstream.url, headers: {} },
      listen: { host: '127.0.0.1', port },
      pinOnFirstUse: true,
      log: () => {},
      auth: {
        resourceServer: new ResourceServer({
          resource: scopedResource,
          issuer: as.issuer,
          validation: { kind: 'jwt' },
          classScopes: { INFORMATIONAL: ['tools:read'], PERSISTENT_STATE_CHANGE: ['tools:admin'] },
        }),
      },
    });
  });
  afterAll(async () => {
    await scoped?.stop();
    await scopedStore?.close();
  });

  const call = (token: string, name: string, protocol: '2025-11-25' | '2026-07-28') =>
    fetch(scopedResource, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
        'mcp-protocol-version': protocol,
        ...(protocol === '2026-07-28' ? { 'mcp-method': 'tools/call', 'mcp-name': name } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name,
          arguments: name === 'read_echo' ? { text: 'x' } : {},
          ...(protocol === '2026-07-28'
            ? { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } }
            : {}),
        },
      }),
    });

  it('a token without the class scope gets 403 insufficient_scope naming it, on either revision, and nothing is forwarded', async () => {
    const readOnly = await as.clientCredentialsToken(alice, scopedResource, 'tools:read');
    const before = downstream.state.calls;
    for (const protocol of ['2025-11-25', '2026-07-28'] as const) {
      const refused = await call(readOnly, 'read_grow', protocol);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="tools:admin"/);
      expect(await refused.json()).toMatchObject({ error: 'auth_insufficient_scope' });
    }
    expect(downstream.state.calls).toBe(before);
    expect(downstream.state.grown).toBe(false);
    // The metadata lists every scope the resource asks for, so a client can request them at step-up.
    expect(await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', scopedResource))).json()).toMatchObject({
      scopes_supported: ['tools:read', 'tools:admin'],
    });
  });

  it('the same call with a token carrying the scope goes through (the step-up succeeded)', async () => {
    const client = await agentWithToken(
      'alice-admin',
      await as.clientCredentialsToken(alice, scopedResource, 'tools:read tools:admin'),
      scopedResource,
    );
    try {
      expect((await client.callTool({ name: 'read_echo', arguments: { text: 'ok' } })).content).toEqual([
        { type: 'text', text: 'echo: ok' },
      ]);
      expect((await client.callTool({ name: 'read_grow', arguments: {} })).content).toEqual([{ type: 'text', text: 'grown' }]);
    } finally {
      await client.close();
    }
  });
});
