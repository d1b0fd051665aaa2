/**
 * The gateway's listener as an OAuth 2.1 resource server, as the MCP authorization specification
 * (2026-07-28, "Authorization") requires of a protected MCP server:
 * - Protected Resource Metadata (RFC 9728) at the well-known path for the MCP endpoint;
 * - 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728 §5.1) when no token or a bad one;
 * - access tokens validated as JWTs (RFC 9068; keys from the authorization server's JWKS) or by
 *   introspection (RFC 7662), audience bound to this resource (RFC 8707: "MUST validate that access
 *   tokens were issued specifically for them");
 * - too little scope → 403 `insufficient_scope` naming the scopes needed (step-up, RFC 6750 §3.1).
 * Every refusal carries a stable `code`; nothing is forwarded and no token is ever logged.
 */
import { createHash } from 'node:crypto';
import { type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import type { ConsequenceClass } from '../act.js';
import { AuthorizationServer, AuthorizationServerUnavailable } from './authorization-server.js';

/** Asymmetric algorithms only: a symmetric (`HS*`) or `none` token could be minted by anyone holding the verifier's secret, or by anyone. */
export const ACCESS_TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

export type TokenValidation =
  | { kind: 'jwt' }
  /** RFC 7662: the resource server authenticates to the introspection endpoint with client_secret_basic. */
  | { kind: 'introspection'; clientId: string; clientSecret: string };

export interface ResourceServerConfig {
  /** This resource's identifier (RFC 8707 / RFC 9728 `resource`): the MCP endpoint's canonical URL. */
  resource: string;
  /** The authorization server whose tokens this resource accepts (its issuer identifier). */
  issuer: string;
  validation: TokenValidation;
  /** Scopes this resource knows (`scopes_supported`); the ones every call needs by default are `baseScopes`. */
  scopesSupported?: string[];
  /** Scopes every request must carry (checked at authentication; per-tool scopes are checked at the call). */
  baseScopes?: string[];
  /**
   * Scopes a `tools/call` needs by the tool's consequence class, as the caller's policy member
   * classifies it (issue 33 item 1: scopes per tool class), e.g. `{ FINANCIAL: ['payments'] }`;
   * checked at the call, a lack answered 403 `insufficient_scope` naming them (step-up).
   */
  classScopes?: Partial<Record<ConsequenceClass, string[]>>;
  /** The claim that lists a principal's groups (for per-group policy); default `groups`. */
  groupsClaim?: string;
  /** The JWT `typ` header required (RFC 9068 §4: `at+jwt`); some servers write `JWT`. */
  accessTokenType?: string;
}

/** Who is calling: the token's subject and client (the act's `principal` and `agent`). */
export interface Principal {
  issuer: string;
  subject: string;
  /** The OAuth client (`client_id`, or `azp`): with a client ID metadata document, its URL. */
  clientId?: string;
  scopes: string[];
  groups: string[];
  /** Seconds since the epoch. */
  expiresAt?: number;
}

/** Stable codes of the refusals (docs/gateway.md lists them). */
export type AuthRefusalCode =
  | 'auth_token_missing'
  | 'auth_token_invalid'
  | 'auth_token_expired'
  | 'auth_token_audience'
  | 'auth_token_issuer'
  | 'auth_token_signature'
  | 'auth_token_algorithm'
  | 'auth_token_inactive'
  | 'auth_insufficient_scope'
  | 'auth_server_unavailable';

export interface AuthRefusal {
  ok: false;
  code: AuthRefusalCode;
  status: 401 | 403 | 503;
  /** The `WWW-Authenticate` header value to send. */
  challenge: string;
  message: string;
}

export type AuthResult = { ok: true; principal: Principal } | AuthRefusal;

/** RFC 9728 §3.1: the metadata URL inserts `/.well-known/oauth-protected-resource` before the resource's path. */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  return new URL(`/.well-known/oauth-protected-resource${url.pathname.replace(/\/+$/, '')}`, url).href;
}

/** A digest to name a token by in logs and audit (never the token). */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 16);
}

const quoted = (value: string) => `"${value.replace(/["\\]/g, '\\$&')}"`;

export class ResourceServer {
  readonly metadataUrl: string;
  readonly authorizationServer: AuthorizationServer;

  constructor(readonly config: ResourceServerConfig) {
    this.metadataUrl = protectedResourceMetadataUrl(config.resource);
    this.authorizationServer = new AuthorizationServer(config.issuer);
  }

  /** The RFC 9728 document served at `metadataUrl`. */
  metadata(): Record<string, unknown> {
    return {
      resource: this.config.resource,
      authorization_servers: [this.config.issuer],
      bearer_methods_supported: ['header'],
      ...(this.scopesSupported().length ? { scopes_supported: this.scopesSupported() } : {}),
    };
  }

  /** `scopes_supported`: as configured, else every scope this resource asks for (base and per class), so a client can request them. */
  private scopesSupported(): string[] {
    if (this.config.scopesSupported) return this.config.scopesSupported;
    return [...new Set([...(this.config.baseScopes ?? []), ...Object.values(this.config.classScopes ?? {}).flat()])];
  }

  /** The scopes a call of a tool of class `cls` needs that the principal lacks (empty: it may proceed). */
  missingForClass(principal: Principal, cls: ConsequenceClass): string[] {
    return missingScopes(principal, this.config.classScopes?.[cls] ?? []);
  }

  /** The `WWW-Authenticate` value for a refusal (RFC 6750 §3: no `error` when no credentials were sent). */
  challenge(error?: 'invalid_token' | 'insufficient_scope', scopes?: string[]): string {
    const params = [`resource_metadata=${quoted(this.metadataUrl)}`];
    if (error) params.push(`error=${quoted(error)}`);
    if (scopes?.length) params.push(`scope=${quoted(scopes.join(' '))}`);
    return `Bearer ${params.join(', ')}`;
  }

  /** Authenticate a request by its `Authorization` header. */
  async authenticate(authorization: string | undefined): Promise<AuthResult> {
    // RFC 6750 §2.1; the scheme name is case-insensitive (RFC 9110 §11.1).
    const token = /^bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
    if (!token) return this.refuse('auth_token_missing', 'a bearer access token is required');
    let principal: Principal;
    try {
      principal = this.config.validation.kind === 'jwt' ? await this.#verifyJwt(token) : await this.#introspect(token);
    } catch (error) {
      return this.#refusalFor(error);
    }
    const missing = missingScopes(principal, this.config.baseScopes ?? []);
    if (missing.length) return this.insufficientScope(missing);
    return { ok: true, principal };
  }

  /** 403 with the scopes a step-up must ask for (MCP authorization, "Scope Challenge Handling"). */
  insufficientScope(needed: string[]): AuthRefusal {
    return {
      ok: false,
      code: 'auth_insufficient_scope',
      status: 403,
      challenge: this.challenge('insufficient_scope', needed),
      message: `the access token lacks scope ${needed.join(' ')}`,
    };
  }

  refuse(code: Exclude<AuthRefusalCode, 'auth_insufficient_scope'>, message: string): AuthRefusal {
    if (code === 'auth_server_unavailable') return { ok: false, code, status: 503, challenge: this.challenge(), message };
    const challenge = this.challenge(code === 'auth_token_missing' ? undefined : 'invalid_token');
    return { ok: false, code, status: 401, challenge, message };
  }

  async #verifyJwt(token: string): Promise<Principal> {
    const { payload } = await jwtVerify(token, await this.authorizationServer.keys(), {
      issuer: this.config.issuer,
      audience: this.config.resource,
      algorithms: ACCESS_TOKEN_ALGORITHMS,
      typ: this.config.accessTokenType ?? 'at+jwt',
      requiredClaims: ['sub', 'exp'],
    });
    return this.#principal(payload);
  }

  async #introspect(token: string): Promise<Principal> {
    const validation = this.config.validation as Extract<TokenValidation, { kind: 'introspection' }>;
    const { introspection_endpoint } = await this.authorizationServer.metadata();
    if (!introspection_endpoint) throw new AuthorizationServerUnavailable(`${this.config.issuer} publishes no introspection_endpoint`);
    let response: Response;
    try {
      response = await fetch(introspection_endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(validation.clientId)}:${encodeURIComponent(validation.clientSecret)}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        signal: AbortSignal.timeout(5_000),
      });
    } catch (error) {
      throw new AuthorizationServerUnavailable(`introspection: ${(error as Error).message}`);
    }
    if (!response.ok) throw new AuthorizationServerUnavailable(`introspection: HTTP ${response.status}`);
    const claims = (await response.json().catch(() => ({}))) as JWTPayload & { active?: boolean };
    return this.#checkIntrospected(claims);
  }

  /** RFC 7662 §2.2 gives `active`; the audience, issuer and expiry are checked here as a JWT's would be. */
  #checkIntrospected(claims: JWTPayload & { active?: boolean }): Principal {
    if (claims.active !== true) throw new Refused('auth_token_inactive', 'the access token is not active');
    if (claims.iss !== undefined && claims.iss !== this.config.issuer)
      throw new Refused('auth_token_issuer', 'the access token is from another issuer');
    const audiences = typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
    if (!audiences.includes(this.config.resource))
      throw new Refused('auth_token_audience', 'the access token was not issued for this resource');
    if (typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now())
      throw new Refused('auth_token_expired', 'the access token has expired');
    // A client credentials grant has no user: its subject is the client (as RFC 9068 §2.2 writes `sub` for one).
    const subject = claims.sub ?? claims.client_id;
    if (typeof subject !== 'string') throw new Refused('auth_token_invalid', 'the access token names no subject');
    return this.#principal({ ...claims, sub: subject });
  }

  #principal(claims: JWTPayload): Principal {
    const groups = claims[this.config.groupsClaim ?? 'groups'];
    const clientId = claims.client_id ?? claims.azp;
    return {
      issuer: this.config.issuer,
      subject: claims.sub as string,
      ...(typeof clientId === 'string' ? { clientId } : {}),
      scopes: typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [],
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [],
      ...(typeof claims.exp === 'number' ? { expiresAt: claims.exp } : {}),
    };
  }

  #refusalFor(error: unknown): AuthRefusal {
    if (error instanceof Refused) return this.refuse(error.code, error.message);
    if (error instanceof AuthorizationServerUnavailable) return this.refuse('auth_server_unavailable', error.message);
    if (error instanceof joseErrors.JWTExpired) return this.refuse('auth_token_expired', 'the access token has expired');
    if (error instanceof joseErrors.JWTClaimValidationFailed) {
      if (error.claim === 'aud') return this.refuse('auth_token_audience', 'the access token was not issued for this resource');
      if (error.claim === 'iss') return this.refuse('auth_token_issuer', 'the access token is from another issuer');
      return this.refuse('auth_token_invalid', `the access token's ${error.claim} claim is not valid`);
    }
    if (error instanceof joseErrors.JOSEAlgNotAllowed)
      return this.refuse('auth_token_algorithm', 'the access token is not signed with an accepted algorithm');
    if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWSSignatureVerificationFailed) {
      return this.refuse('auth_token_signature', 'the access token is not signed by the authorization server');
    }
    if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) {
      return this.refuse('auth_server_unavailable', 'the authorization server keys could not be read');
    }
    return this.refuse('auth_token_invalid', 'the access token is not a valid access token');
  }
}

class Refused extends Error {
  constructor(
    readonly code: Exclude<AuthRefusalCode, 'auth_insufficient_scope' | 'auth_server_unavailable' | 'auth_token_missing'>,
    message: string,
  ) {
    super(message);
  }
}

/** The scopes of `needed` the principal lacks. */
export function missingScopes(principal: Principal, needed: readonly string[]): string[] {
  return needed.filter((scope) => !principal.scopes.includes(scope));
}
