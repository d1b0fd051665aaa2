/**
 * Downstream credentials held by the gateway (issue 33 item 4), against a real `oidc-provider` and a
 * downstream MCP server that requires its tokens: each user authorizes once and is then served with
 * their own token; tokens are sealed at rest (the database file is read to check); refresh before
 * expiry and recovery from `invalid_token` work; a callback's state is single-use.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { openGateStore } from '@vrpkit/gate';
import { signInAndConsent, startAuthorizationServer, type TestAuthorizationServer } from '@vrpkit/testkit/oidc';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationCallbackError, completeAuthorization, DownstreamOAuthProvider } from '../src/auth/downstream-oauth.js';
import { TOKEN_EXCHANGE_GRANT } from '../src/auth/token-exchange.js';
import { CredentialVault } from '../src/auth/vault.js';
import type { GateStore } from '../src/store/gate-store.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { type ProtectedMcp, startProtectedMcp } from './procs/protected-mcp.js';

const CALLBACK = 'http://127.0.0.1:1/oauth/callback';
const gatewayClient = { client_id: 'gateway', client_secret: 'gateway-secret-0123456789abcdef0123' };

let as: TestAuthorizationServer;
let downstream: ProtectedMcp;
let store: GateStore;
let file: string;
const vault = new CredentialVault(new Uint8Array(32).fill(7));
/** Authorization URLs the gateway showed each user. */
const shown = new Map<string, URL>();
let clock = Date.now;

const providerFor = (serverUrl: string, subject: string) =>
  new DownstreamOAuthProvider({
    serverUrl,
    subject,
    credentials: store.downstreamCredentials,
    vault,
    redirectUrl: CALLBACK,
    client: gatewayClient,
    onAuthorizationRequired: (url) => {
      shown.set(subject, url);
    },
    now: () => clock(),
  });

async function callWhoami(subject: string): Promise<string> {
  const client = new Client({ name: 'gateway', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(downstream.url), { authProvider: providerFor(downstream.url, subject) }));
  try {
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    return (result.content as { text: string }[])[0]?.text ?? '';
  } finally {
    await client.close();
  }
}

/** The first call for a user finds no token: the gateway shows the URL, the user signs in, the callback redeems the code. */
async function authorizeOnce(subject: string): Promise<void> {
  await expect(callWhoami(subject)).rejects.toThrow(UnauthorizedError);
  const redirect = await signInAndConsent(shown.get(subject) as URL, subject, CALLBACK);
  expect(await completeAuthorization(redirect.searchParams, store.downstreamCredentials, providerFor)).toEqual({
    serverUrl: downstream.url,
    subject,
  });
}

beforeAll(async () => {
  as = await startAuthorizationServer({
    clients: [],
    accessTokenTtl: 600,
    extraClients: [
      {
        ...gatewayClient,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [CALLBACK],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'ES256',
      },
    ],
  });
  downstream = await startProtectedMcp(as.issuer);
  file = join(tmpDir('downstream-oauth'), 'gate.db');
  store = await openGateStore(file);
});
afterAll(async () => {
  await store?.close();
  await downstream?.close();
  await as?.close();
  removeTmpDirs();
});

describe('downstream OAuth, per user', () => {
  it('each user authorizes once and is then served with their own token', async () => {
    await authorizeOnce('alice');
    expect(await callWhoami('alice')).toBe('alice');
    // Bob has authorized nothing: alice's token is never used for him.
    await expect(callWhoami('bob')).rejects.toThrow(UnauthorizedError);
    await authorizeOnce('bob');
    expect(await callWhoami('bob')).toBe('bob');
    expect(await callWhoami('alice')).toBe('alice');
  });

  it('holds no token, refresh token or verifier in clear: the database file is read', async () => {
    // The database and its write-ahead log, where fresh rows are until a checkpoint.
    const bytes = [file, `${file}-wal`]
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString('latin1'))
      .join('');
    expect(downstream.seen.length).toBeGreaterThan(0);
    for (const token of new Set(downstream.seen)) expect(bytes).not.toContain(token);
    expect(bytes).toContain('gate_downstream_credential');
  });

  it('a callback state is single use: replayed, nothing is redeemed', async () => {
    await expect(callWhoami('carol')).rejects.toThrow(UnauthorizedError);
    const redirect = await signInAndConsent(shown.get('carol') as URL, 'carol', CALLBACK);
    await completeAuthorization(redirect.searchParams, store.downstreamCredentials, providerFor);
    await expect(completeAuthorization(redirect.searchParams, store.downstreamCredentials, providerFor)).rejects.toMatchObject({
      code: 'authorization_unknown_state',
    });
    const forged = new URLSearchParams({ state: 'made-up', code: redirect.searchParams.get('code') as string });
    await expect(completeAuthorization(forged, store.downstreamCredentials, providerFor)).rejects.toBeInstanceOf(
      AuthorizationCallbackError,
    );
  });

  it('refreshes a token about to expire before the call, so the call never meets an expired token', async () => {
    const before = downstream.seen.at(-1);
    clock = () => Date.now() + 590_000; // 10 s before the 600 s token expires: inside the refresh margin
    try {
      expect(await callWhoami('alice')).toBe('alice');
    } finally {
      clock = Date.now;
    }
    const used = downstream.seen.at(-1);
    expect(used).not.toBe(before);
    expect(await callWhoami('alice')).toBe('alice');
    expect(downstream.seen.at(-1)).toBe(used);
  });

  it('on invalid_token refreshes once and carries on with the new token', async () => {
    expect(await callWhoami('bob')).toBe('bob');
    const revoked = downstream.seen.at(-1) as string;
    downstream.reject.add(revoked);
    expect(await callWhoami('bob')).toBe('bob');
    expect(downstream.seen.at(-1)).not.toBe(revoked);
  });
});

describe('downstream OAuth by token exchange (RFC 8693)', () => {
  const GATEWAY = 'http://127.0.0.1:2/mcp';
  const alice = { client_id: 'alice-agent', client_secret: 'alice-secret-0123456789abcdef0123' };
  const exchanger = { client_id: 'gateway-x', client_secret: 'gateway-x-secret-0123456789abcdef' };
  let xas: TestAuthorizationServer;
  let xdown: ProtectedMcp;

  beforeAll(async () => {
    xas = await startAuthorizationServer({
      clients: [alice],
      tokenExchange: { from: GATEWAY },
      extraClients: [
        {
          ...exchanger,
          grant_types: [TOKEN_EXCHANGE_GRANT],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_basic',
          id_token_signed_response_alg: 'ES256',
        },
      ],
    });
    xdown = await startProtectedMcp(xas.issuer);
  });
  afterAll(async () => {
    await xdown?.close();
    await xas?.close();
  });

  const exchangingProvider = (subjectToken: string) =>
    new DownstreamOAuthProvider({
      serverUrl: xdown.url,
      subject: 'alice-agent',
      credentials: store.downstreamCredentials,
      vault,
      redirectUrl: CALLBACK,
      client: exchanger,
      subjectToken,
      onAuthorizationRequired: () => {
        throw new Error('token exchange needs no sign-in');
      },
    });

  async function whoamiAt(provider: DownstreamOAuthProvider): Promise<string> {
    const client = new Client({ name: 'gateway', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(xdown.url), { authProvider: provider }));
    try {
      return ((await client.callTool({ name: 'whoami', arguments: {} })).content as { text: string }[])[0]?.text ?? '';
    } finally {
      await client.close();
    }
  }

  it('the user’s token at the gateway becomes their token at the downstream, with no sign-in', async () => {
    const incoming = await xas.clientCredentialsToken(alice, GATEWAY);
    expect(await whoamiAt(exchangingProvider(incoming))).toBe('alice-agent');
    const used = xdown.seen.at(-1) as string;
    expect(used).not.toBe(incoming);
    // The same user at the downstream, the gateway named as the actor (RFC 8693 §4.1), the downstream the audience.
    expect(decodeJwt(used)).toMatchObject({ sub: 'alice-agent', act: { sub: 'gateway-x' }, aud: xdown.url });
  });

  it('a token the user holds for something else is not exchanged', async () => {
    await store.downstreamCredentials.forget(xdown.url, 'alice-agent');
    const other = await xas.clientCredentialsToken(alice, 'http://127.0.0.1:3/elsewhere');
    await expect(whoamiAt(exchangingProvider(other))).rejects.toMatchObject({ code: 'token_exchange_refused' });
  });
});
