/**
 * Signing approvers in with OpenID Connect (issue 33 item 3): the authorization code flow with
 * PKCE (RFC 7636, S256), `state` and `nonce` (OpenID Connect Core 1.0 §3.1.2.1, §15.5.2), through
 * `openid-client` — discovery, the token request and the ID token's validation (signature against
 * the issuer's JWKS, `iss`, `aud`, `exp`, `nonce`; Core §3.1.3.7) are the library's, none hand-rolled.
 *
 * A sign-in in progress lives in this process only and is taken (deleted) by the first callback
 * that names it: a replayed callback, or a second use of its state, finds nothing. The code itself
 * is single-use at the authorization server, and bound to this sign-in's PKCE verifier.
 */
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';

export interface ApproverOidcConfig {
  /** The issuer, exactly as its discovery document names it. https, or http on a loopback host only. */
  issuer: string;
  clientId: string;
  /** Absent: a public client (PKCE alone authenticates the code's redemption). */
  clientSecret?: string;
  /** Scopes asked for; `openid` is always among them. */
  scopes?: readonly string[];
}

/** Stable codes of a sign-in that fails (nothing is signed in). */
export type OidcSignInCode =
  /** No sign-in in progress matches (unknown, replayed, expired or from another browser). */
  | 'approver_oidc_state_invalid'
  /** The provider answered with an error, refused the code, or the ID token did not validate. */
  | 'approver_oidc_refused'
  /** The provider could not be reached or its metadata read. */
  | 'approver_oidc_unavailable';

export class OidcSignInError extends Error {
  constructor(
    readonly code: OidcSignInCode,
    message: string,
  ) {
    super(message);
  }
}

interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
  /** Where the person goes once signed in (a path of the page's own, checked by the caller). */
  returnTo: string;
  expiresAt: number;
}

/** What a completed sign-in yields: the ID token's subject and its claims. */
export interface OidcSignIn {
  subject: string;
  claims: Record<string, unknown>;
  returnTo: string;
}

/** How long a person has to sign in at the provider. */
const SIGN_IN_TTL_MS = 10 * 60_000;
/** Sign-ins in progress kept at most (the oldest goes first). */
const MAX_PENDING = 256;

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Check an issuer URL: https, or http on a loopback host (a provider on the same machine). Throws RangeError. */
export function checkIssuerUrl(issuer: string): URL {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new RangeError(`--approver-oidc-issuer is not a URL: ${issuer}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname)))
    throw new RangeError(`--approver-oidc-issuer must be https:// (or http:// on a loopback host), got ${issuer}`);
  return url;
}

export class ApproverOidc {
  readonly #config: ApproverOidcConfig;
  readonly #issuer: URL;
  #discovered?: Promise<oidc.Configuration>;
  /** Sign-ins in progress, by the random key of the browser's pending-sign-in cookie. */
  readonly #pending = new Map<string, PendingSignIn>();

  constructor(config: ApproverOidcConfig) {
    this.#issuer = checkIssuerUrl(config.issuer);
    this.#config = config;
  }

  get issuer(): string {
    return this.#config.issuer;
  }

  /** Discovery (OpenID Connect Discovery 1.0), once; a failed read is retried on the next sign-in. */
  #discover(): Promise<oidc.Configuration> {
    const { clientId, clientSecret } = this.#config;
    this.#discovered ??= oidc
      .discovery(
        this.#issuer,
        clientId,
        clientSecret === undefined ? undefined : { client_secret: clientSecret },
        clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret),
        this.#issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {},
      )
      .catch((e: unknown) => {
        this.#discovered = undefined;
        throw new OidcSignInError('approver_oidc_unavailable', `OpenID provider ${this.#config.issuer}: ${(e as Error).message}`);
      });
    return this.#discovered;
  }

  /**
   * Begin a sign-in: the provider's authorization URL (code flow, S256 PKCE, fresh state and
   * nonce) and the key the browser keeps in a cookie to finish it.
   */
  async start(redirectUri: string, returnTo: string, now: number): Promise<{ url: URL; key: string }> {
    const config = await this.#discover();
    const pending: PendingSignIn = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      redirectUri,
      returnTo,
      expiresAt: now + SIGN_IN_TTL_MS,
    };
    const scopes = new Set(['openid', ...(this.#config.scopes ?? [])]);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: [...scopes].join(' '),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    const key = randomBytes(32).toString('base64url');
    for (const [k, p] of this.#pending) if (p.expiresAt <= now) this.#pending.delete(k);
    if (this.#pending.size >= MAX_PENDING) this.#pending.delete(this.#pending.keys().next().value as string);
    this.#pending.set(key, pending);
    return { url, key };
  }

  /**
   * Finish a sign-in at the callback: take the sign-in the cookie's key names (once), then let
   * openid-client check the response's `state` (and `iss`, RFC 9207, when the provider sends it),
   * redeem the code with the PKCE verifier, and validate the ID token with the expected nonce.
   */
  async finish(key: string, callbackQuery: URLSearchParams, now: number): Promise<OidcSignIn> {
    const pending = this.#pending.get(key);
    this.#pending.delete(key);
    if (!pending || pending.expiresAt <= now)
      throw new OidcSignInError('approver_oidc_state_invalid', 'no sign-in in progress matches this callback');
    // The response names the state this sign-in sent (RFC 6749 §4.1.2), or it is not this sign-in's
    // answer (openid-client checks it again, with `iss`, before the code is redeemed).
    if (callbackQuery.get('state') !== pending.state)
      throw new OidcSignInError('approver_oidc_state_invalid', 'the callback names another state than this sign-in sent');
    const config = await this.#discover();
    // The redirect URI of this sign-in, with the callback's parameters: the token request names it.
    const current = new URL(pending.redirectUri);
    current.search = callbackQuery.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (e) {
      throw new OidcSignInError('approver_oidc_refused', (e as Error).message);
    }
    const claims = tokens.claims();
    if (!claims?.sub) throw new OidcSignInError('approver_oidc_refused', 'the provider returned no ID token subject');
    return { subject: claims.sub, claims: { ...claims }, returnTo: pending.returnTo };
  }
}
