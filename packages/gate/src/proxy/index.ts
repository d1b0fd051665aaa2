/**
 * `@vrpkit/gate/proxy`: the gate as a sidecar in front of any MCP server (`vrp gate proxy`).
 * A separate entry because it needs the MCP SDK at run time, which `@vrpkit/gate` itself does not.
 */
import type { Readable, Writable } from 'node:stream';
import type { StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { generateEd25519Jwk, jwkThumbprint, systemClock, VrpError } from '@vrpkit/core';
import { requestStateKey, requestStateSealer } from '../approvals/request-state.js';
import { selfApprovalRule } from '../approvers/identity.js';
import type { PolicySet } from '../auth/policy-set.js';
import { proxyPrincipals } from '../auth/principals.js';
import type { ResourceServer } from '../auth/resource-server.js';
import { Gate } from '../gate.js';
import type { Policy } from '../policy.js';
import type { GateStore } from '../store/gate-store.js';
import type { ApprovalsUi, ApproversConfig } from '../ui/index.js';
import { DEFAULT_ARGUMENTS_RETENTION_MS } from '../ui/pending-arguments.js';
import { connectDownstream, type DownstreamSpec, serverIdentity } from './downstream.js';
import { DownstreamOAuth, type DownstreamOAuthOptions } from './downstream-oauth.js';
import { type AgentListener, listenForAgents } from './listen.js';
import { jsonLinesLog, type ProxyLog } from './log.js';
import { GateProxy, type ProxyFaultPoint, sigkillSelf } from './proxy.js';
import type { ProxyMode } from './schema.js';
import { AgentStdioTransport, DEFAULT_MAX_MESSAGE_BYTES, serveAgentStdio } from './stdio.js';

export { loadPolicySet, type PolicySet } from '../auth/policy-set.js';
export { type Principal, ResourceServer, type ResourceServerConfig } from '../auth/resource-server.js';
export { CredentialVault } from '../auth/vault.js';
export { type DownstreamSpec, serverIdentity } from './downstream.js';
export { downstreamFetch } from './downstream-fetch.js';
export {
  DownstreamAuthorizationRequired,
  DownstreamOAuth,
  type DownstreamOAuthMode,
  type DownstreamOAuthOptions,
  OAUTH_CALLBACK_PATH,
  SERVICE_SUBJECT,
} from './downstream-oauth.js';
export { type AgentListener, type ListenOptions, listenForAgents, parseListen } from './listen.js';
export { jsonLinesLog, type ProxyLog } from './log.js';
export { DEFAULT_TOOLS_RELIST_MS } from './pinned-view.js';
export { PINNED_TOOL_FIELDS, type PinnedToolDefinition, pinnedDefinition } from './pins.js';
export {
  type AgentEra,
  GateProxy,
  type GateProxyOptions,
  MAX_RESPAWNS,
  OBSERVE_EPOCHS_CACHE_MS,
  PROXY_LIST_CACHE_HINT,
  type ProxyFaultPoint,
  RESPAWN_WINDOW_MS,
} from './proxy.js';
export { AgentStdioTransport, DEFAULT_MAX_MESSAGE_BYTES, serveAgentStdio } from './stdio.js';

export interface ProxyOptions {
  policy: Policy;
  /**
   * Team mode (issue 33): the HTTP listener is an OAuth resource server; each request's principal
   * owns its acts, and the policy set's member for them decides (the set replaces `policy`).
   */
  auth?: { resourceServer: ResourceServer; policySet?: PolicySet };
  /** The authority store; the proxy's tables live in it too. Closed when the proxy stops. */
  store: GateStore;
  /** The proxy's name: its acts' session id and its sink id `gate-proxy:NAME`. Concurrent proxies on one store need distinct names. */
  name: string;
  downstream: DownstreamSpec;
  mode?: ProxyMode;
  pinOnFirstUse?: boolean;
  /** Without `listen`: the agent's stdio streams (default: this process's stdin and stdout). */
  stdio?: { input: Readable; output: Writable };
  /** Serve the agent over Streamable HTTP here instead of stdio; `allowedHosts`: host names accepted in `Host`/`Origin` besides loopback. */
  listen?: { host: string; port: number; allowedHosts?: readonly string[] };
  log?: ProxyLog;
  /** How long an escalated call waits for a person before the pending deny (default 120 s; 0: no wait). */
  approvalTimeoutMs?: number;
  /** POST a JSON notice (ids, digests, a link; never arguments) here when an act waits. */
  notifyUrl?: string;
  /** Serve the approvals page from this process too (`--ui`), on this loopback address. */
  ui?: {
    listen: { host: string; port: number };
    approver: string;
    /** Known approvers (OpenID Connect, passkeys) instead of the printed token; self-approval follows this proxy's policy. */
    approvers?: ApproversConfig;
  };
  /** Arguments of escalated acts are purged this long after the decision (default 7 days). */
  retainArgumentsMs?: number;
  /** The approvals page the notice and the approval links point to (default: the `ui` page's own address). */
  approvalsUrl?: string;
  /** How long an approval link sent by URL-mode elicitation stays usable (default 10 min). */
  approvalLinkTtlMs?: number;
  /**
   * The secret a 2026-07-28 escalated call's `requestState` is sealed with (HKDF-derived key):
   * proxies sharing it accept each other's states. Default: a key made for this process.
   */
  requestStateSecret?: string;
  /** Cap on one agent message in bytes (a stdio line, an HTTP request body); default 4 MiB. */
  maxMessageBytes?: number;
  /**
   * An HTTP downstream that requires OAuth: the gateway holds the credentials, per user, by token
   * exchange, or its own (proxy/downstream-oauth.ts; issue 33 item 4). Per user and exchange need
   * `auth` (team mode); the callback is served on the `listen` listener.
   */
  downstreamOAuth?: DownstreamOAuthOptions;
  /** Bound on each downstream request (tools/call and pass-through), in ms; default 60 s. */
  callTimeoutMs?: number;
  /** How stale the view of the downstream's tools may be when a call is checked against its pin, in ms; default 1 s, 0: re-list every call. */
  toolsRelistMs?: number;
}

/** The environment variable that arms a fault-injection point (crash tests; see `ProxyFaultPoint`). */
export const FAULT_ENV = 'VRP_GATE_PROXY_FAULT';
const FAULT_POINTS: readonly ProxyFaultPoint[] = ['after-consume', 'after-downstream-call'];

function faultFromEnv(): ProxyFaultPoint | undefined {
  const v = process.env[FAULT_ENV];
  if (v === undefined || v === '') return undefined;
  if (!(FAULT_POINTS as readonly string[]).includes(v))
    throw new VrpError('usage', `${FAULT_ENV} must be one of ${FAULT_POINTS.join(', ')}, got ${v}`);
  return v as ProxyFaultPoint;
}

/** The default bound on an escalated call's wait for a person (`--approval-timeout`). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;

export interface RunningProxy {
  serverId: string;
  listener?: AgentListener;
  /** The approvals page, with `--ui`. */
  ui?: ApprovalsUi;
  /** Resolves when the proxy has stopped (the agent's stdio closed, or `stop()`). */
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Start the proxy: connect the downstream, then serve the agent over stdio (or `listen`).
 * Authority is signed with a key made for this process: the proxy is its own sink, and an
 * approval recorded by `vrp gate approve` is turned into authority when the call is retried.
 */
export async function startProxy(opts: ProxyOptions): Promise<RunningProxy> {
  const log = opts.log ?? jsonLinesLog();
  const mode = opts.mode ?? 'enforce';
  const serverId = serverIdentity(opts.downstream, opts.name);
  const fault = faultFromEnv();
  if (fault) log('fault_injection', { message: `TESTING ONLY: this proxy SIGKILLs itself at ${fault}`, point: fault }, 'warn');
  // With a policy set, the set is the policy in force: its default member is the proxy's own gate.
  const policy = opts.auth?.policySet?.members[0]?.policy ?? opts.policy;
  const gates = await memberGates({ ...opts, policy }, fault);
  const gate = gates.get('default') as Gate;
  const { proxy: tables, pendingArguments } = opts.store;
  const retain = opts.retainArgumentsMs ?? DEFAULT_ARGUMENTS_RETENTION_MS;
  const access = opts.downstreamOAuth ? downstreamAccess(opts, opts.downstreamOAuth, log) : undefined;
  const downstream = access ?? (await connectOrRefuse(opts.downstream));
  if (!(downstream instanceof DownstreamOAuth)) {
    const info = downstream.getServerVersion();
    log('downstream_connected', {
      server_id: serverId,
      server_info: info ? { name: info.name, version: info.version } : null,
      protocol_version: downstream.getNegotiatedProtocolVersion() ?? null,
    });
  }
  warnOfDevelopmentModes(log, mode, !!opts.pinOnFirstUse);
  const proxy = new GateProxy({
    gate,
    policy,
    ...(opts.auth ? { principals: proxyPrincipals(policy, opts.auth.policySet, gates) } : {}),
    tables,
    downstream,
    serverId,
    name: opts.name,
    mode,
    pinOnFirstUse: !!opts.pinOnFirstUse,
    log,
    escalations: opts.store.escalations,
    pendingArguments,
    approvalLinks: opts.store.approvalLinks,
    // A state lives as long as the link it carries: a retry within the link's life is never refused as expired.
    requestStates: requestStateSealer(requestStateKey(opts.requestStateSecret), {
      clock: systemClock,
      ...(opts.approvalLinkTtlMs !== undefined ? { ttlMs: opts.approvalLinkTtlMs } : {}),
    }),
    ...(opts.approvalLinkTtlMs !== undefined ? { approvalLinkTtlMs: opts.approvalLinkTtlMs } : {}),
    approvalTimeoutMs: opts.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
    ...(opts.notifyUrl ? { notifyUrl: opts.notifyUrl } : {}),
    // A downstream that exits is started (or reconnected) again on the next request.
    reconnect: () => connectDownstream(opts.downstream),
    ...(opts.callTimeoutMs !== undefined ? { callTimeoutMs: opts.callTimeoutMs } : {}),
    ...(opts.toolsRelistMs !== undefined ? { toolsRelistMs: opts.toolsRelistMs } : {}),
    ...(fault ? { fault } : {}),
  });
  proxy.approvalsUrl = opts.approvalsUrl;
  // Arguments of decided acts are purged after the retention period, with or without a page.
  const purge = () => void pendingArguments.purge(Date.now(), retain).catch(() => log('arguments_purge_failed', {}, 'warn'));
  purge();
  const purgeTimer = setInterval(purge, 60_000);
  purgeTimer.unref();

  let resolveDone!: () => void;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });
  const served: Served = {};
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(purgeTimer);
      await served.ui?.close();
      await served.listener?.close();
      await served.stdio?.close();
      await proxy.close();
      for (const g of gates.values()) await g.close().catch(() => {});
      log('stopped', { server_id: serverId });
      resolveDone();
    })());
  try {
    await serve(opts, proxy, log, retain, served, stop, access);
    // Service mode: the gateway's own credential is used (or its authorization link printed) at start.
    if (access?.mode === 'service') await proxy.warm();
  } catch (e) {
    // Not serving (e.g. the port is taken): stop the downstream child it started; the caller closes the store.
    clearInterval(purgeTimer);
    await served.ui?.close();
    await proxy.close();
    throw e;
  }
  return { serverId, ...(served.listener ? { listener: served.listener } : {}), ...(served.ui ? { ui: served.ui } : {}), done, stop };
}

/** The downstream OAuth credentials, every combination checked before anything starts (a bad one is a usage error). */
function downstreamAccess(opts: ProxyOptions, o: DownstreamOAuthOptions, log: ProxyLog): DownstreamOAuth {
  if (o.mode !== 'service' && !opts.auth)
    throw new VrpError('usage', `downstream OAuth mode ${o.mode} holds a credential per user: it needs team mode (--auth-issuer)`);
  if (o.grant !== 'client_credentials' && !opts.listen && !o.redirectUrl)
    throw new VrpError('usage', 'downstream OAuth needs --listen: its callback is served there');
  try {
    return new DownstreamOAuth(opts.downstream, o, log);
  } catch (e) {
    throw new VrpError('usage', (e as Error).message);
  }
}

/** The gate of every policy member by name (`default`: the proxy's own policy, or the set's default member). */
async function memberGates(opts: ProxyOptions, fault: ProxyFaultPoint | undefined): Promise<Map<string, Gate>> {
  const gates = new Map([['default', await proxyGate(opts, fault)]]);
  for (const member of opts.auth?.policySet?.members.slice(1) ?? [])
    gates.set(member.name, await proxyGate({ ...opts, policy: member.policy }, fault));
  return gates;
}

/** The proxy's own gate: its sink, a key made for this process, outcomes written after the answer. */
async function proxyGate(opts: ProxyOptions, fault: ProxyFaultPoint | undefined): Promise<Gate> {
  const { privateJwk, publicJwk } = await generateEd25519Jwk();
  return new Gate({
    store: opts.store,
    policy: opts.policy,
    sinkId: `gate-proxy:${opts.name}`,
    signingKey: { privateJwk, kid: await jwkThumbprint(publicJwk) },
    // The tool result goes back to the agent before its outcome commit (EFFECT_RESULT_UNKNOWN if the proxy dies in between).
    deferOutcome: true,
    // The consume (journal row INVOKED) commits before the downstream call: the first crash window (Tool-Use Binding draft, retries).
    ...(fault === 'after-consume'
      ? { onEvent: (e: { type: string; state?: string }) => (e.type === 'journal' && e.state === 'CONSUMED' ? sigkillSelf() : undefined) }
      : {}),
  });
}

/**
 * The downstream, or a stable code for the operator (not internal_error). The cause's message
 * names no argument or header: spawn errors name the command alone, connection errors the address alone.
 */
function connectOrRefuse(spec: DownstreamSpec): ReturnType<typeof connectDownstream> {
  return connectDownstream(spec).catch((e: unknown) => {
    throw new VrpError(
      'downstream_unavailable',
      `the downstream MCP server could not be started or reached: ${e instanceof Error ? e.message : String(e)}`,
      undefined,
      { cause: e },
    );
  });
}

function warnOfDevelopmentModes(log: ProxyLog, mode: ProxyMode, pinOnFirstUse: boolean): void {
  if (pinOnFirstUse)
    log(
      'pin_on_first_use',
      { message: 'DEVELOPMENT ONLY: every tool seen for the first time is pinned without review; tool poisoning is not caught' },
      'warn',
    );
  if (mode === 'observe')
    log('observe_mode', { message: 'OBSERVE MODE: every call is forwarded; denies are recorded, not enforced' }, 'warn');
}

/** What `serve` started, so stopping (or a failed start) closes exactly that. */
interface Served {
  listener?: AgentListener;
  stdio?: StdioServerHandle;
  ui?: ApprovalsUi;
}

/** The approvals page (`--ui`), then the agent side: Streamable HTTP on `listen`, else stdio. */
async function serve(
  opts: ProxyOptions,
  proxy: GateProxy,
  log: ProxyLog,
  retain: number,
  served: Served,
  stop: () => Promise<void>,
  access: DownstreamOAuth | undefined,
) {
  if (opts.ui) {
    // Loaded here only: the page needs hono at run time, a proxy without --ui does not.
    const { startApprovalsUi } = await import('../ui/index.js');
    const ui = await startApprovalsUi({
      store: opts.store,
      listen: opts.ui.listen,
      approver: opts.ui.approver,
      ...(opts.ui.approvers ? { approvers: opts.ui.approvers } : {}),
      selfApproval: selfApprovalRule(opts.policy, opts.auth?.policySet),
      retainArgumentsMs: retain,
      onDecision: (fields) => log('approvals_page_decision', fields),
    });
    served.ui = ui;
    proxy.approvalsUrl ??= ui.url;
    // The token is printed this once, like a notebook server's; known approvers sign in instead.
    log('approvals_page', ui.token ? { url: ui.url, token: ui.token, open: `${ui.url}?token=${ui.token}` } : { url: ui.url });
  }
  const mode = opts.mode ?? 'enforce';
  const maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (opts.listen) {
    const { allowedHosts, ...at } = opts.listen;
    served.listener = await listenForAgents(proxy, at, {
      maxMessageBytes,
      ...(allowedHosts ? { allowedHosts } : {}),
      ...(opts.auth ? { resourceServer: opts.auth.resourceServer } : {}),
      ...(access ? { oauthCallback: (request: Request) => access.callback(request) } : {}),
    });
    if (access) access.listenerUrl = served.listener.url;
    // The token is printed this once; the agent's configuration holds it from here on.
    log('listening', { url: served.listener.url, token: served.listener.token, mode });
  } else {
    const { input, output } = opts.stdio ?? { input: process.stdin, output: process.stdout };
    served.stdio = serveAgentStdio(proxy, new AgentStdioTransport(input, output, maxMessageBytes), stop);
    log('serving_stdio', { mode });
  }
}
