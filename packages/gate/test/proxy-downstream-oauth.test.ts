/**
 * The proxy reaches a downstream that requires OAuth with each user's own token (issue 33 item 4):
 * `startProxy` in team mode (a real `oidc-provider` issuing the listener's tokens), a downstream MCP
 * server (SDK v2) behind bearer auth that checks each token's audience by introspection at its own
 * `oidc-provider` (so a token revoked there is refused at once), and official SDK clients as the
 * users' agents. A user without a token gets the authorization link, signs in over HTTP, the
 * gateway's callback redeems the code, and the retried call passes with that user's token; a short
 * access-token lifetime is refreshed before it ends; a revoked token is refreshed once, and when the
 * refresh fails too the user is asked again; the store never holds a token in clear. On SQLite and,
 * with VRPKIT_TEST_PG_URL, on PostgreSQL.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type GateStore, loadPolicy } from '@vrpkit/gate';
import { signInAndConsent, startAuthorizationServer, type TestAuthorizationServer } from '@vrpkit/testkit/oidc';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceServer } from '../src/auth/resource-server.js';
import { CredentialVault } from '../src/auth/vault.js';
import { type DownstreamOAuthOptions, type ProxyLog, type RunningProxy, startProxy } from '../src/proxy/index.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { type ProtectedMcp, startProtectedMcp } from './procs/protected-mcp.js';
import { agentWithToken, freePort, teamAgent } from './procs/team-agent.js';
import { type StoreDatabase, storeBackends } from './store-backends.js';

const alice = { client_id: 'alice-agent', client_secret: 'alice-secret-0123456789abcdef0123' };
const bob = { client_id: 'bob-agent', client_secret: 'bob-secret-0123456789abcdef01234' };
const carol = { client_id: 'carol-agent', client_secret: 'carol-secret-0123456789abcdef0123' };
const dave = { client_id: 'dave-agent', client_secret: 'dave-secret-0123456789abcdef01234' };
/** The downstream's resource server, introspecting at its authorization server. */
const downstreamRs = { client_id: 'downstream-rs', client_secret: 'downstream-rs-secret-0123456789abcd' };
/** The gateway's pre-registered client at the downstream's authorization server. */
const gatewayClient = { client_id: 'gateway', client_secret: 'gateway-secret-0123456789abcdef0123' };
/** Access tokens at the downstream live this long (seconds): refreshed a quarter of it before they end. */
const DOWNSTREAM_TOKEN_TTL = 4;

const dir = tmpDir('proxy-downstream-oauth');
const backends = storeBackends('proxy-downstream-oauth.test.ts', dir, 'dsoauth');
let listenerAs: TestAuthorizationServer;
let downstreamAs: TestAuthorizationServer;
let downstream: ProtectedMcp;
const ports: number[] = [];

const text = (r: object) => ((r as { content?: { text: string }[] }).content?.[0]?.text ?? '') as string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The proxy in team mode on `port` (tokens from `issuer`), one informational tool allowed, in front of an OAuth-protected `downstream`. */
function startTeamProxy(o: {
  store: GateStore;
  name: string;
  downstream: string;
  port: number;
  issuer: string;
  log: ProxyLog;
  downstreamOAuth: DownstreamOAuthOptions;
}): Promise<RunningProxy> {
  const resource = `http://127.0.0.1:${o.port}/mcp`;
  return startProxy({
    policy: loadPolicy({
      version: 1,
      policy_id: 'team',
      informative_defaults: false,
      tools: [{ tool: 'whoami', consequence_class: 'INFORMATIONAL' }],
      hot_envelopes: [{ name: 'reads', consequence_classes: ['INFORMATIONAL'] }],
    }),
    store: o.store,
    name: o.name,
    downstream: { kind: 'http', url: o.downstream, headers: {} },
    listen: { host: '127.0.0.1', port: o.port },
    pinOnFirstUse: true,
    approvalTimeoutMs: 20_000,
    log: o.log,
    auth: { resourceServer: new ResourceServer({ resource, issuer: o.issuer, validation: { kind: 'jwt' } }) },
    downstreamOAuth: o.downstreamOAuth,
  });
}

beforeAll(async () => {
  for (const _ of backends) ports.push(await freePort());
  listenerAs = await startAuthorizationServer({ clients: [alice, bob, carol, dave] });
  downstreamAs = await startAuthorizationServer({
    clients: [downstreamRs],
    accessTokenTtl: DOWNSTREAM_TOKEN_TTL,
    accessTokenFormat: 'opaque',
    extraClients: [
      {
        ...gatewayClient,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ports.map((p) => `http://127.0.0.1:${p}/oauth/callback`),
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'ES256',
      },
    ],
  });
  downstream = await startProtectedMcp(downstreamAs.issuer, {
    kind: 'introspection',
    clientId: downstreamRs.client_id,
    clientSecret: downstreamRs.client_secret,
  });
});
afterAll(async () => {
  await downstream?.close();
  await downstreamAs?.close();
  await listenerAs?.close();
  removeTmpDirs();
});

/** Revoke an access token at the downstream's authorization server (and, with `grant`, every token of its grant: the refresh token too). */
async function revoke(token: string, grant = false): Promise<void> {
  const { AccessToken, Grant } = downstreamAs.provider;
  const at = await AccessToken.find(token);
  if (!at) throw new Error('the access token is unknown to the authorization server');
  if (grant) await (await Grant.find(at.grantId as string))?.destroy();
  await at.destroy();
}

backends.forEach((backend, i) => {
  describe.skipIf(backend.skip)(`downstream OAuth per user (${backend.name})`, () => {
    let db: StoreDatabase;
    let store: GateStore;
    let proxy: RunningProxy;
    let resource: string;
    let callback: string;
    const logged: string[] = [];

    beforeAll(async () => {
      const port = ports[i] as number;
      resource = `http://127.0.0.1:${port}/mcp`;
      callback = `http://127.0.0.1:${port}/oauth/callback`;
      db = await backend.fresh();
      store = await db.open();
      proxy = await startTeamProxy({
        store,
        name: `dsoauth-${backend.name}`,
        downstream: downstream.url,
        port,
        issuer: listenerAs.issuer,
        log: (event, fields) => {
          logged.push(JSON.stringify({ event, ...fields }));
        },
        downstreamOAuth: {
          mode: 'user',
          credentials: store.downstreamCredentials,
          vault: new CredentialVault(new Uint8Array(32).fill(5 + i)),
          client: gatewayClient,
        },
      });
    });
    afterAll(async () => {
      await proxy?.stop();
      await store?.close();
      await db?.drop();
    });

    const agentOf = (user: typeof alice) => teamAgent(listenerAs, user, resource);

    /** The person opens the link, signs in as `login`, and their browser lands on the gateway's callback. */
    async function authorize(url: string, login: string): Promise<void> {
      const redirect = await signInAndConsent(url, login, callback);
      const page = await fetch(redirect);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Connected');
    }

    /** The first call of a user without a token: the stable code and the link, nothing sent downstream. */
    async function linkFor(agent: Client): Promise<string> {
      const seen = downstream.seen.length;
      const r = await agent.callTool({ name: 'whoami', arguments: {} });
      expect(r.isError).toBe(true);
      const { error } = JSON.parse(text(r)) as { error: { code: string; authorization_url: string; invoked: boolean } };
      expect(error).toMatchObject({ code: 'downstream_authorization_required', invoked: false });
      expect(downstream.seen.length).toBe(seen);
      return error.authorization_url;
    }

    it('each user authorizes once, then reaches the downstream with their own token', async () => {
      const [a, b] = [await agentOf(alice), await agentOf(bob)];
      try {
        const aliceLink = await linkFor(a);
        expect(new URL(aliceLink).origin).toBe(downstreamAs.issuer);
        // Asked again before signing in, the same link (a new one would void the first one's PKCE verifier).
        expect(await linkFor(a)).toBe(aliceLink);
        await authorize(aliceLink, 'alice');
        expect(text(await a.callTool({ name: 'whoami', arguments: {} }))).toBe('alice');
        const aliceToken = downstream.seen.at(-1);
        // Bob has authorized nothing: alice's credential is never used for him.
        await authorize(await linkFor(b), 'bob');
        expect(text(await b.callTool({ name: 'whoami', arguments: {} }))).toBe('bob');
        expect(downstream.seen.at(-1)).not.toBe(aliceToken);
        expect(text(await a.callTool({ name: 'whoami', arguments: {} }))).toBe('alice');
        // The listing goes out with the caller's own credential too.
        expect((await b.listTools()).tools.map((t) => t.name)).toEqual(['whoami']);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('a callback replayed or forged redeems nothing', async () => {
      const replay = await fetch(`${callback}?state=made-up&code=whatever`);
      expect(replay.status).toBe(400);
      expect(await replay.text()).toContain('authorization_unknown_state');
    });

    it('a 2025 client that declared URL elicitation is sent the link in the client, and its call goes on once authorized', async () => {
      const token = await listenerAs.clientCredentialsToken(carol, resource);
      const agent = new V1Client({ name: 'carol-v1', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
      const elicited: string[] = [];
      agent.setRequestHandler(ElicitRequestSchema, async (request) => {
        const url = (request.params as { url?: string }).url as string;
        elicited.push(url);
        // The person agrees, and opens the page (out of band: the answer does not wait for it).
        setTimeout(() => void authorize(url, 'carol'), 50);
        return { action: 'accept' };
      });
      await agent.connect(new V1Transport(new URL(resource), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      try {
        const r = await agent.callTool({ name: 'whoami', arguments: {} });
        expect(text(r)).toBe('carol');
        expect(elicited).toHaveLength(1);
        expect(new URL(elicited[0] as string).origin).toBe(downstreamAs.issuer);
      } finally {
        await agent.close();
      }
    });

    it('a 2026-07-28 client that declared URL elicitation gets the link as an input request, and its retry passes', async () => {
      const token = await listenerAs.clientCredentialsToken(dave, resource);
      const agent = new Client(
        { name: 'dave-v2', version: '1.0.0' },
        { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      const elicited: string[] = [];
      agent.setRequestHandler('elicitation/create', async (request) => {
        const url = (request.params as { url?: string }).url as string;
        elicited.push(url);
        // The person opens the page and signs in; the client then retries the call.
        await authorize(url, 'dave');
        return { action: 'accept' };
      });
      await agent.connect(
        new StreamableHTTPClientTransport(new URL(resource), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      try {
        expect(text(await agent.callTool({ name: 'whoami', arguments: {} }))).toBe('dave');
        expect(elicited).toHaveLength(1);
        expect(new URL(elicited[0] as string).origin).toBe(downstreamAs.issuer);
      } finally {
        await agent.close();
      }
    });

    it('refreshes an access token before it ends: the expiring one is never presented again', async () => {
      const a = await agentOf(alice);
      try {
        expect(text(await a.callTool({ name: 'whoami', arguments: {} }))).toBe('alice');
        const before = downstream.seen.at(-1) as string;
        await sleep((DOWNSTREAM_TOKEN_TTL - 0.7) * 1000); // inside the refresh margin, not yet expired
        const seen = downstream.seen.length;
        expect(text(await a.callTool({ name: 'whoami', arguments: {} }))).toBe('alice');
        expect(downstream.seen.slice(seen)).not.toContain(before);
        expect(downstream.seen.at(-1)).not.toBe(before);
      } finally {
        await a.close();
      }
    });

    it('a token revoked at the authorization server: refreshed once and the call passes', async () => {
      const b = await agentOf(bob);
      try {
        expect(text(await b.callTool({ name: 'whoami', arguments: {} }))).toBe('bob');
        const revoked = downstream.seen.at(-1) as string;
        await revoke(revoked);
        expect(text(await b.callTool({ name: 'whoami', arguments: {} }))).toBe('bob');
        expect(downstream.seen.at(-1)).not.toBe(revoked);
      } finally {
        await b.close();
      }
    });

    it('when the refresh token is revoked too, the user is asked again, and the call passes once they authorize', async () => {
      const b = await agentOf(bob);
      try {
        expect(text(await b.callTool({ name: 'whoami', arguments: {} }))).toBe('bob');
        await revoke(downstream.seen.at(-1) as string, true);
        const r = await b.callTool({ name: 'whoami', arguments: {} });
        const { error } = JSON.parse(text(r)) as { error: { code: string; authorization_url: string } };
        expect(error.code).toBe('downstream_authorization_required');
        await authorize(error.authorization_url, 'bob');
        expect(text(await b.callTool({ name: 'whoami', arguments: {} }))).toBe('bob');
      } finally {
        await b.close();
      }
    });

    it('the store holds every credential sealed: no token the downstream saw is in it in clear', async () => {
      expect(downstream.seen.length).toBeGreaterThan(3);
      const sealed = (
        await Promise.all(
          ['alice-agent', 'bob-agent', 'carol-agent', 'dave-agent'].map((s) =>
            store.downstreamCredentials.get(downstream.url, s, 'tokens'),
          ),
        )
      ).join('\n');
      expect(sealed.split('\n').map((row) => row !== '')).toEqual([true, true, true, true]);
      if ('sqlite' in db.config) {
        // The database file and its write-ahead log, where fresh rows are until a checkpoint.
        const file = db.config.sqlite;
        const bytes = [file, `${file}-wal`]
          .filter((f) => existsSync(f))
          .map((f) => readFileSync(f).toString('latin1'))
          .join('');
        expect(bytes).toContain('gate_downstream_credential');
        for (const token of new Set(downstream.seen)) expect(bytes).not.toContain(token);
      }
      for (const token of new Set(downstream.seen)) expect(sealed).not.toContain(token);
      // Nor the log: users are named by subject, and a user's link never reaches it.
      const log = logged.join('\n');
      expect(log).toContain('downstream_authorized');
      for (const token of new Set(downstream.seen)) expect(log).not.toContain(token);
      expect(log).not.toContain('/auth?');
    });
  });
});

describe('downstream OAuth by token exchange (RFC 8693) through the proxy', () => {
  const exchanger = { client_id: 'gateway-x', client_secret: 'gateway-x-secret-0123456789abcdef' };
  let as: TestAuthorizationServer;
  let xdown: ProtectedMcp;
  let store: GateStore;
  let proxy: RunningProxy;
  let resource: string;
  const logged: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    // One authorization server for the listener's tokens and the downstream's: it exchanges a token issued for the gateway.
    as = await startAuthorizationServer({
      clients: [alice, bob],
      tokenExchange: { from: resource },
      extraClients: [
        {
          ...exchanger,
          grant_types: ['urn:ietf:params:oauth:grant-type:token-exchange'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_basic',
          id_token_signed_response_alg: 'ES256',
        },
      ],
    });
    xdown = await startProtectedMcp(as.issuer);
    const db = await backends[0]!.fresh();
    store = await db.open();
    proxy = await startTeamProxy({
      store,
      name: 'dsoauth-exchange',
      downstream: xdown.url,
      port,
      issuer: as.issuer,
      log: (event, fields) => logged.push(JSON.stringify({ event, ...fields })),
      downstreamOAuth: {
        mode: 'exchange',
        credentials: store.downstreamCredentials,
        vault: CredentialVault.fromMasterKey(new Uint8Array(32).fill(9)),
        client: exchanger,
      },
    });
  });
  afterAll(async () => {
    await proxy?.stop();
    await store?.close();
    await xdown?.close();
    await as?.close();
  });

  it('each user’s token at the gateway becomes theirs at the downstream, with no sign-in and the gateway as the actor', async () => {
    for (const user of [alice, bob]) {
      const token = await as.clientCredentialsToken(user, resource);
      const agent = await agentWithToken(user.client_id, token, resource);
      try {
        expect(text(await agent.callTool({ name: 'whoami', arguments: {} }))).toBe(user.client_id);
      } finally {
        await agent.close();
      }
      const used = xdown.seen.at(-1) as string;
      expect(used).not.toBe(token);
      expect(decodeJwt(used)).toMatchObject({ sub: user.client_id, act: { sub: exchanger.client_id }, aud: xdown.url });
    }
    // No authorization link was needed, and no token was logged.
    expect(logged.some((l) => l.includes('downstream_authorization_required'))).toBe(false);
    for (const token of new Set(xdown.seen)) expect(logged.join('\n')).not.toContain(token);
  });
});
