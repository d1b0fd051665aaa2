import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { type Clock, systemClock, VrpError } from '@vrpkit/core';
import { type AuthorityStore, loadPolicy, openPostgresStore, openSqliteStore, type ProxyMode, ProxyStore } from '@vrpkit/gate';
import type { DownstreamSpec } from '@vrpkit/gate/proxy';
import { type Command, Option } from 'commander';
import { printJson, run, terminalSafe, usage } from '../io.js';
import { parseDuration, parseNotifyUrl } from './gate-ui.js';

/**
 * `vrp gate proxy`, `vrp gate tools`, `vrp gate report`: the gate as a sidecar in front of an
 * MCP server (docs/gateway.md). Registered under `vrp gate`.
 */
export function registerGateProxyCommands(gate: Command, clock: Clock = systemClock): void {
  storeOption(
    gate
      .command('proxy')
      .description(
        'run an MCP server behind the gate: `vrp gate proxy --policy P --store S -- COMMAND ARGS…` (stdio child) or `--upstream URL`; the agent connects over stdio (or --listen)',
      )
      .argument('[command...]', 'the downstream MCP server command and its arguments, after --')
      .requiredOption('--policy <file>', 'gate policy (JSON or YAML; `vrp gate policy check` validates it)')
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
      .option('--insecure-http-upstream', 'INSECURE: allow a plain http:// upstream (credentials and calls travel unencrypted)')
      .option('--listen <host:port>', 'serve the agent over Streamable HTTP on this loopback address (bearer token printed once on stderr)')
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
      .option('--approvals-url <url>', 'the approvals page the --notify-url notice links to (default: the --ui page)')
      .option('--ui', 'also serve the approvals page from this process (URL and token printed once on stderr)')
      .option('--ui-listen <host:port>', 'loopback address of the approvals page (with --ui)', '127.0.0.1:0')
      .option('--approver <name>', 'recorded as the approver of decisions made on the --ui page', process.env.USER ?? 'approvals-page')
      .option(
        '--retain-arguments <duration>',
        'keep the arguments of escalated acts this long after the decision (30m, 24h, 7d), then purge them',
        '7d',
      )
      .option(
        '--max-message-bytes <bytes>',
        'cap on one agent message (a stdio line or an HTTP request body); larger ones get a JSON-RPC -32600 error',
        String(4 * 1024 * 1024),
      )
      .option(
        '--call-timeout <seconds>',
        'bound on each downstream request; a tools/call over it is cancelled and answered with a downstream_timeout tool error',
        '60',
      ),
    false,
  ).action((command: string[], o: ProxyOpts) => runProxyCommand(command, o));

  const tools = gate
    .command('tools')
    .description('tool pins: a tool is listed and callable through `vrp gate proxy` only with its reviewed definition pinned');
  storeOption(
    tools
      .command('list')
      .description('tools the proxies have seen, with their definition digest and pin state')
      .option('--server <server-id>', 'only this server identity'),
  ).action((o: StoreOpts & { server?: string }) =>
    withProxyStore(o, async (t) => {
      const rows = (await t.listPins(o.server)).map((r) => ({
        server_id: r.server_id,
        tool: r.tool_name,
        state: r.pinned_digest === null ? 'unpinned' : r.pinned_digest === r.seen_digest ? 'pinned' : 'changed',
        seen_digest: r.seen_digest,
        pinned_digest: r.pinned_digest,
        pinned_by: r.pinned_by,
        definition: JSON.parse(r.seen_definition) as Record<string, unknown>,
        server_info: r.server_info ? (JSON.parse(r.server_info) as Record<string, unknown>) : null,
        seen_at: new Date(r.seen_at).toISOString(),
      }));
      if (o.json) return printJson(rows);
      if (!rows.length) return void process.stdout.write('no tools seen yet: start `vrp gate proxy` once, or call tools/list through it\n');
      for (const r of rows) {
        // Names and descriptions are the downstream server's text: escaped, never raw, on a terminal.
        const description = typeof r.definition.description === 'string' ? r.definition.description.split('\n')[0]!.slice(0, 100) : '';
        process.stdout.write(
          `${r.state.padEnd(8)}  ${terminalSafe(r.tool)}  digest=${r.seen_digest}  server=${terminalSafe(r.server_id)}\n          ${terminalSafe(description)}\n`,
        );
      }
    }),
  );
  storeOption(
    tools
      .command('pin')
      .description('pin the definition of these tools as last seen (review it with `tools list --json` first)')
      .argument('[tools...]', 'tool names')
      .option('--all', 'every tool of the server that is not pinned to its current definition')
      .option('--server <server-id>', 'the server identity (required when tools of several servers are known)')
      .option('--digest <digest>', 'pin only if the definition seen still has this digest (the one you reviewed); one tool only')
      .option('--by <name>', 'who pins (recorded)', process.env.USER ?? 'cli'),
  ).action((names: string[], o: StoreOpts & { all?: boolean; server?: string; digest?: string; by: string }) =>
    withProxyStore(o, async (t) => {
      if (!o.all === !names.length) throw usage('name the tools to pin, or give --all');
      if (o.digest !== undefined && names.length !== 1) throw usage('--digest pins exactly one tool');
      const rows = await t.listPins(o.server);
      const server = singleServer(rows, o.server);
      const targets = o.all
        ? rows.filter((r) => r.server_id === server && r.pinned_digest !== r.seen_digest).map((r) => r.tool_name)
        : names;
      const out = [];
      for (const name of targets) {
        const r = await t.pin(server, name, { by: o.by, now: clock.now(), ...(o.digest !== undefined ? { digest: o.digest } : {}) });
        if (!r.pinned && r.reason === 'unknown_tool')
          throw new VrpError('unknown_tool', `no tool ${terminalSafe(name)} seen for server ${terminalSafe(server)}`);
        if (!r.pinned)
          throw new VrpError(
            'digest_mismatch',
            `${terminalSafe(name)}'s definition is now ${r.row?.seen_digest}, not the reviewed ${o.digest}; nothing was pinned`,
          );
        out.push({ server_id: server, tool: name, pinned_digest: r.row.pinned_digest, pinned_by: r.row.pinned_by });
      }
      if (o.json) return printJson(out);
      for (const p of out)
        process.stdout.write(`pinned ${terminalSafe(p.tool)} (digest ${p.pinned_digest}) for ${terminalSafe(p.server_id)}\n`);
      if (!out.length) process.stdout.write('nothing to pin\n');
    }),
  );
  storeOption(
    tools
      .command('unpin')
      .description('remove pins: the tools are hidden and refused until pinned again')
      .argument('<tools...>', 'tool names')
      .option('--server <server-id>', 'the server identity (required when tools of several servers are known)'),
  ).action((names: string[], o: StoreOpts & { server?: string }) =>
    withProxyStore(o, async (t) => {
      const server = singleServer(await t.listPins(o.server), o.server);
      const out = [];
      for (const name of names) out.push({ server_id: server, tool: name, unpinned: await t.unpin(server, name) });
      if (o.json) return printJson(out);
      for (const u of out) process.stdout.write(`${u.unpinned ? 'unpinned' : 'was not pinned:'} ${terminalSafe(u.tool)}\n`);
    }),
  );

  storeOption(
    gate
      .command('report')
      .description(
        'the pilot metric: denies that would have been sends (observe mode) and denies (enforce mode), by consequence class, tool and code',
      )
      .option('--since <when>', 'only since this time: a duration back from now (30m, 24h, 7d) or an ISO date', '7d'),
  ).action((o: StoreOpts & { since: string }) =>
    withProxyStore(o, async (t) => {
      const since = parseSince(o.since, clock.now());
      const counts = await t.countObservations(since);
      const rows = new Map<string, { consequence_class: string; tool: string; code: string; would_have_denied: number; denied: number }>();
      for (const c of counts) {
        const key = `${c.consequence_class}\u0000${c.tool_name}\u0000${c.code}`;
        const row = rows.get(key) ?? {
          consequence_class: c.consequence_class,
          tool: c.tool_name,
          code: c.code,
          would_have_denied: 0,
          denied: 0,
        };
        if (c.mode === 'observe') row.would_have_denied += c.count;
        else row.denied += c.count;
        rows.set(key, row);
      }
      const out = {
        since: new Date(since).toISOString(),
        rows: [...rows.values()],
        totals: {
          would_have_denied: [...rows.values()].reduce((n, r) => n + r.would_have_denied, 0),
          denied: [...rows.values()].reduce((n, r) => n + r.denied, 0),
        },
      };
      if (o.json) return printJson(out);
      const table = [
        ['CLASS', 'TOOL', 'CODE', 'WOULD HAVE DENIED (observe)', 'DENIED (enforce)'],
        ...out.rows.map((r) => [r.consequence_class, terminalSafe(r.tool), r.code, String(r.would_have_denied), String(r.denied)]),
        ['total', '', '', String(out.totals.would_have_denied), String(out.totals.denied)],
      ];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
      process.stdout.write(`since ${out.since}\n`);
      for (const r of table)
        process.stdout.write(
          `${r
            .map((c, i) => c.padEnd(widths[i]!))
            .join('  ')
            .trimEnd()}\n`,
        );
    }),
  );
}

export interface StoreOpts {
  store: string;
  schema: string;
  json?: boolean;
}

interface ProxyOpts extends StoreOpts {
  policy: string;
  name?: string;
  mode: ProxyMode;
  upstream?: string;
  upstreamHeader: string[];
  insecureHttpUpstream?: boolean;
  listen?: string;
  pinOnFirstUse?: boolean;
  approvalTimeout: string;
  notifyUrl?: string;
  approvalsUrl?: string;
  ui?: boolean;
  uiListen: string;
  approver: string;
  retainArguments: string;
  maxMessageBytes: string;
  callTimeout: string;
}

export function storeOption(c: Command, withJson = true): Command {
  c.requiredOption('--store <sqlite-file|postgres-url>', 'the gate store: a SQLite file, or a postgres:// URL').option(
    '--schema <name>',
    'PostgreSQL schema of the gate tables',
    'vrpkit_gate',
  );
  return withJson ? c.option('--json', 'machine-readable output') : c;
}

function isPostgresUrl(store: string): boolean {
  return /^postgres(ql)?:\/\//.test(store);
}

export function openStore(o: StoreOpts, create: boolean): Promise<AuthorityStore> {
  if (isPostgresUrl(o.store)) return openPostgresStore(o.store, { schema: o.schema });
  // Operating on a store means an existing one: never create an empty database by a typo.
  if (!create && !existsSync(o.store)) throw new VrpError('no_store', `no gate store at ${o.store}`);
  return openSqliteStore(o.store);
}

async function withProxyStore(o: StoreOpts, fn: (tables: ProxyStore) => Promise<void>): Promise<void> {
  await run(o.json, async () => {
    const store = await openStore(o, false);
    try {
      await fn(new ProxyStore(store));
    } finally {
      await store.close();
    }
  });
}

/** The proxy runs until the agent's stdio closes (or SIGINT/SIGTERM); errors before it serves exit 1 (64 for usage). */
async function runProxyCommand(command: string[], o: ProxyOpts): Promise<void> {
  await run(false, async () => {
    // Loaded here only: the proxy needs the MCP SDK at run time, the other `vrp` commands do not.
    const { parseListen, startProxy } = await import('@vrpkit/gate/proxy');
    const downstream = downstreamSpec(command, o);
    const listen = o.listen === undefined ? undefined : parseUsage(() => parseListen(o.listen!));
    const approvalTimeoutMs = parseUsage(() => parseDuration(o.approvalTimeout, '--approval-timeout', 's'));
    const retainArgumentsMs = parseUsage(() => parseDuration(o.retainArguments, '--retain-arguments'));
    const notifyUrl = o.notifyUrl === undefined ? undefined : parseUsage(() => parseNotifyUrl(o.notifyUrl!));
    if (!o.ui && o.uiListen !== '127.0.0.1:0') throw usage('--ui-listen needs --ui');
    const ui = o.ui ? { listen: parseUsage(() => parseListen(o.uiListen)), approver: o.approver } : undefined;
    const maxMessageBytes = positiveNumber('--max-message-bytes', o.maxMessageBytes, true);
    const callTimeoutMs = positiveNumber('--call-timeout', o.callTimeout, false) * 1000;
    const name = o.name ?? defaultName(downstream);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) throw usage(`--name must be 1–64 characters of A–Z a–z 0–9 . _ -, got ${name}`);
    const policy = loadPolicy(o.policy);
    const store = await openStore(o, true);
    let proxy: Awaited<ReturnType<typeof startProxy>>;
    try {
      proxy = await startProxy({
        policy,
        store,
        name,
        downstream,
        mode: o.mode,
        pinOnFirstUse: !!o.pinOnFirstUse,
        maxMessageBytes,
        callTimeoutMs,
        ...(listen ? { listen } : {}),
        approvalTimeoutMs,
        retainArgumentsMs,
        ...(notifyUrl ? { notifyUrl } : {}),
        ...(o.approvalsUrl ? { approvalsUrl: parseUsage(() => new URL(o.approvalsUrl!).toString()) } : {}),
        ...(ui ? { ui } : {}),
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
  });
}

function downstreamSpec(command: string[], o: ProxyOpts): DownstreamSpec {
  if (!o.upstream === !command.length) throw usage('give the downstream server as `-- COMMAND ARGS…` or as --upstream URL (exactly one)');
  if (!o.upstream) {
    if (o.upstreamHeader.length) throw usage('--upstream-header needs --upstream');
    return { kind: 'stdio', command: command[0]!, args: command.slice(1) };
  }
  let url: URL;
  try {
    url = new URL(o.upstream);
  } catch {
    throw usage(`--upstream is not a URL: ${o.upstream}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && o.insecureHttpUpstream))
    throw usage(`--upstream must be https:// (plain http only with --insecure-http-upstream), got ${url.protocol}`);
  const headers: Record<string, string> = {};
  for (const h of o.upstreamHeader) {
    const i = h.indexOf(':');
    if (i <= 0) throw usage(`--upstream-header must be 'Name: value', got a value without a name`);
    headers[h.slice(0, i).trim()] = expandEnv(h.slice(i + 1).trim());
  }
  return { kind: 'http', url: url.toString(), headers };
}

/**
 * `$VAR` and `${VAR}` from the proxy's environment: the credential stays in the proxy's
 * environment and never appears in the agent's configuration. A missing variable is an error
 * (an empty credential would be sent otherwise). The value is never printed.
 */
function expandEnv(value: string): string {
  return value.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (_, braced?: string, bare?: string) => {
    const name = (braced ?? bare)!;
    const v = process.env[name];
    if (v === undefined || v === '') throw usage(`--upstream-header refers to $${name}, which is not set in the proxy's environment`);
    return v;
  });
}

function defaultName(d: DownstreamSpec): string {
  const raw = d.kind === 'stdio' ? basename(d.command) : new URL(d.url).hostname;
  return (
    raw
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 64) || 'mcp'
  );
}

/** The server to operate on: the one named, or the only one known. */
function singleServer(rows: readonly { server_id: string }[], named: string | undefined): string {
  if (named) return named;
  const servers = [...new Set(rows.map((r) => r.server_id))];
  if (servers.length === 1) return servers[0]!;
  if (!servers.length) throw new VrpError('unknown_tool', 'no tools seen yet: start `vrp gate proxy` and list its tools once');
  throw usage(`tools of several servers are known; name one with --server (${terminalSafe(servers.join(', '))})`);
}

const DURATION = /^(\d{1,6})([mhd])$/;

export function parseSince(v: string, now: number): number {
  const m = DURATION.exec(v);
  if (m) return now - Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw usage(`--since must be a duration (30m, 24h, 7d) or an ISO date, got ${v}`);
  return t;
}

function positiveNumber(flag: string, v: string, integer: boolean): number {
  const n = Number(v);
  if (!v.trim() || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw usage(`${flag} must be a positive ${integer ? 'integer' : 'number'}, got ${v}`);
  return n;
}

export function parseUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw usage((e as Error).message);
  }
}
