/**
 * bench/gateway — what `vrp gate proxy` adds to a `tools/call` round trip. The agent is the
 * official SDK `Client`; the downstream is `@modelcontextprotocol/server-everything`; every
 * proxied call is an allowed, durable, consequential act (a hot envelope issues authority, it is
 * consumed, journaled INVOKED and EFFECTUATED in the store) with arguments no call repeats. The
 * baseline is the same call sent directly to the same downstream, interleaved call by call with
 * the proxied ones in the same run, so both see the same machine load.
 *
 * - stdio: agent ⇄ stdio ⇄ proxy ⇄ stdio ⇄ server, vs agent ⇄ stdio ⇄ server (each its own child)
 * - http: agent ⇄ Streamable HTTP ⇄ proxy (--listen) ⇄ Streamable HTTP ⇄ server (--upstream), vs agent ⇄ HTTP ⇄ server
 *
 * on the SQLite store (a real file) and on PostgreSQL (VRPKIT_TEST_PG_URL; skipped when unset).
 * Target: added p50 ≤ 1.5 ms and added p99 ≤ 4 ms on SQLite. Both agent revisions run on both stores.
 *
 * Each side runs for both MCP revisions of the agent (issue 32). A 2025-11-25 row: an SDK v1
 * client on both sides. A 2026-07-28 row: an SDK v2 client (`@modelcontextprotocol/client`) on
 * both sides, pinned to 2026-07-28 (per request, no session) for the proxied calls and on its
 * default legacy negotiation (2025-11-25, the only revision the downstream speaks) for the direct
 * ones, so both sides pay the same client library and a 2026 row's added time is the proxy
 * (serving the other revision included) plus the v2 client's own 2026-vs-2025 codec difference,
 * not the v1/v2 library difference the bench once counted as "added" (0.04-0.5 ms).
 *
 * Both SDKs' Streamable HTTP transports hand fetch one transport-long AbortSignal on every
 * 2025-era POST; undici's Request hangs an abort listener on it that only its finalizer removes,
 * so listeners pile up between collections (and copies of the growing list are made per request,
 * past 1,500 a MaxListenersExceededWarning). `perRequestSignal` gives each fetch its own signal
 * that follows the transport's, on both sides alike.
 *
 * Each side also runs in `--mode observe` on SQLite, for each agent revision (every call
 * forwarded, no gate writes): what the MCP hop itself costs, apart from the gate's durable path
 * (observe 2026-07-28 against enforce 2026-07-28: the durable path of the target row alone). The HTTP side has a floor
 * row too, `relay`: a bare node:http relay in its own process (this file with `--relay URL`)
 * that forwards every request and streams every answer with undici, no MCP code at all, which
 * no HTTP proxy's hop can undercut; the gate's durable path comes on top of it.
 *
 * Run: npm run bench -- gateway [--calls N] [--warmup N] [--side stdio|http] [--store sqlite|postgres] [--revision 2025-11-25|2026-07-28] [--mode enforce|observe|relay]
 * Profile the proxy: VRP_BENCH_CPU_PROF=DIR writes a V8 CPU profile of each proxy process (and of the relay) into DIR
 * (`node --cpu-prof`, sampled every VRP_BENCH_CPU_PROF_INTERVAL µs, default 1000; open it in Chrome DevTools or read its `.cpuprofile` JSON).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Agent, type Dispatcher, request } from 'undici';
import { cpuSeconds, numberFlag, printTable } from './lib.js';

const CALLS = numberFlag('calls', 1500);
/**
 * Calls each side gets before the measured ones. A gateway runs for days: the bench measures its
 * steady state. With 150 the proxy was still warming (its CPU per call kept falling over the next
 * thousands of calls while V8 optimised the call path), so the figures partly measured a process
 * that had just started.
 */
const WARMUP = numberFlag('warmup', 1000);
const MAX_MS_PER_SCENARIO = 20_000;
const PG_URL = process.env.VRPKIT_TEST_PG_URL;
const root = fileURLToPath(new URL('../', import.meta.url));
const everything = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const PROF_DIR = process.env.VRP_BENCH_CPU_PROF;
/** Node's flags for a proxy process (the relay's too): a CPU profile into VRP_BENCH_CPU_PROF when set. */
const profFlags = PROF_DIR
  ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`, `--cpu-prof-interval=${process.env.VRP_BENCH_CPU_PROF_INTERVAL ?? 1000}`]
  : [];
const vrp = [
  process.execPath,
  ...profFlags,
  '--import',
  'tsx',
  '--conditions=vrpkit-source',
  join(root, 'packages/cli/src/bin.ts'),
] as const;
/** `--NAME value`, one of `allowed`, or every one of them when absent (exit 64 on another value). */
function choiceFlag<T extends string>(name: string, allowed: readonly T[]): readonly T[] {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return allowed;
  const v = process.argv[i + 1] as T;
  if (!allowed.includes(v)) {
    process.stderr.write(`error[usage]: --${name} takes one of ${allowed.join(', ')}\n`);
    process.exit(64);
  }
  return [v];
}
/**
 * `--relay URL`: the HTTP floor's relay. Every request goes to URL's origin (same path, the
 * headers but the hop-by-hop ones) on keep-alive connections, and its answer streams back as it comes.
 */
async function relay(upstream: string): Promise<void> {
  const dispatcher = new Agent();
  const origin = new URL(upstream).origin;
  const HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding']);
  const server = createHttpServer(async (req, res) => {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    try {
      const answer = await request(`${origin}${req.url}`, {
        dispatcher,
        method: req.method as Dispatcher.HttpMethod,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
      });
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(answer.statusCode, out);
      answer.body.pipe(res);
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
}
// `--help` prints the run line and exits: without it the flag was ignored and the whole bench ran (minutes of a shared machine).
if (process.argv.includes('--help')) {
  process.stdout.write(
    'npm run bench -- gateway [--calls N] [--warmup N] [--side stdio|http] [--store sqlite|postgres] [--revision 2025-11-25|2026-07-28] [--mode enforce|observe|relay]\n' +
      'VRP_BENCH_CPU_PROF=DIR: a V8 CPU profile of each proxy process in DIR (VRP_BENCH_CPU_PROF_INTERVAL µs, default 1000)\n',
  );
  process.exit(0);
}
if (process.argv.includes('--relay')) {
  await relay(process.argv[process.argv.indexOf('--relay') + 1]!);
  // Serves until the bench stops it; an orderly exit, so `--cpu-prof` writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  await new Promise(() => {});
}

const SIDES = choiceFlag('side', ['stdio', 'http'] as const);
const REVISIONS = choiceFlag('revision', ['2025-11-25', '2026-07-28'] as const);
type Revision = (typeof REVISIONS)[number];
const STORES = choiceFlag('store', ['sqlite', 'postgres'] as const);
/** `--mode`: only the rows of that mode (A/B work on one row, without the others' minute); every mode when absent. */
const MODES = choiceFlag('mode', ['enforce', 'observe', 'relay'] as const);

const dir = mkdtempSync(join(tmpdir(), 'vrp-bench-gateway-'));
const policy = join(dir, 'policy.json');
// echo stands in for a tool with an effect: a state change in a hot envelope takes the full
// durable path, and its act id is the arguments' digest, so each call is a new act.
writeFileSync(
  policy,
  JSON.stringify({
    version: 1,
    policy_id: 'bench-gateway',
    informative_defaults: false,
    tools: [{ tool: 'echo', consequence_class: 'PERSISTENT_STATE_CHANGE' }],
    hot_envelopes: [{ name: 'echo', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['echo'] }],
    provenance_rules: [],
  }),
);

/** What the bench calls on either SDK's client. */
interface BenchClient {
  listTools(): Promise<unknown>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<{ isError?: boolean; content: unknown }>;
  close(): Promise<void>;
}

const children: ChildProcess[] = [];
const clients: BenchClient[] = [];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * The first stderr line matching `pattern`. Then the rest of stderr is drained unread: the proxy
 * logs a line per call, and keeping and re-splitting it all would cost this process time that
 * grows with every call, in the middle of the calls it measures.
 */
function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d;
      const line = buf.split('\n').find((l) => pattern.test(l));
      if (!line) return;
      child.stderr!.off('data', onData);
      child.stderr!.resume();
      resolve(line);
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited (${code}) before ready: ${buf.slice(-2000)}`)));
  });
}

/**
 * The fetch of every bench HTTP transport: a signal of its own per request (`AbortSignal.any`
 * holds its sources weakly, no listener on them), so no listener is left on the transport's
 * long-lived signal (see the module comment); closing the transport still aborts the request.
 */
const perRequestSignal = (url: string | URL, init?: RequestInit) =>
  fetch(url, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init);

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<BenchClient> {
  const client = new Client({ name: 'bench-agent', version: '1.0.0' });
  await client.connect(transport, { timeout: 120_000 });
  clients.push(client as BenchClient);
  return client as BenchClient;
}

/**
 * An SDK v2 client, both sides of a 2026 row: pinned to 2026-07-28 through the proxy, on the
 * default legacy negotiation (2025-11-25) straight to the downstream.
 */
async function connectModern(transport: ModernStdioTransport | ModernHttpTransport, pinned: boolean): Promise<BenchClient> {
  const client = new ModernClient(
    { name: 'bench-agent', version: '1.0.0' },
    pinned ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(transport, { timeout: 120_000 });
  clients.push(client as BenchClient);
  return client as BenchClient;
}

function storeArgs(store: 'sqlite' | 'postgres', schema: string): string[] {
  return store === 'sqlite' ? ['--store', join(dir, `${schema}.db`)] : ['--store', PG_URL!, '--schema', schema];
}

/** The two clients of a scenario: straight to the server, and through the proxy. */
async function pair(
  side: 'stdio' | 'http',
  store: 'sqlite' | 'postgres',
  schema: string,
  mode: Mode,
  revision: Revision,
): Promise<{ direct: BenchClient; proxied: BenchClient; proxyPid: number }> {
  const proxyArgs = [
    'gate',
    'proxy',
    '--mode',
    mode,
    '--policy',
    policy,
    ...storeArgs(store, schema),
    '--name',
    'bench',
    '--pin-on-first-use',
  ];
  const modern = revision === '2026-07-28';
  if (side === 'stdio') {
    const server = { command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' as const };
    const direct = modern ? await connectModern(new ModernStdioTransport(server), false) : await connect(new StdioClientTransport(server));
    const params = {
      command: vrp[0],
      args: [...vrp.slice(1), ...proxyArgs, '--', process.execPath, everything, 'stdio'],
      stderr: 'ignore' as const,
    };
    if (modern) {
      // A subclass: the SDK would probe the exact base class on a second proxy process.
      const transport = new (class extends ModernStdioTransport {})(params);
      return { direct, proxied: await connectModern(transport, true), proxyPid: transport.pid! };
    }
    const transport = new StdioClientTransport(params);
    const proxied = await connect(transport);
    return { direct, proxied, proxyPid: transport.pid! };
  }
  const port = await freePort();
  const server = spawn(process.execPath, [everything, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(server);
  await waitForLine(server, /listening on port/);
  const upstream = `http://127.0.0.1:${port}/mcp`;
  if (mode === 'relay') {
    const relayChild = spawn(process.execPath, [...profFlags, '--import', 'tsx', fileURLToPath(import.meta.url), '--relay', upstream], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(relayChild);
    const hello = await new Promise<string>((resolve, reject) => {
      relayChild.stdout!.once('data', (d) => resolve(String(d)));
      relayChild.once('exit', (code) => reject(new Error(`relay exited (${code}) before ready`)));
    });
    const direct = await connect(new StreamableHTTPClientTransport(new URL(upstream), { fetch: perRequestSignal }));
    const proxied = await connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${JSON.parse(hello).port}/mcp`), { fetch: perRequestSignal }),
    );
    return { direct, proxied, proxyPid: relayChild.pid! };
  }
  const proxy = spawn(
    vrp[0],
    [...vrp.slice(1), ...proxyArgs, '--listen', '127.0.0.1:0', '--upstream', upstream, '--insecure-http-upstream'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.push(proxy);
  const { url, token } = JSON.parse(await waitForLine(proxy, /"event":"listening"/)) as { url: string; token: string };
  const requestInit = { headers: { authorization: `Bearer ${token}` } };
  if (modern) {
    return {
      direct: await connectModern(new ModernHttpTransport(new URL(upstream), { fetch: perRequestSignal }), false),
      proxied: await connectModern(new ModernHttpTransport(new URL(url), { requestInit, fetch: perRequestSignal }), true),
      proxyPid: proxy.pid!,
    };
  }
  const direct = await connect(new StreamableHTTPClientTransport(new URL(upstream), { fetch: perRequestSignal }));
  const proxied = await connect(new StreamableHTTPClientTransport(new URL(url), { requestInit, fetch: perRequestSignal }));
  return { direct, proxied, proxyPid: proxy.pid! };
}

/** `relay`: the HTTP side's floor, a bare relay instead of the proxy (see the module comment). */
type Mode = 'enforce' | 'observe' | 'relay';

interface Stats {
  n: number;
  p50: number;
  p99: number;
}

function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { n: s.length, p50: at(0.5), p99: at(0.99) };
}

async function scenario(
  side: 'stdio' | 'http',
  store: 'sqlite' | 'postgres',
  schema: string,
  mode: Mode = 'enforce',
  revision: Revision = '2025-11-25',
) {
  const { direct, proxied, proxyPid } = await pair(side, store, schema, mode, revision);
  await proxied.listTools(); // the first list pins (bench only: --pin-on-first-use)
  const call = async (c: BenchClient, i: number, tag: string) => {
    const t = performance.now();
    const r = await c.callTool({ name: 'echo', arguments: { message: `${tag}-${i}` } });
    const ms = performance.now() - t;
    if (r.isError) throw new Error(`${tag} call ${i} failed: ${JSON.stringify(r.content)}`);
    return ms;
  };
  for (let i = 0; i < WARMUP; i++) {
    await call(direct, i, 'warm-direct');
    await call(proxied, i, 'warm-proxied');
  }
  const d: number[] = [];
  const p: number[] = [];
  const cpuBefore = cpuSeconds([proxyPid]);
  const end = performance.now() + MAX_MS_PER_SCENARIO;
  for (let i = 0; i < CALLS && performance.now() < end; i++) {
    // Alternate which goes first, so neither always follows the other's garbage.
    if (i % 2) {
      d.push(await call(direct, i, 'direct'));
      p.push(await call(proxied, i, 'proxied'));
    } else {
      p.push(await call(proxied, i, 'proxied'));
      d.push(await call(direct, i, 'direct'));
    }
  }
  const cpuAfter = cpuSeconds([proxyPid]);
  // CPU the proxy process spent per call: what its code costs, whatever the neighbours' load does to latency.
  const proxy_cpu_ms_per_call = cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1000) / p.length;
  const ds = stats(d);
  const ps = stats(p);
  process.stderr.write(`bench/gateway: ${side} ${store} ${mode} ${revision} done (${ps.n} calls)\n`);
  return {
    side,
    store,
    mode,
    revision,
    direct: ds,
    proxied: ps,
    added_p50_ms: ps.p50 - ds.p50,
    added_p99_ms: ps.p99 - ds.p99,
    proxy_cpu_ms_per_call,
  };
}

async function closeAll(): Promise<void> {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const c of children.splice(0)) c.kill();
}

/**
 * The disk floor of the SQLite scenarios: one committed single-row UPDATE on a file in the same
 * directory with the store's settings (WAL, synchronous=FULL). An allowed act commits several
 * times (authority issued, consumed, INVOKED, EFFECTUATED), so on a slow disk this, not the
 * proxy's code, is most of what it adds.
 */
function sqliteCommitFloor(): Stats {
  const db = new Database(join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
  db.prepare('INSERT INTO t VALUES (1, 0)').run();
  const update = db.prepare('UPDATE t SET n = n + 1 WHERE id = 1');
  const samples: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    update.run();
    samples.push(performance.now() - t);
  }
  db.close();
  return stats(samples.slice(50));
}

const results: Awaited<ReturnType<typeof scenario>>[] = [];
let floor: Stats | undefined;
const pgSchemas: string[] = [];
try {
  floor = sqliteCommitFloor();
  for (const side of SIDES) {
    if (STORES.includes('sqlite')) {
      if (side === 'http' && MODES.includes('relay')) {
        results.push(await scenario(side, 'sqlite', 'bench-http-relay', 'relay'));
        await closeAll();
      }
      for (const revision of MODES.includes('observe') ? REVISIONS : []) {
        results.push(await scenario(side, 'sqlite', `bench-${side}-observe-${revision}`, 'observe', revision));
        await closeAll();
      }
      for (const revision of MODES.includes('enforce') ? REVISIONS : []) {
        results.push(await scenario(side, 'sqlite', `bench-${side}-${revision}`, 'enforce', revision));
        await closeAll();
      }
    }
    if (PG_URL && STORES.includes('postgres') && MODES.includes('enforce')) {
      for (const revision of REVISIONS) {
        const schema = `bench_gateway_${side}_${revision.replaceAll('-', '_')}_${process.pid}`;
        pgSchemas.push(schema);
        results.push(await scenario(side, 'postgres', schema, 'enforce', revision));
        await closeAll();
      }
    }
  }
  if (!PG_URL) process.stdout.write('PostgreSQL: skipped (set VRPKIT_TEST_PG_URL)\n');
} finally {
  await closeAll();
  if (PG_URL && pgSchemas.length) {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    for (const s of pgSchemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await c.end();
  }
  rmSync(dir, { recursive: true, force: true });
}

const f = (ms: number) => ms.toFixed(2);
printTable([
  [
    'side',
    'store',
    'mode',
    'agent revision',
    'calls',
    'direct p50',
    'proxied p50',
    'added p50',
    'direct p99',
    'proxied p99',
    'added p99',
    'proxy CPU/call',
    'target (SQLite)',
  ],
  ...results.map((r) => [
    r.side,
    r.mode === 'relay' ? '-' : r.store,
    r.mode,
    r.revision,
    String(r.proxied.n),
    f(r.direct.p50),
    f(r.proxied.p50),
    f(r.added_p50_ms),
    f(r.direct.p99),
    f(r.proxied.p99),
    f(r.added_p99_ms),
    r.proxy_cpu_ms_per_call === null ? 'n/a' : f(r.proxy_cpu_ms_per_call),
    r.store === 'sqlite' && r.mode === 'enforce'
      ? r.added_p50_ms <= 1.5 && r.added_p99_ms <= 4
        ? 'met'
        : 'MISSED (p50 ≤ 1.5, p99 ≤ 4)'
      : '',
  ]),
]);
process.stdout.write(
  '(ms per tools/call round trip; added = proxied − direct, same downstream, interleaved in the same run; observe: the MCP hop alone)\n',
);
if (floor) process.stdout.write(`SQLite commit on this disk (WAL, synchronous=FULL): p50 ${f(floor.p50)} ms, p99 ${f(floor.p99)} ms\n`);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('./results/gateway.json', import.meta.url),
  `${JSON.stringify({ benchmark: 'gateway', node: process.version, at: new Date().toISOString(), results, sqlite_commit_floor: floor }, null, 2)}\n`,
);
