/**
 * `vrp gate proxy`: the gate as a sidecar in front of an MCP server (docs/gateway.md). The agent
 * connects over stdio (or `--listen`); every tool call is enforced before it reaches the server.
 */
import { loadPolicy, type ProxyMode } from '@vrpkit/gate';
import type { ProxyLog } from '@vrpkit/gate/proxy';
import { type Command, Option } from 'commander';
import { usage } from '../../errors.js';
import { run } from '../../io.js';
import { type ApproverSignInOptions, approverSignInOptions, approversConfig } from './approvers.js';
import { type DownstreamOptions, defaultName, downstreamSpec } from './downstream.js';
import { type DownstreamOAuthFlags, downstreamOAuthFlags, downstreamOAuthSettings } from './downstream-oauth.js';
import {
  approverOption,
  type GateStoreOptions,
  openStore,
  parseDuration,
  parseUsage,
  retainArgumentsOption,
  storeOption,
} from './options.js';

interface ProxyOptions extends GateStoreOptions, DownstreamOptions, ApproverSignInOptions, DownstreamOAuthFlags {
  policy?: string;
  policySet?: string;
  authIssuer?: string;
  authResource?: string;
  authIntrospectionClient?: string;
  authClassScope: string[];
  name?: string;
  mode: ProxyMode;
  listen?: string;
  allowedHost: string[];
  pinOnFirstUse?: boolean;
  approvalTimeout: string;
  notifyUrl?: string;
  approvalsUrl?: string;
  approvalLinkTtl: string;
  ui?: boolean;
  uiListen: string;
  approver: string;
  retainArguments: string;
  maxMessageBytes: string;
  callTimeout: string;
}

/** `--notify-url`: https only (the notice names acts and links the page). */
function parseNotifyUrl(v: string): string {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new RangeError(`--notify-url is not a URL: ${v}`);
  }
  if (url.protocol !== 'https:') throw new RangeError(`--notify-url must be https://, got ${url.protocol}`);
  return url.toString();
}

function positiveNumber(flag: string, v: string, integer: boolean): number {
  const n = Number(v);
  if (!v.trim() || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw usage(`${flag} must be a positive ${integer ? 'integer' : 'number'}, got ${v}`);
  return n;
}

/** Which server is fronted, under which policy and name, and in which mode. */
function downstreamOptions(c: Command): Command {
  return c
    .argument('[command...]', 'the downstream MCP server command and its arguments, after --')
    .option('--policy <file>', 'gate policy (JSON or YAML; `vrp gate policy check` validates it); or --policy-set')
    .option(
      '--policy-set <file>',
      'team mode: a policy per user or group (default + members chosen by token subject, client or group; needs --auth-issuer)',
    )
    .option('--name <name>', 'proxy name: session id of its acts and its sink id; concurrent proxies on one store need distinct names')
    .addOption(
      new Option(
        '--mode <mode>',
        'enforce: deny what policy does not authorize; observe: forward everything, record what enforce would have denied',
      )
        .choices(['enforce', 'observe'])
        .default('enforce'),
    )
    .option('--upstream <url>', 'front a Streamable HTTP MCP server instead of a stdio child')
    .option(
      '--upstream-header <header>',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the help text shows the literal ${VAR} syntax
      "a header sent to the upstream, e.g. 'Authorization: Bearer $TOKEN' ($VAR and ${VAR} are expanded from the proxy's environment)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--insecure-http-upstream', 'INSECURE: allow a plain http:// upstream (credentials and calls travel unencrypted)');
}

/** How the agent reaches the proxy, how an escalated call waits for a person, and the proxy's bounds. */
function agentOptions(c: Command): Command {
  return c
    .option('--listen <host:port>', 'serve the agent over Streamable HTTP on this loopback address (bearer token printed once on stderr)')
    .option(
      '--allowed-host <name>',
      'with --listen: a Host/Origin name accepted besides the loopback ones (e.g. a local reverse proxy); repeatable',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--auth-issuer <url>',
      'team mode: accept OAuth access tokens from this authorization server instead of the printed token (needs --listen)',
    )
    .option('--auth-resource <url>', "this gateway's public MCP URL, the tokens' audience (default: the --listen address's /mcp)")
    .option(
      '--auth-introspection-client <id>',
      'validate tokens by RFC 7662 introspection as this client (secret from VRPKIT_INTROSPECTION_SECRET) instead of as JWTs',
    )
    .option(
      '--auth-class-scope <class=scopes>',
      "team mode: the scopes a tools/call needs by the tool's consequence class, e.g. FINANCIAL=payments (space- or comma-separated); a token without them gets 403 insufficient_scope naming them (step-up); repeatable",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--pin-on-first-use', 'DEVELOPMENT ONLY: pin every tool the first time it is seen, without review')
    .option(
      '--approval-timeout <duration>',
      'how long an escalated call waits for a person (progress notifications meanwhile), then returns the pending deny: 90, 90s, 2m; 0 = no wait',
      '120s',
    )
    .option(
      '--notify-url <url>',
      'POST a JSON notice (act id, tool, server, class, digests, page link; never the arguments) when an act waits',
    )
    .option('--approvals-url <url>', 'the approvals page the --notify-url notice and the approval links point to (default: the --ui page)')
    .option(
      '--approval-link-ttl <duration>',
      'how long the single-use link to one act, sent to a client that declared URL elicitation, stays usable: 10m, 600s',
      '10m',
    )
    .option('--ui', 'also serve the approvals page from this process (URL and token printed once on stderr)')
    .option('--ui-listen <host:port>', 'loopback address of the approvals page (with --ui)', '127.0.0.1:0')
    .addOption(approverOption('recorded as the approver of decisions made on the --ui page'))
    .addOption(retainArgumentsOption())
    .option(
      '--max-message-bytes <bytes>',
      'cap on one agent message (a stdio line or an HTTP request body); larger ones get a JSON-RPC -32600 error',
      String(4 * 1024 * 1024),
    )
    .option(
      '--call-timeout <seconds>',
      'bound on each downstream request; a tools/call over it is cancelled and answered with a downstream_timeout tool error',
      '60',
    );
}

/** The proxy's options as `startProxy` takes them, every value checked (a bad one is a usage error) before anything starts. */
async function proxyOptions(command: string[], o: ProxyOptions) {
  // Loaded here only: the proxy needs the MCP SDK at run time, the other `vrp` commands do not.
  const { parseListen } = await import('@vrpkit/gate/proxy');
  const downstream = downstreamSpec(command, o);
  if (o.listen === undefined && o.allowedHost.length) throw usage('--allowed-host needs --listen');
  const listen =
    o.listen === undefined
      ? undefined
      : { ...parseUsage(() => parseListen(o.listen!)), ...(o.allowedHost.length ? { allowedHosts: o.allowedHost } : {}) };
  const approvalTimeoutMs = parseUsage(() => parseDuration(o.approvalTimeout, '--approval-timeout', 's'));
  const retainArgumentsMs = parseUsage(() => parseDuration(o.retainArguments, '--retain-arguments'));
  const approvalLinkTtlMs = parseUsage(() => parseDuration(o.approvalLinkTtl, '--approval-link-ttl', 's'));
  if (approvalLinkTtlMs <= 0) throw usage('--approval-link-ttl must be more than 0');
  const notifyUrl = o.notifyUrl === undefined ? undefined : parseUsage(() => parseNotifyUrl(o.notifyUrl!));
  if (!o.ui && o.uiListen !== '127.0.0.1:0') throw usage('--ui-listen needs --ui');
  const approvers = await approversConfig(o);
  if (!o.ui && approvers) throw usage('--approver-oidc-issuer and --approver-passkeys need --ui (they sign in to its page)');
  const ui = o.ui
    ? { listen: parseUsage(() => parseListen(o.uiListen)), approver: o.approver, ...(approvers ? { approvers } : {}) }
    : undefined;
  const maxMessageBytes = positiveNumber('--max-message-bytes', o.maxMessageBytes, true);
  const callTimeoutMs = positiveNumber('--call-timeout', o.callTimeout, false) * 1000;
  const name = o.name ?? defaultName(downstream);
  const auth = await authOptions(o, listen);
  const downstreamOAuth = await downstreamOAuthSettings(o, downstream, { teamMode: !!auth, listen: !!listen });
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) throw usage(`--name must be 1–64 characters of A–Z a–z 0–9 . _ -, got ${name}`);
  if (!o.policy === !o.policySet) throw usage('give one of --policy or --policy-set');
  return {
    policy: loadPolicy(o.policy ?? { version: 1, policy_id: 'policy-set' }),
    ...(auth ? { auth } : {}),
    ...(downstreamOAuth ? { downstreamOAuth } : {}),
    name,
    downstream,
    mode: o.mode,
    pinOnFirstUse: !!o.pinOnFirstUse,
    maxMessageBytes,
    callTimeoutMs,
    ...(listen ? { listen } : {}),
    approvalTimeoutMs,
    approvalLinkTtlMs,
    retainArgumentsMs,
    ...(notifyUrl ? { notifyUrl } : {}),
    ...(o.approvalsUrl ? { approvalsUrl: parseUsage(() => new URL(o.approvalsUrl!).toString()) } : {}),
    ...(ui ? { ui } : {}),
  };
}

/**
 * Team mode (issue 33): the listener as an OAuth resource server and, with `--policy-set`, a policy
 * per principal. The introspection secret comes from the environment only (a flag shows in `ps`).
 */
async function authOptions(o: ProxyOptions, listen: { host: string; port: number } | undefined) {
  if (!o.authIssuer) {
    if (o.policySet || o.authResource || o.authIntrospectionClient || o.authClassScope.length)
      throw usage('--policy-set, --auth-resource, --auth-introspection-client and --auth-class-scope need --auth-issuer');
    return undefined;
  }
  if (!listen) throw usage('--auth-issuer needs --listen (tokens arrive over HTTP)');
  const { loadPolicySet, ResourceServer } = await import('@vrpkit/gate/proxy');
  const classScopes = await classScopesOf(o.authClassScope);
  // Compared as the exact string the server's metadata names (RFC 8414 §3.3): checked as a URL, kept as given.
  parseUsage(() => new URL(o.authIssuer!));
  const issuer = o.authIssuer;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  const resource = o.authResource ? parseUsage(() => new URL(o.authResource!).toString()) : `http://${host}:${listen.port}/mcp`;
  if (!o.authResource && listen.port === 0)
    throw usage('--auth-issuer with --listen on port 0 needs --auth-resource (the audience must be known)');
  let validation: { kind: 'jwt' } | { kind: 'introspection'; clientId: string; clientSecret: string } = { kind: 'jwt' };
  if (o.authIntrospectionClient) {
    const clientSecret = process.env.VRPKIT_INTROSPECTION_SECRET;
    if (!clientSecret) throw usage('--auth-introspection-client needs the client secret in VRPKIT_INTROSPECTION_SECRET');
    validation = { kind: 'introspection', clientId: o.authIntrospectionClient, clientSecret };
  }
  return {
    resourceServer: new ResourceServer({ resource, issuer, validation, ...(classScopes ? { classScopes } : {}) }),
    ...(o.policySet ? { policySet: loadPolicySet(o.policySet) } : {}),
  };
}

/** `--auth-class-scope CLASS=SCOPES` values as the resource server's scopes per class; a class named twice or unknown is a usage error. */
async function classScopesOf(values: string[]): Promise<Record<string, string[]> | undefined> {
  if (values.length === 0) return undefined;
  const { CONSEQUENCE_CLASSES } = await import('@vrpkit/gate');
  const out: Record<string, string[]> = {};
  for (const v of values) {
    const m = /^([A-Z_]+)=(.+)$/.exec(v);
    const scopes = m?.[2]?.split(/[\s,]+/).filter(Boolean) ?? [];
    if (!m || scopes.length === 0) throw usage(`--auth-class-scope must be CLASS=SCOPES, got ${v}`);
    const cls = m[1] as string;
    if (!(CONSEQUENCE_CLASSES as readonly string[]).includes(cls))
      throw usage(`--auth-class-scope: unknown consequence class ${cls}; one of ${CONSEQUENCE_CLASSES.join(', ')}`);
    if (out[cls]) throw usage(`--auth-class-scope: ${cls} given twice`);
    out[cls] = scopes;
  }
  return out;
}

/**
 * The proxy's log (JSON lines on stderr); its one line for an agent listed zero tools because none
 * is pinned (`tools_held_until_pinned`, issue 32 item 7) names this store in the commands that pin. A
 * PostgreSQL URL is not repeated (it can hold a password).
 */
function withPinningHint(log: ProxyLog, o: Pick<ProxyOptions, 'store' | 'ui'>): ProxyLog {
  const store = /^postgres(ql)?:\/\//.test(o.store) ? 'URL' : o.store;
  return (event, fields = {}, level) => {
    if (event !== 'tools_held_until_pinned') return log(event, fields, level);
    log(
      event,
      {
        ...fields,
        message:
          'the agent is listed only the tools whose current definition a person pinned, and none of these is pinned yet: ' +
          `review them with \`vrp gate tools list --store ${store}\`, then pin with \`vrp gate tools pin TOOL… --store ${store}\`` +
          `${o.ui ? ' or on the approvals page' : ' (or with --ui, on the approvals page)'}; the client lists them after it lists tools again`,
      },
      level,
    );
  };
}

/** The proxy runs until the agent's stdio closes (or SIGINT/SIGTERM); errors before it serves exit 1 (64 for usage). */
async function runProxy(command: string[], o: ProxyOptions): Promise<void> {
  const { jsonLinesLog, startProxy } = await import('@vrpkit/gate/proxy');
  const options = await proxyOptions(command, o);
  const store = await openStore(o, true);
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  try {
    const { downstreamOAuth, ...rest } = options;
    proxy = await startProxy({
      ...rest,
      // The held credentials live in the store the proxy decides in.
      ...(downstreamOAuth ? { downstreamOAuth: { ...downstreamOAuth, credentials: store.downstreamCredentials } } : {}),
      store,
      log: withPinningHint(jsonLinesLog(), o),
    });
  } catch (e) {
    await store.close().catch(() => {});
    throw e;
  }
  const stop = () => void proxy.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await proxy.done;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
}

/** `vrp gate proxy --policy P --store S -- COMMAND ARGS…` (or `--upstream URL`). */
export function registerProxy(gate: Command): void {
  const proxy = gate
    .command('proxy')
    .description(
      'run an MCP server behind the gate: `vrp gate proxy --policy P --store S -- COMMAND ARGS…` (stdio child) or `--upstream URL`; the agent connects over stdio (or --listen)',
    );
  storeOption(downstreamOAuthFlags(approverSignInOptions(agentOptions(downstreamOptions(proxy)))), false).action(
    (command: string[], o: ProxyOptions) => run(false, () => runProxy(command, o)),
  );
}
