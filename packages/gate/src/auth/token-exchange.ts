/**
 * RFC 8693 token exchange, where a downstream's authorization server offers it (issue 33 item 4:
 * "token exchange from the user's incoming token instead of shared service credentials"): the
 * gateway presents the token the user brought to its listener and receives one for the downstream,
 * for the same user, with the gateway as the actor — no per-user sign-in at the downstream, and no
 * shared key. Discovery is the SDK's (protected-resource metadata → authorization-server metadata).
 */
import { discoverOAuthServerInfo, type StoredOAuthTokens } from '@modelcontextprotocol/client';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export class TokenExchangeError extends Error {
  readonly code = 'token_exchange_refused';
}

export interface TokenExchangeRequest {
  /** The downstream MCP endpoint: the `resource` of the new token. */
  serverUrl: string;
  /** The user's access token at the gateway's listener. */
  subjectToken: string;
  /** The gateway's client at the downstream's authorization server (confidential: the exchange needs a client). */
  client: { client_id: string; client_secret?: string };
  scope?: string;
}

/** Whether each downstream's authorization server offers the exchange (asked once per process). */
const offered = new Map<string, Promise<string | undefined>>();

/** The token endpoint of `serverUrl`'s authorization server when it lists the exchange grant, else undefined. */
function exchangeEndpoint(serverUrl: string): Promise<string | undefined> {
  let endpoint = offered.get(serverUrl);
  if (!endpoint) {
    endpoint = discoverOAuthServerInfo(serverUrl).then(
      ({ authorizationServerMetadata: m }) =>
        m?.grant_types_supported?.includes(TOKEN_EXCHANGE_GRANT) && m.token_endpoint ? m.token_endpoint : undefined,
      () => {
        offered.delete(serverUrl); // a discovery that failed is asked again next time
        return undefined;
      },
    );
    offered.set(serverUrl, endpoint);
  }
  return endpoint;
}

/** Exchange the user's token for one at the downstream; undefined when its authorization server does not offer the grant. */
export async function exchangeToken(r: TokenExchangeRequest): Promise<StoredOAuthTokens | undefined> {
  const endpoint = await exchangeEndpoint(r.serverUrl);
  if (!endpoint) return undefined;
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: r.subjectToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    requested_token_type: ACCESS_TOKEN_TYPE,
    resource: r.serverUrl,
    ...(r.scope ? { scope: r.scope } : {}),
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (r.client.client_secret !== undefined) {
    const id = encodeURIComponent(r.client.client_id);
    headers.authorization = `Basic ${Buffer.from(`${id}:${encodeURIComponent(r.client.client_secret)}`).toString('base64')}`;
  } else body.set('client_id', r.client.client_id);
  const response = await fetch(endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof answer.access_token !== 'string' || answer.issued_token_type !== ACCESS_TOKEN_TYPE) {
    // The error code only: the description may quote the subject token's claims.
    throw new TokenExchangeError(`the authorization server refused the exchange (${String(answer.error ?? response.status)})`);
  }
  return {
    access_token: answer.access_token,
    token_type: typeof answer.token_type === 'string' ? answer.token_type : 'Bearer',
    ...(typeof answer.expires_in === 'number' ? { expires_in: answer.expires_in } : {}),
    ...(typeof answer.scope === 'string' ? { scope: answer.scope } : {}),
  };
}
