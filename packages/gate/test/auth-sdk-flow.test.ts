/**
 * The MCP authorization flow end to end (issue 33 acceptance): the official SDK v2 client, told
 * nothing but the MCP endpoint's URL, discovers the authorization server from the 401, runs
 * authorization code + PKCE with the RFC 8707 `resource` against a real `oidc-provider`, and calls a
 * tool on an endpoint guarded by the gateway's resource server (`authenticateRequest`), which hands
 * the token's subject to the tool.
 */
import { Client, type OAuthClientProvider, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { type ClientMetadata, signInAndConsent, startAuthorizationServer, type TestAuthorizationServer } from '@vrpkit/testkit/oidc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProtectedMcp, startProtectedMcp } from './procs/protected-mcp.js';

const REDIRECT = 'http://127.0.0.1:1/callback';
const desktop: ClientMetadata & { client_id: string } = {
  client_id: 'mcp-desktop',
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  redirect_uris: [REDIRECT],
  id_token_signed_response_alg: 'ES256',
};

let as: TestAuthorizationServer;
let downstream: ProtectedMcp;
let mcpUrl: string;

/** The desktop client's side: pre-registered, tokens and verifier kept in memory. */
function desktopProvider() {
  const state: { tokens?: unknown; verifier?: string; authorizationUrl?: URL } = {};
  const provider: OAuthClientProvider = {
    redirectUrl: REDIRECT,
    clientMetadata: { redirect_uris: [REDIRECT], client_name: 'desktop', token_endpoint_auth_method: 'none' },
    clientInformation: () => ({ client_id: desktop.client_id }),
    tokens: () => state.tokens as never,
    saveTokens: (tokens) => {
      state.tokens = tokens;
    },
    redirectToAuthorization: (url) => {
      state.authorizationUrl = url;
    },
    saveCodeVerifier: (verifier) => {
      state.verifier = verifier;
    },
    codeVerifier: () => state.verifier as string,
  };
  return { provider, state };
}

beforeAll(async () => {
  as = await startAuthorizationServer({ clients: [], extraClients: [desktop] });
  downstream = await startProtectedMcp(as.issuer);
  mcpUrl = downstream.url;
});
afterAll(async () => {
  await downstream?.close();
  await as?.close();
});

describe('MCP authorization with the official SDK client', () => {
  it('discovers the server from the 401, signs in with PKCE and the resource, and calls as the signed-in user', async () => {
    const { provider, state } = desktopProvider();
    const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    await expect(new Client({ name: 'desktop', version: '1.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
    const authorizationUrl = state.authorizationUrl as URL;
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl);

    const redirect = await signInAndConsent(authorizationUrl, 'alice', REDIRECT);
    const code = redirect.searchParams.get('code') as string;
    expect(code).toBeTruthy();
    await first.finishAuth(redirect.searchParams);

    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'alice' }]);
    await client.close();

    // The same code again is refused by the authorization server: no second token.
    const replay = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: desktop.client_id,
        redirect_uri: REDIRECT,
        code_verifier: state.verifier as string,
        resource: mcpUrl,
      }),
    });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('answers an unauthenticated request with 401 naming the metadata, which names the authorization server', async () => {
    const r = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ error: 'auth_token_missing', message: 'a bearer access token is required' });
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(r.headers.get('www-authenticate') ?? '')?.[1] as string;
    const metadata = await (await fetch(metadataUrl)).json();
    expect(metadata).toMatchObject({ resource: mcpUrl, authorization_servers: [as.issuer] });
  });
});
