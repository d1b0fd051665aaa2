/**
 * What the gateway's resource server reads of an authorization server: its metadata (RFC 8414,
 * with the OpenID Connect discovery document as the fallback the MCP authorization specification
 * allows) and, through `jose`, its JWKS — cached, and refetched when a token names a key the cache
 * does not hold (`createRemoteJWKSet`'s own cooldown bounds how often an attacker's unknown `kid`
 * can make it refetch).
 */
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';

export interface AuthorizationServerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
  token_endpoint?: string;
  authorization_endpoint?: string;
  [member: string]: unknown;
}

/** The authorization server could not be read (network, HTTP status, or a document for another issuer): validation fails closed. */
export class AuthorizationServerUnavailable extends Error {
  readonly code = 'auth_server_unavailable';
}

/**
 * The well-known metadata URLs of an issuer, in the order the MCP authorization specification
 * (2026-07-28, "Authorization Server Metadata Discovery") tries them: RFC 8414 with the path
 * inserted after the well-known prefix, then OpenID Connect discovery (path inserted, then appended).
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const at = (wellKnown: string) => new URL(`/.well-known/${wellKnown}${path}`, url).href;
  const urls = [at('oauth-authorization-server'), at('openid-configuration')];
  if (path) urls.push(new URL(`${path}/.well-known/openid-configuration`, url).href);
  return urls;
}

const METADATA_TIMEOUT_MS = 5_000;

/** Fetch and check the metadata: the first well-known URL that answers 200 with this issuer's document wins (RFC 8414 §3.3: `issuer` must be identical). */
export async function fetchAuthorizationServerMetadata(issuer: string): Promise<AuthorizationServerMetadata> {
  for (const url of metadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(METADATA_TIMEOUT_MS) });
    } catch (error) {
      throw new AuthorizationServerUnavailable(`authorization server metadata at ${url}: ${(error as Error).message}`);
    }
    if (response.status === 404) continue;
    if (!response.ok) throw new AuthorizationServerUnavailable(`authorization server metadata at ${url}: HTTP ${response.status}`);
    const document = (await response.json().catch(() => null)) as AuthorizationServerMetadata | null;
    if (document?.issuer !== issuer) {
      throw new AuthorizationServerUnavailable(
        `authorization server metadata at ${url} names issuer ${String(document?.issuer)}, not ${issuer}`,
      );
    }
    return document;
  }
  throw new AuthorizationServerUnavailable(`no authorization server metadata for ${issuer}`);
}

/** One authorization server, read lazily and once (a failed read is retried on the next token). */
export class AuthorizationServer {
  #metadata?: Promise<AuthorizationServerMetadata>;
  #keys?: JWTVerifyGetKey;

  constructor(readonly issuer: string) {}

  metadata(): Promise<AuthorizationServerMetadata> {
    this.#metadata ??= fetchAuthorizationServerMetadata(this.issuer).catch((error: unknown) => {
      this.#metadata = undefined;
      throw error;
    });
    return this.#metadata;
  }

  /** The JWKS as a `jose` key resolver: cached, refetched on an unknown `kid` (at most once per 30 s). */
  async keys(): Promise<JWTVerifyGetKey> {
    if (this.#keys) return this.#keys;
    const { jwks_uri } = await this.metadata();
    if (!jwks_uri) throw new AuthorizationServerUnavailable(`${this.issuer} publishes no jwks_uri`);
    this.#keys = createRemoteJWKSet(new URL(jwks_uri), { timeoutDuration: METADATA_TIMEOUT_MS });
    return this.#keys;
  }
}
