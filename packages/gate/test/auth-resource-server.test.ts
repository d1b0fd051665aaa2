/**
 * The listener's resource server (issue 33 item 1) against a real authorization server
 * (`oidc-provider`, started here): every accepted token was issued by it; every refused one is an
 * attacker's token or one the server issued for something else.
 */
import { startAuthorizationServer, type TestAuthorizationServer } from '@vrpkit/testkit/oidc';
import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectedResourceMetadataUrl, ResourceServer } from '../src/auth/resource-server.js';

const RESOURCE = 'http://127.0.0.1:9/mcp';
const alice = { client_id: 'alice-agent', client_secret: 'alice-secret-0123456789abcdef', groups: ['staff'] };
const gateRs = { client_id: 'gateway-rs', client_secret: 'gateway-secret-0123456789abcdef' };

let as: TestAuthorizationServer;
let rs: ResourceServer;

beforeAll(async () => {
  as = await startAuthorizationServer({ clients: [alice, gateRs] });
  rs = new ResourceServer({
    resource: RESOURCE,
    issuer: as.issuer,
    validation: { kind: 'jwt' },
    scopesSupported: ['tools:read', 'tools:call'],
  });
});
afterAll(() => as?.close());

const bearer = (token: string) => `Bearer ${token}`;

describe('protected resource metadata (RFC 9728)', () => {
  it('is served at the path-inserted well-known URL and names the authorization server', () => {
    expect(protectedResourceMetadataUrl('https://gw.example/mcp')).toBe('https://gw.example/.well-known/oauth-protected-resource/mcp');
    expect(protectedResourceMetadataUrl('https://gw.example/')).toBe('https://gw.example/.well-known/oauth-protected-resource');
    expect(rs.metadata()).toEqual({
      resource: RESOURCE,
      authorization_servers: [as.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['tools:read', 'tools:call'],
    });
  });

  it('a request without a token gets 401 whose challenge names the metadata and no error (RFC 6750 §3.1)', async () => {
    const r = await rs.authenticate(undefined);
    expect(r).toMatchObject({ ok: false, code: 'auth_token_missing', status: 401 });
    expect(!r.ok && r.challenge).toBe(`Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"`);
  });
});

describe('JWT access tokens (RFC 9068)', () => {
  it('accepts a token the server issued for this resource: subject, client, scopes and groups become the principal', async () => {
    const token = await as.clientCredentialsToken(alice, RESOURCE, 'tools:read tools:call');
    const r = await rs.authenticate(bearer(token));
    expect(r).toEqual({
      ok: true,
      principal: {
        issuer: as.issuer,
        subject: 'alice-agent',
        clientId: 'alice-agent',
        scopes: ['tools:read', 'tools:call'],
        groups: ['staff'],
        expiresAt: decodeJwt(token).exp,
      },
    });
  });

  it('refuses a token issued for another resource (RFC 8707 audience)', async () => {
    const token = await as.clientCredentialsToken(alice, 'http://127.0.0.1:9/other');
    expect(await rs.authenticate(bearer(token))).toMatchObject({ ok: false, code: 'auth_token_audience', status: 401 });
  });

  it('refuses a token signed by a key the server does not publish, after refetching its JWKS', async () => {
    const issued = decodeJwt(await as.clientCredentialsToken(alice, RESOURCE));
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT(issued).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'attacker' }).sign(privateKey);
    const r = await rs.authenticate(bearer(forged));
    expect(r).toMatchObject({ ok: false, code: 'auth_token_signature', status: 401 });
    expect(!r.ok && r.challenge).toContain('error="invalid_token"');
  });

  it('refuses the server kid with another key’s signature', async () => {
    const issued = decodeJwt(await as.clientCredentialsToken(alice, RESOURCE));
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT(issued).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'test-es256-1' }).sign(privateKey);
    expect(await rs.authenticate(bearer(forged))).toMatchObject({ ok: false, code: 'auth_token_signature' });
  });

  it('refuses alg none and a symmetric algorithm', async () => {
    const issued = decodeJwt(await as.clientCredentialsToken(alice, RESOURCE));
    const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const none = `${part({ alg: 'none', typ: 'at+jwt' })}.${part(issued)}.`;
    expect(await rs.authenticate(bearer(none))).toMatchObject({ ok: false, status: 401 });
    const hs = await new SignJWT(issued).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).sign(new TextEncoder().encode('x'.repeat(32)));
    expect(await rs.authenticate(bearer(hs))).toMatchObject({ ok: false, code: 'auth_token_algorithm', status: 401 });
  });

  it('refuses an expired token', async () => {
    // `iat`/`exp` are whole seconds: a token of 1 s issued late in a second may be expired within
    // milliseconds (a fresh clone's suite saw it). 3 s leaves the first check at least 2 s.
    const short = await startAuthorizationServer({ clients: [alice], accessTokenTtl: 3 });
    try {
      const shortRs = new ResourceServer({ resource: RESOURCE, issuer: short.issuer, validation: { kind: 'jwt' } });
      const token = await short.clientCredentialsToken(alice, RESOURCE);
      expect((await shortRs.authenticate(bearer(token))).ok).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 4100));
      expect(await shortRs.authenticate(bearer(token))).toMatchObject({ ok: false, code: 'auth_token_expired', status: 401 });
    } finally {
      await short.close();
    }
  });

  it('too little scope is 403 with a step-up challenge naming the scope', async () => {
    const strict = new ResourceServer({ resource: RESOURCE, issuer: as.issuer, validation: { kind: 'jwt' }, baseScopes: ['tools:call'] });
    const token = await as.clientCredentialsToken(alice, RESOURCE, 'tools:read');
    const r = await strict.authenticate(bearer(token));
    expect(r).toMatchObject({ ok: false, code: 'auth_insufficient_scope', status: 403 });
    expect(!r.ok && r.challenge).toContain('error="insufficient_scope", scope="tools:call"');
  });

  it('an unreachable authorization server fails closed (503), never as a pass', async () => {
    const gone = new ResourceServer({ resource: RESOURCE, issuer: 'http://127.0.0.1:9', validation: { kind: 'jwt' } });
    const token = await as.clientCredentialsToken(alice, RESOURCE);
    expect(await gone.authenticate(bearer(token))).toMatchObject({ ok: false, code: 'auth_server_unavailable', status: 503 });
  });
});

describe('introspection (RFC 7662)', () => {
  it('accepts an active opaque token for this resource and refuses an unknown or foreign one', async () => {
    const opaque = await startAuthorizationServer({ clients: [alice, gateRs], accessTokenFormat: 'opaque' });
    try {
      const introspecting = new ResourceServer({
        resource: RESOURCE,
        issuer: opaque.issuer,
        validation: { kind: 'introspection', clientId: gateRs.client_id, clientSecret: gateRs.client_secret },
      });
      const token = await opaque.clientCredentialsToken(alice, RESOURCE, 'tools:read');
      expect(token.split('.')).toHaveLength(1);
      expect(await introspecting.authenticate(bearer(token))).toMatchObject({
        ok: true,
        principal: { subject: 'alice-agent', clientId: 'alice-agent', scopes: ['tools:read'] },
      });
      expect(await introspecting.authenticate(bearer('not-a-token-the-server-issued'))).toMatchObject({
        ok: false,
        code: 'auth_token_inactive',
      });
      const foreign = await opaque.clientCredentialsToken(alice, 'http://127.0.0.1:9/other');
      expect(await introspecting.authenticate(bearer(foreign))).toMatchObject({ ok: false, code: 'auth_token_audience' });
      const wrongSecret = new ResourceServer({
        ...introspecting.config,
        validation: { kind: 'introspection', clientId: gateRs.client_id, clientSecret: 'nope' },
      });
      expect(await wrongSecret.authenticate(bearer(token))).toMatchObject({ ok: false, code: 'auth_server_unavailable', status: 503 });
    } finally {
      await opaque.close();
    }
  });
});
