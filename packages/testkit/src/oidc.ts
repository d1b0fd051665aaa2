/**
 * A real OAuth 2.1 / OpenID Connect authorization server for tests: `oidc-provider` (an
 * OpenID-certified implementation) on a loopback port, with its own freshly generated signing key,
 * resource indicators (RFC 8707) issuing JWT access tokens (RFC 9068) for the resources a test
 * names, client credentials, introspection (RFC 7662), and authorization code + PKCE. No token in a
 * test is built by hand: every one is issued by this server.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';

export type { ClientMetadata };

export interface TestClient {
  client_id: string;
  client_secret: string;
  /** Groups written into this client's access tokens (`groups` claim), for per-group policy tests. */
  groups?: string[];
}

export interface TestAuthorizationServer {
  issuer: string;
  provider: Provider;
  /** An access token for `resource` by the client credentials grant. */
  clientCredentialsToken(client: TestClient, resource: string, scope?: string): Promise<string>;
  close(): Promise<void>;
}

export interface TestAuthorizationServerOptions {
  clients: TestClient[];
  /** Scopes a resource may be granted (every resource the same). */
  scopes?: string[];
  /** Access token lifetime in seconds. */
  accessTokenTtl?: number;
  /**
   * Accept RFC 8693 token exchange: a client presents a user's access token that this server issued
   * for `from` (the gateway) and gets one for another resource, for the same user, with the client
   * as the actor (`act`). Off unless given.
   */
  tokenExchange?: { from: string };
  /** `opaque` for introspection tests: oidc-provider introspects opaque tokens only. Default `jwt`. */
  accessTokenFormat?: 'jwt' | 'opaque';
  /** Extra client registrations (e.g. a public client with redirect URIs for the authorization code flow). */
  extraClients?: ClientMetadata[];
  /**
   * Claims of the people who sign in, by login (e.g. `{ carol: { groups: ['approvers'] } }`): each
   * claim is its own scope, and is written into the ID token when that scope is asked for.
   */
  accounts?: Record<string, Record<string, unknown>>;
}

export const DEFAULT_TEST_SCOPES = ['tools:read', 'tools:call', 'tools:admin'];

export async function startAuthorizationServer(options: TestAuthorizationServerOptions): Promise<TestAuthorizationServer> {
  const scopes = options.scopes ?? DEFAULT_TEST_SCOPES;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-es256-1', alg: 'ES256', use: 'sig' };
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const groupsOf = new Map(options.clients.map((c) => [c.client_id, c.groups ?? []]));

  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: [
      ...options.clients.map(
        (c): ClientMetadata => ({
          client_id: c.client_id,
          client_secret: c.client_secret,
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_basic',
          id_token_signed_response_alg: 'ES256',
        }),
      ),
      ...(options.extraClients ?? []),
    ],
    ttl: { ClientCredentials: options.accessTokenTtl ?? 300 },
    scopes: ['openid', 'offline_access', ...scopes],
    ...(options.accounts ? accountClaims(options.accounts) : {}),
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: scopes.join(' '),
          audience: resourceIndicator,
          accessTokenTTL: options.accessTokenTtl ?? 300,
          accessTokenFormat: options.accessTokenFormat ?? 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      // An exchanged token names the client that asked as the actor (RFC 8693 §4.1).
      if ('gty' in token && token.gty === 'token_exchange') return { act: { sub: token.clientId } };
      const groups = groupsOf.get(token.clientId ?? '');
      return groups?.length ? { groups } : undefined;
    },
  });
  if (options.tokenExchange) registerTokenExchange(provider, issuer, jwk, options.tokenExchange.from, options.accessTokenTtl ?? 300);
  server.on('request', provider.callback());

  return {
    issuer,
    provider,
    async clientCredentialsToken(client, resource, scope = scopes.join(' ')) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`token request refused: ${body.error} ${body.error_description ?? ''}`);
      return body.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** oidc-provider's account lookup and claims for `accounts`: the ID token carries the claims its scopes ask for. */
function accountClaims(accounts: Record<string, Record<string, unknown>>) {
  const names = [...new Set(Object.values(accounts).flatMap((claims) => Object.keys(claims)))];
  return {
    claims: { openid: ['sub'], ...Object.fromEntries(names.map((n) => [n, [n]])) },
    // Claims in the ID token itself (not only at userinfo), as a relying party reading its role from the ID token needs.
    conformIdTokenClaims: false,
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub, ...(accounts[sub] ?? {}) }) }),
  };
}

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * RFC 8693 on oidc-provider (it ships no handler for this grant): the subject token must be an
 * access token this server signed for `from`; the new token names the same subject, the requested
 * resource as its audience, and the calling client as the actor (§4.1 `act`).
 */
function registerTokenExchange(provider: Provider, issuer: string, jwk: Record<string, unknown>, from: string, ttl: number): void {
  const { d: _private, ...publicJwk } = jwk;
  const keys = createLocalJWKSet({ keys: [publicJwk] });
  const refuse = (ctx: { status: number; body: unknown }, error: string, description: string) => {
    ctx.status = 400;
    ctx.body = { error, error_description: description };
  };
  provider.registerGrantType(
    TOKEN_EXCHANGE_GRANT,
    async (ctx) => {
      const params = ctx.oidc.params as Record<string, string | undefined>;
      if (params.subject_token_type !== ACCESS_TOKEN_TYPE)
        return refuse(ctx, 'invalid_request', 'subject_token_type must be an access token');
      let sub: string;
      try {
        const { payload } = await jwtVerify(params.subject_token ?? '', keys, { issuer, audience: from, typ: 'at+jwt' });
        sub = payload.sub as string;
      } catch (e) {
        return refuse(ctx, 'invalid_grant', `subject_token: ${(e as Error).message}`);
      }
      const resource = params.resource;
      if (!resource) return refuse(ctx, 'invalid_target', 'resource is required');
      const client = ctx.oidc.client as NonNullable<typeof ctx.oidc.client>;
      const token = new provider.AccessToken({
        accountId: sub,
        client,
        grantId: 'token-exchange',
        gty: 'token_exchange',
        scope: params.scope,
      });
      token.resourceServer = {
        identifier: () => resource,
        audience: resource,
        scope: params.scope ?? '',
        accessTokenTTL: ttl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      } as unknown as typeof token.resourceServer;
      ctx.body = {
        access_token: await token.save(),
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: ttl,
        ...(params.scope ? { scope: params.scope } : {}),
      };
    },
    ['subject_token', 'subject_token_type', 'resource', 'scope', 'requested_token_type', 'audience'],
  );
}

/**
 * Drive oidc-provider's development sign-in and consent pages as a person would, without a browser:
 * follow the authorization URL's redirects, sign in as `login`, consent, and return the final
 * redirect to the client's `redirect_uri` (with `code` and `state`, or an `error`). Cookies are kept
 * as a browser keeps them for one origin.
 */
export async function signInAndConsent(authorizationUrl: URL | string, login: string, redirectUriPrefix: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';', 1);
      const eq = pair.indexOf('=');
      if (eq > 0) cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const send = async (url: URL, init: RequestInit = {}) => {
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie } });
    remember(response);
    return response;
  };
  let url = new URL(authorizationUrl);
  for (let step = 0; step < 20; step++) {
    if (url.href.startsWith(redirectUriPrefix)) return url;
    let response = await send(url);
    const interaction = /\/interaction\/([^/?#]+)$/.exec(url.pathname);
    if (interaction && response.status === 200) {
      const prompt = /name="prompt" value="(\w+)"/.exec(await response.text())?.[1] ?? 'login';
      const body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
      response = await send(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    }
    const location = response.headers.get('location');
    if (!location)
      throw new Error(`sign-in stopped at ${url.pathname} with HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
    url = new URL(location, url);
  }
  throw new Error('sign-in did not reach the redirect URI in 20 steps');
}
