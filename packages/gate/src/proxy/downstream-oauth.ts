/**
 * The proxy reaches an HTTP downstream that requires OAuth with credentials the gateway holds
 * (issue 33 item 4), in one of three modes:
 * - `user`: each principal at the listener has their own credential and their own downstream
 *   connection; a principal with none is sent an authorization link (URL-mode elicitation where
 *   the agent declared it, else a tool error with a stable code and the link), signs in at the
 *   downstream's authorization server, and the gateway's `/oauth/callback` redeems the code for the
 *   principal the single-use `state` names;
 * - `exchange`: as `user`, but the principal's own access token at the listener is first
 *   exchanged for one at the downstream (RFC 8693) when its authorization server offers it;
 * - `service`: one credential of the gateway itself (`*`), authorized once by the operator through a
 *   URL printed in the log, or by the client credentials grant where the authorization server allows it.
 *
 * The SDK runs the protocol (auth/downstream-oauth.ts); this file connects one SDK client per
 * credential and routes each request to its principal's (`PrincipalLinks`). Tokens are never logged:
 * principals are logged by subject, authorization links only in service mode (the operator's).
 */
import { randomUUID } from 'node:crypto';
import {
  type CallToolResult,
  type Client,
  type Notification,
  ProtocolError,
  ProtocolErrorCode,
  type Request,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { type InputRequiredResult, inputRequired, UrlElicitationRequiredError } from '@modelcontextprotocol/server';
import { approvalRoute } from '../approvals/answer.js';
import type { DownstreamCredentials } from '../auth/downstream-credentials.js';
import {
  AUTHORIZATION_TTL_MS,
  AuthorizationCallbackError,
  completeAuthorization,
  DownstreamOAuthProvider,
} from '../auth/downstream-oauth.js';
import type { Principal } from '../auth/resource-server.js';
import type { CredentialVault } from '../auth/vault.js';
import type { AgentApproval } from './approval-channel.js';
import { connectDownstream, type DownstreamSpec } from './downstream.js';
import { DownstreamLink, type DownstreamLinkOptions, type RequestExtra } from './downstream-link.js';
import type { ProxyLog } from './log.js';

export type DownstreamOAuthMode = 'user' | 'service' | 'exchange';

/** The subject of the gateway's own credential (service mode), as auth/downstream-oauth.ts names it. */
export const SERVICE_SUBJECT = '*';

/** The path of the gateway's OAuth callback on the agent listener. */
export const OAUTH_CALLBACK_PATH = '/oauth/callback';

export interface DownstreamOAuthOptions {
  mode: DownstreamOAuthMode;
  /** Where held credentials live (the gate store's `downstreamCredentials`). */
  credentials: DownstreamCredentials;
  /** Seals them with the master key. */
  vault: CredentialVault;
  /** The callback URL the authorization server sends the browser to (default: the listener's `/oauth/callback`). */
  redirectUrl?: string;
  /** A pre-registered client at the downstream's authorization server (needed for exchange and client credentials). */
  client?: { client_id: string; client_secret?: string };
  /** This gateway's client ID metadata document URL (CIMD), where the authorization server accepts one. */
  clientMetadataUrl?: string;
  /** Service mode only: `client_credentials` asks for the gateway's token with no person (default: a printed authorization URL). */
  grant?: 'authorization_code' | 'client_credentials';
}

/** A request met a principal (or the gateway) with no credential for the downstream: someone must authorize first. */
export class DownstreamAuthorizationRequired extends Error {
  readonly code = 'downstream_authorization_required';
  constructor(
    readonly subject: string,
    /** The authorization server's URL to open; undefined in service mode (the operator's link is in the log). */
    readonly url: URL | undefined,
    /** Resolves true once this subject's authorization completed at the callback (false when `ms` ran out or `signal` aborted). */
    readonly completed: (ms: number, signal?: AbortSignal) => Promise<boolean>,
  ) {
    super(
      url
        ? `The downstream MCP server needs your authorization: open ${url.href} , sign in, then call again.`
        : "The downstream MCP server needs the gateway's own authorization, which its operator gives (see the proxy's log); nothing was sent.",
    );
  }
}

/** The gateway's credentials at one downstream: a provider and a connection per subject, and the callback. */
export class DownstreamOAuth {
  readonly #spec: Extract<DownstreamSpec, { kind: 'http' }>;
  readonly #o: DownstreamOAuthOptions;
  readonly #log: ProxyLog;
  #redirectUrl: string | undefined;
  /** The link last shown to each subject while it can still be used (a new one would void its PKCE verifier). */
  readonly #pending = new Map<string, { url: URL; until: number }>();
  /** The access token each principal last presented at the listener (exchange mode: what is exchanged). */
  readonly #incoming = new Map<string, string>();
  readonly #waiters = new Map<string, Set<() => void>>();

  constructor(spec: DownstreamSpec, o: DownstreamOAuthOptions, log: ProxyLog) {
    if (spec.kind !== 'http') throw new RangeError('downstream OAuth needs an HTTP downstream (--upstream)');
    if (o.mode === 'exchange' && !o.client) throw new RangeError('token exchange needs a pre-registered client at the downstream');
    if (o.grant === 'client_credentials' && (o.mode !== 'service' || !o.client?.client_secret))
      throw new RangeError('the client credentials grant is for service mode with a pre-registered confidential client');
    this.#spec = spec;
    this.#o = o;
    this.#log = log;
    this.#redirectUrl = o.redirectUrl;
  }

  get mode(): DownstreamOAuthMode {
    return this.#o.mode;
  }

  /** The listener's callback URL, once it is known (the listener's port may be chosen at start). */
  set listenerUrl(mcpUrl: string) {
    this.#redirectUrl ??= new URL(OAUTH_CALLBACK_PATH, mcpUrl).href;
  }

  /** Whose credential serves a request: the principal's own, or the gateway's in service mode. */
  subjectOf(principal: Principal | undefined): string {
    if (this.#o.mode === 'service') return SERVICE_SUBJECT;
    // Fail closed: a per-user credential is never chosen for a request nobody authenticated.
    if (!principal) throw new RangeError(`downstream OAuth mode ${this.#o.mode} needs authenticated principals (team mode)`);
    return principal.subject;
  }

  /** Remember the token the principal presented (exchange mode exchanges their latest). */
  noteIncoming(subject: string, token: string | undefined): void {
    if (this.#o.mode === 'exchange' && token) this.#incoming.set(subject, token);
  }

  /** Whether a token set is held for this subject (a refresh that failed forgets it, and the subject is asked again). */
  async holds(subject: string): Promise<boolean> {
    return (await this.#o.credentials.get(this.#spec.url, subject, 'tokens')) !== undefined;
  }

  provider(subject: string): DownstreamOAuthProvider {
    const { client, clientMetadataUrl, grant } = this.#o;
    return new DownstreamOAuthProvider({
      serverUrl: this.#spec.url,
      subject,
      credentials: this.#o.credentials,
      vault: this.#o.vault,
      // Before the listener runs the URL is unknown; no authorization can be started yet then.
      redirectUrl: this.#redirectUrl ?? `http://127.0.0.1:0${OAUTH_CALLBACK_PATH}`,
      ...(client ? { client } : {}),
      ...(clientMetadataUrl ? { clientMetadataUrl } : {}),
      ...(grant ? { grant } : {}),
      ...(this.#o.mode === 'exchange' ? { subjectToken: () => this.#incoming.get(subject) } : {}),
      onAuthorizationRequired: (url) => this.#shown(subject, url),
    });
  }

  #shown(subject: string, url: URL): void {
    // A little less than the state's own life, so a link shown is never one the callback refuses as expired.
    this.#pending.set(subject, { url, until: Date.now() + AUTHORIZATION_TTL_MS - 30_000 });
    if (subject === SERVICE_SUBJECT)
      // The operator's link, printed like the listener's token; it carries a single-use state and a PKCE challenge, no secret.
      this.#log('downstream_authorization_required', { server: this.#spec.url, open: url.href }, 'warn');
    else this.#log('downstream_authorization_required', { server: this.#spec.url, subject }, 'info');
  }

  /**
   * Connect the downstream with this subject's credential. Without one (or when the downstream
   * refuses it and a refresh cannot help), `DownstreamAuthorizationRequired` with the link to open;
   * a link still usable is shown again rather than a new one started.
   */
  async connect(subject: string): Promise<Client> {
    const provider = this.provider(subject);
    // No token held (none exchanged either): the connection is made afresh, its first request a real
    // one, so its 401 (with the `WWW-Authenticate` that may name the resource metadata) starts one
    // authorization. A connection that adopted a remembered era would send nothing at connect, and
    // its first requests would start one each — every new one voiding the link shown before it.
    const unauthorized = !(await this.holds(subject)) && !(await provider.tokens());
    if (unauthorized) {
      const pending = this.#pending.get(subject);
      if (pending && pending.until > Date.now()) throw this.#required(subject, pending.url);
    }
    this.#pending.delete(subject);
    try {
      return await connectDownstream(this.#spec, provider, { probe: unauthorized });
    } catch (e) {
      const shown = this.#pending.get(subject);
      if (e instanceof UnauthorizedError || shown) throw this.#required(subject, shown?.url);
      throw e;
    }
  }

  /** The answer for a request whose credential the downstream refused in flight (the SDK's recovery ended in a new authorization). */
  requiredAfter(e: unknown, subject: string): DownstreamAuthorizationRequired | undefined {
    if (!(e instanceof UnauthorizedError)) return undefined;
    return this.#required(subject, this.#pending.get(subject)?.url);
  }

  #required(subject: string, url: URL | undefined): DownstreamAuthorizationRequired {
    return new DownstreamAuthorizationRequired(subject, subject === SERVICE_SUBJECT ? undefined : url, (ms, signal) =>
      this.#completed(subject, ms, signal),
    );
  }

  #completed(subject: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(subject) ?? new Set();
      this.#waiters.set(subject, waiters);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        waiters.delete(wake);
        resolve(ok);
      };
      const wake = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      signal?.addEventListener('abort', aborted, { once: true });
      waiters.add(wake);
    });
  }

  /**
   * `GET /oauth/callback?code&state[&iss]`: redeem the code for the subject the single-use state
   * names (PKCE, RFC 9207 `iss` and `resource` by the SDK), then a page that says so. A state that
   * is unknown, used or expired redeems nothing. The page repeats none of the request's values.
   */
  async callback(request: globalThis.Request): Promise<Response> {
    const url = new URL(request.url);
    try {
      const { subject } = await completeAuthorization(url.searchParams, this.#o.credentials, (serverUrl, subject) => {
        if (serverUrl !== this.#spec.url)
          throw new AuthorizationCallbackError('authorization_unknown_state', 'this authorization is for another downstream');
        return this.provider(subject);
      });
      this.#pending.delete(subject);
      this.#log('downstream_authorized', { server: this.#spec.url, subject });
      for (const wake of [...(this.#waiters.get(subject) ?? [])]) wake();
      return page(200, 'Connected', 'The gateway now holds your authorization for this MCP server. Return to your client.');
    } catch (e) {
      const code = e instanceof AuthorizationCallbackError ? e.code : 'authorization_failed';
      this.#log('downstream_authorization_failed', { server: this.#spec.url, code }, 'warn');
      return page(400, 'Not connected', `The authorization was not completed (${code}). Start again from your client.`);
    }
  }
}

function page(status: number, title: string, text: string): Response {
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title><h1>${title}</h1><p>${text}</p></html>`;
  return new Response(html, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'",
      'referrer-policy': 'no-referrer',
    },
  });
}

/** Notifications a per-user connection may pass to every agent: list changes carry nothing of that user's. */
const SHARED_NOTIFICATIONS = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
]);

/**
 * The downstream as the proxy's parts use it (the `Downstream` of downstream-link.ts), one
 * `DownstreamLink` per credential: each request goes out on its principal's connection, with their
 * token, connected on their first request. Log messages and resource updates of a per-user
 * connection are that user's and are not relayed to the other agents.
 */
export class PrincipalLinks {
  readonly #links = new Map<string, Promise<DownstreamLink>>();
  #any: DownstreamLink | undefined;

  constructor(
    private readonly access: DownstreamOAuth,
    private readonly o: Omit<DownstreamLinkOptions, 'reconnect'>,
  ) {}

  /** A connected client (its server info and capabilities), once some credential connected. */
  get client(): Client | undefined {
    return this.#any?.client;
  }

  /** Whether this request's principal can reach the downstream; throws `DownstreamAuthorizationRequired` when they must authorize first. */
  async available(extra?: RequestExtra): Promise<boolean> {
    return (await this.#link(extra)).available();
  }

  async listAllTools(extra?: RequestExtra) {
    return this.#recovering(extra, (link) => link.listAllTools());
  }

  async callTool(params: Parameters<DownstreamLink['callTool']>[0], extra: RequestExtra): ReturnType<DownstreamLink['callTool']> {
    return this.#recovering(extra, (link) => link.callTool(params, extra));
  }

  async forward(request: Request, extra: RequestExtra) {
    return this.#recovering(extra, (link) => link.forward(request, extra));
  }

  async close(): Promise<void> {
    for (const link of [...this.#links.values()]) await (await link.catch(() => undefined))?.close();
    this.#links.clear();
  }

  /** Run on the principal's link; a credential refused in flight (refresh failed too) drops the link and asks the person again. */
  async #recovering<T>(extra: RequestExtra | undefined, op: (link: DownstreamLink) => Promise<T>): Promise<T> {
    const link = await this.#link(extra);
    try {
      return await op(link);
    } catch (e) {
      const subject = this.access.subjectOf(extra?.principal);
      const required = this.access.requiredAfter(e, subject);
      if (!required) throw e;
      this.#drop(subject, link);
      throw required;
    }
  }

  async #link(extra: RequestExtra | undefined): Promise<DownstreamLink> {
    const subject = this.access.subjectOf(extra?.principal);
    this.access.noteIncoming(subject, extra?.token);
    const held = this.#links.get(subject);
    if (held) {
      const link = await held.catch(() => undefined);
      // A credential forgotten since (the SDK gave up on it): the link is dropped and the person asked again.
      if (link && (await this.access.holds(subject))) return link;
      if (link) this.#drop(subject, link);
      else if (this.#links.get(subject) === held) this.#links.delete(subject);
    }
    let made = this.#links.get(subject);
    if (!made) {
      const connecting = this.access.connect(subject).then((client) => {
        const link = new DownstreamLink(client, {
          ...this.o,
          serverId: this.o.serverId,
          reconnect: () => this.access.connect(subject),
          onNotification: (n: Notification) =>
            this.access.mode === 'service' || SHARED_NOTIFICATIONS.has(n.method) ? this.o.onNotification(n) : Promise.resolve(),
        });
        this.#any ??= link;
        return link;
      });
      connecting.catch(() => {
        if (this.#links.get(subject) === connecting) this.#links.delete(subject);
      });
      this.#links.set(subject, connecting);
      made = connecting;
    }
    return made;
  }

  #drop(subject: string, link: DownstreamLink): void {
    this.#links.delete(subject);
    if (this.#any === link) this.#any = undefined;
    void link.close();
  }
}

/**
 * What a principal who must authorize is answered, by what their client can do (the approval
 * channel's reading of it, approval-channel.ts): a 2026-07-28 client that declared URL elicitation
 * gets an `InputRequiredResult` with the link (it retries the call once the person is done); a
 * 2025-11-25 connection that carries server-to-client requests gets `elicitation/create` in URL
 * mode and the call waits (bounded) for the callback, then goes on; a 2025-11-25 request without
 * one gets the URL elicitation required error (-32042); any other client a tool error with the
 * stable code `downstream_authorization_required` and the link in its message. Nothing reached the
 * downstream and no authority was consumed.
 */
export async function authorizationStep(
  required: DownstreamAuthorizationRequired,
  approval: AgentApproval | undefined,
  waitMs: number,
  signal: AbortSignal,
): Promise<{ proceed: true } | { answer: CallToolResult | InputRequiredResult }> {
  const url = required.url;
  const message = 'Authorize the gateway at the downstream MCP server: sign in on this page, then return here.';
  if (url && approval?.client.urlElicitation) {
    // The approval route's rules (revision, session) with the link as the page: never 'wait' here.
    const route = approvalRoute(approval.client, url.href);
    if (route === 'input_required')
      return {
        answer: inputRequired({
          inputRequests: { vrp_gate_downstream_authorization: inputRequired.elicitUrl({ message, url: url.href }) },
        }),
      };
    if (route === 'elicitation' && approval.elicit) {
      const waiting = required.completed(waitMs, signal);
      let action = 'cancel';
      try {
        action = (await approval.elicit({ mode: 'url', message, url: url.href, elicitationId: randomUUID() }, waitMs)).action;
      } catch {
        // A client that failed to answer has not agreed to open the page.
      }
      if (action === 'accept' && (await waiting)) return { proceed: true };
    } else if (approval.client.revision >= '2025-11-25')
      throw new UrlElicitationRequiredError([{ mode: 'url', message, url: url.href, elicitationId: randomUUID() }], required.message);
  }
  return { answer: authorizationRequiredResult(required) };
}

/** A request other than `tools/call` (a listing, a read) from a principal who must authorize first: the code and the link as the error's data. */
export function authorizationRequiredError(required: DownstreamAuthorizationRequired): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InternalError, required.message, {
    code: required.code,
    ...(required.url ? { authorization_url: required.url.href } : {}),
  });
}

/** The tool error for a principal who must authorize first: a stable code, the link in the message, nothing invoked. */
export function authorizationRequiredResult(required: DownstreamAuthorizationRequired): CallToolResult {
  const error = {
    code: required.code,
    message: required.message,
    retryable: true,
    invoked: false,
    ...(required.url ? { authorization_url: required.url.href } : {}),
  };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }] };
}
