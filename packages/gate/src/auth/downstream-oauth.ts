/**
 * The gateway as a conforming MCP OAuth client of a downstream server, per user (issue 33 item 4).
 *
 * The official SDK runs the protocol (`auth()`: protected-resource and authorization-server
 * discovery, CIMD or registration, PKCE, `resource` on every token and refresh request, scope from
 * `WWW-Authenticate`, step-up, RFC 9207 issuer check); this provider is where the gateway keeps what
 * the SDK hands it — every value sealed with the master key (auth/vault.ts) in the gate store,
 * bound to the downstream and the user, so nothing outlives a restart and nothing is held in clear.
 *
 * The user authorizes once: the SDK's redirect becomes `onAuthorizationRequired(url)` (the
 * gateway shows the URL to that user — URL elicitation or the approvals page), the authorization
 * server sends the browser to the gateway's callback, and `completeAuthorization` redeems the code
 * for the user the single-use `state` names. Tokens are refreshed shortly before they expire; on
 * `invalid_token` the SDK refreshes once, then asks the user again (`invalidateCredentials`).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  auth,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { CredentialKind } from './credentials-schema.js';
import type { DownstreamCredentials } from './downstream-credentials.js';
import { exchangeToken } from './token-exchange.js';
import type { CredentialVault } from './vault.js';

/** How long a user has to finish an authorization the gateway started. */
export const AUTHORIZATION_TTL_MS = 10 * 60_000;
/** Refresh this long before the access token expires, so no call meets an expired token. */
export const REFRESH_MARGIN_MS = 60_000;

export interface DownstreamOAuthOptions {
  /** The downstream MCP endpoint (the protected resource). */
  serverUrl: string;
  /** The user at the listener (token subject), or `*` for a credential of the gateway itself. */
  subject: string;
  credentials: DownstreamCredentials;
  vault: CredentialVault;
  /** The gateway's OAuth callback URL (registered with the authorization server); unused with `grant: 'client_credentials'`. */
  redirectUrl: string;
  /**
   * `client_credentials`: a credential of the gateway itself, with no person to sign in (a service
   * credential where the authorization server allows the grant; needs a pre-registered confidential
   * `client`). Default: the authorization code flow.
   */
  grant?: 'authorization_code' | 'client_credentials';
  /** A pre-registered client; without one, the SDK uses `clientMetadataUrl` (CIMD) or registers dynamically. */
  client?: { client_id: string; client_secret?: string };
  /** The URL of this gateway's client ID metadata document, where the authorization server accepts CIMD. */
  clientMetadataUrl?: string;
  clientName?: string;
  /**
   * The access token the user brought to the gateway's listener: when the downstream's authorization
   * server offers RFC 8693 token exchange, it is exchanged for the user's token there (needs `client`)
   * instead of asking the user to authorize the downstream.
   */
  subjectToken?: string | (() => string | undefined);
  /** Show the user the URL that authorizes this downstream (never logged: it carries the PKCE challenge and state). */
  onAuthorizationRequired(url: URL): void | Promise<void>;
  now?: () => number;
}

/** What is kept while an authorization is under way (sealed, kind `authorization`). */
interface PendingAuthorization {
  verifier?: string;
  discovery?: OAuthDiscoveryState;
}

interface HeldTokens {
  tokens: StoredOAuthTokens;
  saved_at: number;
}

export const stateDigest = (state: string) => createHash('sha256').update(state).digest('base64url');

export class DownstreamOAuthProvider implements OAuthClientProvider {
  readonly #o: DownstreamOAuthOptions;
  readonly #now: () => number;
  #refreshing = false;

  constructor(options: DownstreamOAuthOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  /** Undefined for the client credentials grant: the SDK's non-interactive flow (`prepareTokenRequest`). */
  get redirectUrl(): string | undefined {
    return this.#o.grant === 'client_credentials' ? undefined : this.#o.redirectUrl;
  }

  /** The token request of the client credentials grant (RFC 6749 §4.4); the SDK adds client authentication and `resource`. */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.#o.grant !== 'client_credentials') return undefined;
    return new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  }

  get clientMetadataUrl(): string | undefined {
    return this.#o.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const service = this.#o.grant === 'client_credentials';
    return {
      client_name: this.#o.clientName ?? 'vrpkit gateway',
      redirect_uris: service ? [] : [this.#o.redirectUrl],
      grant_types: service ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
      response_types: service ? [] : ['code'],
      token_endpoint_auth_method: this.#o.client?.client_secret ? 'client_secret_basic' : 'none',
    };
  }

  /** A fresh single-use state, recorded (by digest) with the downstream and the user it authorizes for. */
  async state(): Promise<string> {
    const state = randomBytes(32).toString('base64url');
    await this.#o.credentials.beginAuthorization({
      state_digest: stateDigest(state),
      server_id: this.#o.serverUrl,
      subject: this.#o.subject,
      expires_at: this.#now() + AUTHORIZATION_TTL_MS,
    });
    return state;
  }

  async clientInformation(_ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    const stored = await this.#read<StoredOAuthClientInformation>('client');
    // The pre-registered client as the SDK stamped it with its issuer (SEP-2352), once it has; a changed client id wins.
    if (this.#o.client) return stored?.client_id === this.#o.client.client_id ? { ...stored, ...this.#o.client } : this.#o.client;
    return stored;
  }

  async saveClientInformation(info: StoredOAuthClientInformation): Promise<void> {
    await this.#write('client', info);
  }

  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    const held = await this.#read<HeldTokens>('tokens');
    // An exchanged token comes without a refresh token: near its end it is exchanged again.
    if (!held || (!held.tokens.refresh_token && this.#expiresSoon(held))) {
      const exchanged = await this.#exchanged();
      if (exchanged || !held) return exchanged;
    }
    // The transport's per-request read (no ctx): refresh first when the token is about to expire.
    // (The client credentials grant has no refresh token: the SDK's non-interactive flow asks for a new token.)
    const renewable = !!held.tokens.refresh_token || this.#o.grant === 'client_credentials';
    if (!ctx && !this.#refreshing && renewable && this.#expiresSoon(held)) {
      this.#refreshing = true;
      try {
        await auth(this, { serverUrl: this.#o.serverUrl });
      } catch {
        // A failed refresh leaves the old token: the downstream's 401 then runs the SDK's own recovery.
      } finally {
        this.#refreshing = false;
      }
      return (await this.#read<HeldTokens>('tokens'))?.tokens;
    }
    return held.tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    await this.#write('tokens', { tokens, saved_at: this.#now() } satisfies HeldTokens);
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    await this.#o.onAuthorizationRequired(url);
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    await this.#write('authorization', { ...(await this.#pending()), verifier });
  }

  async codeVerifier(): Promise<string> {
    const { verifier } = await this.#pending();
    if (!verifier) throw new Error('no authorization is under way for this downstream and user');
    return verifier;
  }

  async saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    await this.#write('authorization', { ...(await this.#pending()), discovery });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.#pending()).discovery;
  }

  /** The SDK gave up on a credential (`invalid_grant`, `invalid_client`, …): forget it, so the user is asked again. */
  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const { credentials, serverUrl, subject } = this.#o;
    if (scope === 'all') await credentials.forget(serverUrl, subject);
    else if (scope === 'client' || scope === 'tokens') await credentials.forget(serverUrl, subject, scope);
    else await credentials.forget(serverUrl, subject, 'authorization');
  }

  /** Tokens by RFC 8693 from the user's incoming token, when there is one and the downstream's server offers the exchange. */
  async #exchanged(): Promise<StoredOAuthTokens | undefined> {
    const { client, serverUrl } = this.#o;
    // The token the user brings now (a function: their latest one, as their client refreshes it).
    const subjectToken = typeof this.#o.subjectToken === 'function' ? this.#o.subjectToken() : this.#o.subjectToken;
    if (!subjectToken || !client) return undefined;
    const tokens = await exchangeToken({ serverUrl, subjectToken, client });
    if (tokens) await this.saveTokens(tokens);
    return tokens;
  }

  #expiresSoon(held: HeldTokens): boolean {
    const lifetime = held.tokens.expires_in;
    if (typeof lifetime !== 'number') return false;
    // At most a quarter of the lifetime: a token shorter than the margin would be refreshed on every request.
    const margin = Math.min(REFRESH_MARGIN_MS, lifetime * 250);
    return held.saved_at + lifetime * 1000 - margin <= this.#now();
  }

  async #pending(): Promise<PendingAuthorization> {
    return (await this.#read<PendingAuthorization>('authorization')) ?? {};
  }

  #binding(kind: CredentialKind): string[] {
    return [this.#o.serverUrl, this.#o.subject, kind];
  }

  async #read<T>(kind: CredentialKind): Promise<T | undefined> {
    const sealed = await this.#o.credentials.get(this.#o.serverUrl, this.#o.subject, kind);
    return sealed === undefined ? undefined : await this.#o.vault.open<T>(this.#binding(kind), sealed);
  }

  async #write(kind: CredentialKind, value: unknown): Promise<void> {
    const sealed = await this.#o.vault.seal(this.#binding(kind), value);
    await this.#o.credentials.put(this.#o.serverUrl, this.#o.subject, kind, sealed, this.#now());
  }
}

export class AuthorizationCallbackError extends Error {
  constructor(
    readonly code: 'authorization_unknown_state' | 'authorization_denied' | 'authorization_failed',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The gateway's OAuth callback: the single-use `state` names the downstream and the user; the code
 * is redeemed by the SDK (PKCE verifier, RFC 9207 `iss`, `resource`) and the tokens sealed for them.
 * A state that is unknown, expired or already used redeems nothing.
 */
export async function completeAuthorization(
  params: URLSearchParams,
  credentials: DownstreamCredentials,
  providerFor: (serverUrl: string, subject: string) => DownstreamOAuthProvider,
  now: number = Date.now(),
): Promise<{ serverUrl: string; subject: string }> {
  const state = params.get('state');
  const pending = state ? await credentials.takeAuthorization(stateDigest(state), now) : undefined;
  if (!pending) throw new AuthorizationCallbackError('authorization_unknown_state', 'this authorization link is unknown, used or expired');
  const error = params.get('error');
  if (error) throw new AuthorizationCallbackError('authorization_denied', `the authorization server answered ${error}`);
  const code = params.get('code');
  if (!code) throw new AuthorizationCallbackError('authorization_failed', 'the callback carries no code');
  const provider = providerFor(pending.server_id, pending.subject);
  const iss = params.get('iss');
  const result = await auth(provider, { serverUrl: pending.server_id, authorizationCode: code, ...(iss ? { iss } : {}) });
  if (result !== 'AUTHORIZED') throw new AuthorizationCallbackError('authorization_failed', 'the code was not redeemed');
  await credentials.forget(pending.server_id, pending.subject, 'authorization');
  return { serverUrl: pending.server_id, subject: pending.subject };
}
