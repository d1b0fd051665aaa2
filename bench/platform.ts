/**
 * bench/platform: platform mode against the single-domain node, in the same run, over https on
 * loopback at concurrency 32.
 *
 * Rows:
 * - node: one `serveNode` (dev TLS), every request for its one domain (the baseline);
 * - node over 1,000 kept-alive connections (1,000 agents, one connection each): the baseline with
 *   as many connections as the rows over 1,000 names hold (what 1,000 connections cost the server
 *   and the load client on these 2 CPUs, apart from what 1,000 tenants cost); those rows give
 *   their ratio to it (`…_1000_conn`) beside the ratio to the node. Both nodes keep idle
 *   connections 65 s, as the platform does;
 * - platform, 10 tenants: `servePlatform` over an SQLite database holding 10 tenants, requests
 *   spread uniformly over them;
 * - platform, 10,000 tenants: the same over 10,000 tenants, requests spread uniformly over 1,000
 *   of them (each tenant its own TLS name, so its own connection);
 * - the same 10,000 tenants in PostgreSQL, with the single-domain node on the same PostgreSQL as its
 *   baseline (VRPKIT_TEST_PG_URL; skipped when unset).
 * - first visits (with VRPKIT_TEST_PG_URL): the SQLite node answering 1,000 fresh offers, each on a
 *   new TLS connection with a full handshake (a first connection; the same with resumed sessions
 *   is reported beside it), 16 at a time, against platforms on PostgreSQL serving 1,000 tenants they
 *   have not served yet alike (one with a wildcard certificate, one issuing a certificate per
 *   name), in interleaved rounds; with `--only first-visit` these rows alone, plus the
 *   invalidation window (a disable/enable committed in SQL until each of two serving processes
 *   honours it).
 * Every request is a fresh stay (the signed-offer cache off on both sides), so each is read,
 * priced and signed. The client keeps its connections alive and, with more names than concurrent
 * clients, one connection per name (as an agent keeps one per origin). Reported: req/s and p99 as
 * ratios to the node, the server process's CPU time per request (user + system, from /proc: on a
 * loaded machine the steadier figure) and the new TLS connections per request (a name revisited
 * after the server's keep-alive closed its connection pays a handshake); the platform process's
 * RSS, heap and external memory after a full GC, after serving 10 distinct tenants and after
 * 1,000 (memory per tenant served; the connection churn's allocator high-water mark reached first
 * and reported apart, see `tenantGrowth`), with the offer cache off and again with it on (its fill
 * reported apart, so it is not counted as tenant growth), with a certificate per name at the
 * default TLS context bound and with one context kept per name, and the server CPU per handshake
 * when the 1,000 names come back on new connections (a context past the bound is rebuilt then);
 * the RSS each idle kept-alive connection holds, and the server's RSS with the load client's
 * connections (one per name) open; startup time (spawn to listening) with 10 and with 10,000 tenants in the database (lazy
 * loading: it should not grow with the count). Targets: throughput with 10,000 tenants ≥ 0.8× the
 * node; RSS growth ≤ 40 MB per 1,000 tenants served.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/platform.ts [--seconds 5] [--rounds 5] [--only steady-state | --only first-visit]
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  createDevCa,
  DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
  initNode,
  issueServerCertificate,
  type PemKeyPair,
  SERVER_LIMITS,
  sampleProperty,
  serveNode,
} from '@vrpkit/node';
import { DEFAULT_PLATFORM_KEEP_ALIVE_MS, generateMasterKeyText, PlatformStore, parseMasterKey, servePlatform } from '@vrpkit/platform';
import pg from 'pg';
import { cpuSeconds, numberFlag, printTable, startChild } from './lib.js';

const NODE_DOMAIN = 'bench-node.example';
/** PostgreSQL for the row served from it (skipped when unset). */
const PG_URL = process.env.VRPKIT_TEST_PG_URL;
const PG_SCHEMA = `bench_platform_${process.pid}`;
/** The single-domain node's own schema when it is the PostgreSQL row's baseline. */
const PG_NODE_SCHEMA = `bench_platform_node_${process.pid}`;
const pgUrl = (schema: string) => `${PG_URL}${PG_URL?.includes('?') ? '&' : '?'}schema=${schema}`;
const CONCURRENCY = 32;
const SPREAD = 1000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** Tenant names under one parent, so one wildcard certificate (`_wildcard.tenants.example`) can cover them all. */
const WILDCARD_PARENT = 'tenants.example';
const tenantName = (i: number) => `bench-${i}.${WILDCARD_PARENT}`;

/**
 * Child modes: serve and print `{port, ca, pid, stats}` as the first stdout line. `stats` is a
 * loopback http port answering the process's memory after a full GC, the TLS contexts held and
 * the shared offer cache's bytes, so tenant growth and cache fill are told apart.
 */
type ChildOptions = { offerCacheSeconds: number; tlsDir?: string; tlsContextCacheSize?: number; databaseUrl?: string };
let errorsShown = 0;
async function child(mode: string, dir: string, o: ChildOptions): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Exit normally when stopped, so a CPU profile (VRP_BENCH_CPU_PROF) is written.
  process.once('SIGTERM', () => process.exit(0));
  let stats = async (): Promise<Record<string, number>> => ({});
  const statsServer = createHttpServer(async (_req, res) => {
    gc();
    const m = process.memoryUsage();
    res.end(JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, external: m.external, ...(await stats()) }));
  }).listen(0, '127.0.0.1');
  await once(statsServer, 'listening');
  const statsPort = (statsServer.address() as AddressInfo).port;
  if (mode === '--serve-node') {
    // The platform's keep-alive (65 s) for the node too: its connections idle between their row's slices as the
    // platform rows' do, so neither baseline pays handshakes the platform rows do not (the node's own default is 5 s).
    (SERVER_LIMITS as { keepAliveTimeout: number }).keepAliveTimeout = DEFAULT_PLATFORM_KEEP_ALIVE_MS;
    const node = await serveNode({
      dataDir: dir,
      dev: true,
      offerCacheMaxAgeSeconds: 0,
      ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
      // As the platform's: the same-connections baseline holds 1,000 connections from the one load client.
      maxConnectionsPerClient: 4 * SPREAD,
    });
    process.stdout.write(`${JSON.stringify({ port: node.port, ca: node.caPem, pid: process.pid, stats: statsPort })}\n`);
    return;
  }
  // Statements this process sends to PostgreSQL (the listener's confirmation round trips and LISTEN left out): per first visit, its round trips.
  let pgStatements = 0;
  const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    const text = typeof a[0] === 'string' ? a[0] : '';
    if (text !== 'SELECT 1' && !text.startsWith('LISTEN')) pgStatements++;
    return query.apply(this, a);
  } as typeof pg.Client.prototype.query;
  const store = await PlatformStore.open(o.databaseUrl ?? `sqlite:${join(dir, 'platform.sqlite')}`);
  const served = await servePlatform({
    store,
    masterKeys: [parseMasterKey(readFileSync(join(dir, 'master.key'), 'utf8'))],
    tls: o.tlsDir ? { kind: 'dir', dir: o.tlsDir } : { kind: 'dev', dir: join(dir, 'dev') },
    offerCacheMaxAgeSeconds: o.offerCacheSeconds,
    ...(o.tlsContextCacheSize ? { tlsContextCacheSize: o.tlsContextCacheSize } : {}),
    // The load generator is one client address holding a connection per tenant name.
    maxConnectionsPerClient: 4 * SPREAD,
    // A failed request fails the bench; its first few causes go to stderr.
    onError: (e) => {
      if (errorsShown++ < 3) process.stderr.write(`platform child: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    },
  });
  stats = async () => ({
    tlsContexts: served.tlsContexts(),
    tlsContextsCreated: served.tlsContextsCreated(),
    offerCacheBytes: served.offerCacheBytes(),
    loadedTenants: served.loadedTenants(),
    connections: await served.openConnections(),
    pgStatements,
  });
  process.stdout.write(`${JSON.stringify({ port: served.port, ca: served.caPem, pid: process.pid, stats: statsPort })}\n`);
}

type Stats = {
  rss: number;
  heapUsed: number;
  external: number;
  tlsContexts?: number;
  tlsContextsCreated?: number;
  offerCacheBytes?: number;
  connections?: number;
  pgStatements?: number;
};
async function stats(port: number): Promise<Stats> {
  const res = await fetch(`http://127.0.0.1:${port}/`);
  return (await res.json()) as Stats;
}

/** A platform database of `tenants` tenants (SQLite in `dir`, or at `url`), its master key in `dir`. */
async function platformDb(dir: string, tenants: number, url = `sqlite:${join(dir, 'platform.sqlite')}`): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const keyText = generateMasterKeyText();
  writeFileSync(join(dir, 'master.key'), keyText, { mode: 0o600 });
  const master = parseMasterKey(keyText);
  const store = await PlatformStore.open(url);
  await store.init(master, null);
  const property = sampleProperty(Date.now());
  for (let i = 0; i < tenants; i += 1000) {
    const chunk = Array.from({ length: Math.min(1000, tenants - i) }, (_, j) => ({ domain: tenantName(i + j), property }));
    await store.addTenants(master, chunk);
  }
  await store.close();
}

const MB = 1024 * 1024;

let stay = 0;
function offerPath(): string {
  const d = Date.now() + (20 + (stay++ % 200)) * DAY;
  return `/api/verified-stay-offer?check_in=${iso(d)}&check_out=${iso(d + 3 * DAY)}&guests=2`;
}

/** Connections `get` has seen, and how many it opened (each a TLS handshake). A request queued for a busy socket is not new. */
const seenSockets = new WeakSet<object>();
let freshConnections = 0;
/** Of those, the handshakes that resumed a TLS session the agent kept (an abbreviated handshake: no certificate sent or signed for). */
let resumedConnections = 0;

function get(agent: Agent, port: number, ca: string, domain: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, servername: domain, ca, path, headers: { host: domain }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('socket', (socket) => {
      if (seenSockets.has(socket)) return;
      seenSockets.add(socket);
      freshConnections++;
      socket.once('secureConnect', () => (socket as TLSSocket).isSessionReused() && resumedConnections++);
    });
    // A kept-alive connection the server closed as idle (its keep-alive timeout) while this request was sent on it: resend once.
    req.on('error', (e: NodeJS.ErrnoException) =>
      req.reusedSocket && e.code === 'ECONNRESET' ? get(agent, port, ca, domain, path).then(resolve, reject) : reject(e),
    );
    req.end();
  });
}

/**
 * A load row at concurrency 32: its keep-alive connections opened first (one request per name in
 * `names`), so the measured phase compares serving, not TLS handshakes, on both sides; then
 * measured in slices (`slice`), interleaved with the other rows' slices so that whatever else the
 * machine does at the time weighs on every row alike; `finish` gives requests/s, p99 latency (ms)
 * and the server's CPU per request over all the slices. Any non-200 aborts the run.
 */
async function openLoad({ pid, port, ca, stats: statsPort }: Served, names: string[], connections?: number) {
  // One connection per name once there are more names than concurrent clients (an agent keeps one per origin);
  // with `connections`, that many kept-alive connections to the names (an agent each), spread over as the names are.
  const agents = connections
    ? Array.from({ length: connections }, () => new Agent({ keepAlive: true, maxSockets: 1 }))
    : [new Agent({ keepAlive: true, maxSockets: Math.max(1, Math.floor(CONCURRENCY / names.length)) })];
  const lanes = Math.max(names.length, agents.length);
  const withoutConnections = await stats(statsPort);
  /** One request per lane: every connection opened, or used again (one idle past the keep-alive is opened again). */
  const warm = async () => {
    for (let i = 0; i < lanes; i += CONCURRENCY)
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, lanes - i) }, (_, j) =>
          get(agents[(i + j) % agents.length]!, port, ca, names[(i + j) % names.length]!, offerPath()),
        ),
      );
  };
  await warm();
  const lane = () => Math.floor(Math.random() * lanes);
  const latencies: number[] = [];
  let cpuSecondsUsed = 0;
  let handshakes = 0;
  let measuredSeconds = 0;
  return {
    warm,
    async slice(seconds: number): Promise<void> {
      const cpuBefore = cpuSeconds([pid]) ?? 0;
      const freshBefore = freshConnections;
      const end = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (performance.now() < end) {
            const t = performance.now();
            const l = lane();
            const status = await get(agents[l % agents.length]!, port, ca, names[l % names.length]!, offerPath());
            if (status !== 200) throw new Error(`status ${status}`);
            latencies.push(performance.now() - t);
          }
        }),
      );
      cpuSecondsUsed += (cpuSeconds([pid]) ?? 0) - cpuBefore;
      handshakes += freshConnections - freshBefore;
      measuredSeconds += seconds;
    },
    async finish() {
      // The server's memory before this client opened its connections and with them still open (one per name, kept
      // alive): what a client's connections hold (with their handshakes), apart from the tenants' own memory.
      const withConnections = await stats(statsPort);
      for (const a of agents) a.destroy();
      latencies.sort((a, b) => a - b);
      return {
        rps: latencies.length / measuredSeconds,
        p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
        cpuPerRequestMs: (cpuSecondsUsed * 1000) / latencies.length,
        handshakesPerRequest: handshakes / latencies.length,
        withConnections,
        withoutConnections,
      };
    },
  };
}

/** Touch tenants `from`..`to` once each (their first requests: lazy load, certificate, connection, closed after); `wrap` maps them onto `wrap` tenants. */
async function touch(port: number, ca: string, from: number, to: number, wrap = Number.POSITIVE_INFINITY): Promise<void> {
  const agent = new Agent({ keepAlive: false });
  for (let i = from; i < to; i += CONCURRENCY)
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, to - i) }, (_, j) => get(agent, port, ca, tenantName((i + j) % wrap), offerPath())),
    );
}

/** Concurrency of the first-visit rows: 16 new connections at a time. */
const FIRST_VISIT_CONCURRENCY = 16;
/** Cold tenants per first-visit round. */
const FIRST_VISITS = 1000;

/**
 * `names` each asked one fresh offer on a new TLS connection (closed after), 16 at a time: the
 * first-visit rows. On the platform each name is a tenant not yet served by the process (a cold
 * tenant: its certificate, its rows, its key, its template, its first signature); on the node each
 * is its one domain. `resume`: the client resumes the TLS session it kept for a name (Node's
 * agent does by default: a repeat connection to one name is then an abbreviated handshake, no
 * certificate signed for); without, every connection is a full handshake, as a first connection to
 * a name is. Returns req/s, p50/p99 (ms), the server's CPU per request (ms), the share of
 * handshakes resumed and the PostgreSQL statements the server sent per request.
 */
async function firstVisits(s: Served, names: readonly string[], resume = true) {
  const agent = new Agent({ keepAlive: false, ...(resume ? {} : { maxCachedSessions: 0 }) });
  const latencies: number[] = [];
  const resumedBefore = resumedConnections;
  const statementsBefore = (await stats(s.stats)).pgStatements ?? 0;
  const cpu = cpuSeconds([s.pid]) ?? 0;
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: FIRST_VISIT_CONCURRENCY }, async () => {
      while (next < names.length) {
        const name = names[next++]!;
        const t = performance.now();
        const status = await get(agent, s.port, s.ca, name, offerPath());
        if (status !== 200) throw new Error(`first visit to ${name}: status ${status}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuPerRequestMs = (((cpuSeconds([s.pid]) ?? 0) - cpu) * 1000) / names.length;
  const statements = ((await stats(s.stats)).pgStatements ?? 0) - statementsBefore;
  latencies.sort((a, b) => a - b);
  return {
    rps: names.length / seconds,
    p50: latencies[Math.floor(latencies.length / 2)]!,
    p99: latencies[Math.floor(latencies.length * 0.99)]!,
    cpuPerRequestMs,
    resumedPerRequest: (resumedConnections - resumedBefore) / names.length,
    pgStatementsPerRequest: statements / names.length,
  };
}

/**
 * The first-visit rows, in `rounds` interleaved rounds: the single-domain node on SQLite answering
 * 1,000 fresh offers each on a new connection, then each platform in `platforms` serving 1,000
 * tenants it has not served yet (round k: tenants `from + k·1,000` on), alike. Ratios are per
 * round (the machine's load moves between rounds); reported: the median ratio and the spread.
 *
 * The baseline is the node on *first* connections: every handshake a full one. That is what issue
 * 37 asks a cold tenant to cost ("what a first connection to a single node costs"): a cold
 * tenant's name is new to the client too, so its handshake can never resume a session. The node is
 * also measured as a client that comes back meets it (its repeat connections resume the TLS
 * session the agent kept: no certificate sent or signed for), a reference row with its own ratio
 * (`…_to_node_resumed`): it compares a first visit with a repeat one.
 */
async function firstVisitRows(node: Served, platforms: { row: string; served: Served; from: number }[], rounds: number) {
  const nodeNames = Array.from({ length: FIRST_VISITS }, () => NODE_DOMAIN);
  const runs = platforms.map(() => [] as Awaited<ReturnType<typeof firstVisits>>[]);
  const nodeRuns: Awaited<ReturnType<typeof firstVisits>>[] = [];
  const nodeFullRuns: Awaited<ReturnType<typeof firstVisits>>[] = [];
  for (let round = 0; round < rounds; round++) {
    nodeRuns.push(await firstVisits(node, nodeNames));
    nodeFullRuns.push(await firstVisits(node, nodeNames, false));
    for (const [i, p] of platforms.entries()) {
      const from = p.from + round * FIRST_VISITS;
      runs[i]!.push(
        await firstVisits(
          p.served,
          Array.from({ length: FIRST_VISITS }, (_, j) => tenantName(from + j)),
        ),
      );
    }
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  const r2 = (v: number) => Math.round(v * 100) / 100;
  const row = (name: string, r: typeof nodeRuns) => {
    const ratios = r.map((x, k) => x.rps / nodeFullRuns[k]!.rps);
    return {
      row: name,
      rps: Math.round(median(r.map((x) => x.rps))),
      p50_ms: r2(median(r.map((x) => x.p50))),
      p99_ms: r2(median(r.map((x) => x.p99))),
      rps_ratio_to_node: r2(median(ratios)),
      ratio_spread: `${r2(Math.min(...ratios))}–${r2(Math.max(...ratios))}`,
      server_cpu_ms_per_req: r2(median(r.map((x) => x.cpuPerRequestMs))),
      cpu_ratio_to_node: r2(median(r.map((x, k) => x.cpuPerRequestMs / nodeFullRuns[k]!.cpuPerRequestMs))),
      rps_ratio_to_node_resumed: r2(median(r.map((x, k) => x.rps / nodeRuns[k]!.rps))),
      cpu_ratio_to_node_resumed: r2(median(r.map((x, k) => x.cpuPerRequestMs / nodeRuns[k]!.cpuPerRequestMs))),
      tls_resumed_per_req: r2(median(r.map((x) => x.resumedPerRequest))),
      pg_statements_per_req: r2(median(r.map((x) => x.pgStatementsPerRequest))),
    };
  };
  return [
    row('first visit: node on SQLite, first connection each, full handshake (baseline)', nodeFullRuns),
    row('first visit: node on SQLite, repeat connections, TLS session resumed', nodeRuns),
    ...platforms.map((p, i) => row(p.row, runs[i]!)),
  ];
}

type Served = { port: number; ca: string; pid: number; stats: number; startupMs: number };

/**
 * The server after serving its first 10 tenants, then after 1,000 (each tenant's first request on
 * a new connection, closed after). Between the two, `SPREAD` connections to the 10 already served
 * (no new tenant) set the allocator's high-water mark for connection churn first: a closed TLS
 * connection's native memory is freed only when the GC collects its socket, and the allocator
 * keeps what it held at the peak. So `at1000 - churned` is what the 990 tenants added, and
 * `churned - at10` (reported apart) what opening and closing 1,000 connections left in RSS.
 */
async function tenantGrowth(s: Served) {
  await touch(s.port, s.ca, 0, 10);
  const at10 = await stats(s.stats);
  await touch(s.port, s.ca, 0, SPREAD, 10);
  const churned = await stats(s.stats);
  await touch(s.port, s.ca, 10, SPREAD);
  return { at10, churned, at1000: await stats(s.stats) };
}

/**
 * Tenants `0`..`n` revisited, each on a new connection (every tenant loaded already): the server's
 * CPU per handshake and the TLS contexts it created meanwhile (a name past the context bound
 * rebuilds its context at this handshake).
 */
async function revisit(s: Served, n: number) {
  const before = await stats(s.stats);
  const cpu = cpuSeconds([s.pid]) ?? 0;
  await touch(s.port, s.ca, 0, n);
  const cpuMsPerHandshake = (((cpuSeconds([s.pid]) ?? 0) - cpu) * 1000) / n;
  const after = await stats(s.stats);
  return { cpuMsPerHandshake, contextsCreated: (after.tlsContextsCreated ?? 0) - (before.tlsContextsCreated ?? 0) };
}

/** RSS per idle TLS connection: `n` connections to one tenant name opened and held, then closed. */
async function idleConnectionKb(s: Served, n: number): Promise<number> {
  const name = tenantName(0);
  await touch(s.port, s.ca, 0, 1); // the tenant and its TLS context loaded (again) first
  const before = await stats(s.stats);
  const sockets: TLSSocket[] = [];
  for (let i = 0; i < n; i += CONCURRENCY)
    sockets.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, n - i) }, () => {
          const socket = connect({ host: '127.0.0.1', port: s.port, servername: name, ca: s.ca });
          return once(socket, 'secureConnect').then(() => socket);
        }),
      )),
    );
  const held = await stats(s.stats);
  for (const socket of sockets) socket.destroy();
  return (held.rss - before.rss) / 1024 / n;
}

/**
 * The invalidation window, measured: tenant `domain` disabled and enabled again `n` times straight
 * in SQL (a commit, no wait), while each of `servers` (separate processes, each with its own
 * LISTEN connection) is asked for its JWKS on a kept-alive connection until it answers 421 (then
 * 200). Reported per server: the median and the largest time from just before the commit was sent
 * to the first answer that honours it (an upper bound: it includes the write's and the probe's
 * round trips).
 */
async function invalidationWindow(servers: Served[], domain: string, n: number) {
  const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${PG_SCHEMA}` });
  await c.connect();
  const agents = servers.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const probe = (i: number) => get(agents[i]!, servers[i]!.port, servers[i]!.ca, domain, '/.well-known/jwks.json');
  const waits = servers.map(() => [] as number[]);
  try {
    for (let i = 0; i < servers.length; i++) if ((await probe(i)) !== 200) throw new Error(`${domain} not served`);
    for (let k = 0; k < 2 * n; k++) {
      const [status, expect] = k % 2 === 0 ? ['disabled', 421] : ['active', 200];
      const sent = performance.now();
      await c.query('update platform_tenant set status = $1, revision = revision + 1 where domain = $2', [status, domain]);
      await Promise.all(
        servers.map(async (_, i) => {
          while ((await probe(i)) !== expect) if (performance.now() - sent > 10_000) throw new Error('not honoured within 10 s');
          waits[i]!.push(performance.now() - sent);
        }),
      );
    }
  } finally {
    for (const a of agents) a.destroy();
    await c.end();
  }
  const r1 = (v: number) => Math.round(v * 10) / 10;
  return waits.map((w) => {
    w.sort((a, b) => a - b);
    return { median_ms: r1(w[Math.floor(w.length / 2)]!), max_ms: r1(w[w.length - 1]!), writes: w.length };
  });
}

/** A child server starter: each started child is kept in `children` (killed at the end), with its startup time. */
function starter(children: ChildProcess[]) {
  return async (mode: string, dir: string, o: ChildOptions = { offerCacheSeconds: 0 }): Promise<Served> => {
    const t = performance.now();
    const { child: c, hello } = await startChild(import.meta.url, [mode, dir, JSON.stringify(o)]);
    children.push(c);
    return {
      port: hello.port as number,
      ca: hello.ca as string,
      pid: hello.pid as number,
      stats: hello.stats as number,
      startupMs: performance.now() - t,
    };
  };
}

/** The platform children of the first-visit rows on the PostgreSQL database `dir` describes: one wildcard certificate, and one certificate issued per name (`--dev`). */
async function firstVisitPlatforms(start: ReturnType<typeof starter>, dir: string, tlsCa: PemKeyPair, from: number) {
  const wildcardDir = join(dir, 'first-visit-tls');
  mkdirSync(wildcardDir, { recursive: true });
  const wildcard = await issueServerCertificate(tlsCa, [`*.${WILDCARD_PARENT}`]);
  writeFileSync(join(wildcardDir, `_wildcard.${WILDCARD_PARENT}.pem`), wildcard.certPem);
  writeFileSync(join(wildcardDir, `_wildcard.${WILDCARD_PARENT}.key`), wildcard.keyPem);
  const databaseUrl = pgUrl(PG_SCHEMA);
  const wild = { ...(await start('--serve-platform', dir, { offerCacheSeconds: 0, databaseUrl, tlsDir: wildcardDir })), ca: tlsCa.certPem };
  const perName = await start('--serve-platform', dir, { offerCacheSeconds: 0, databaseUrl });
  return [
    { row: 'first visit: 1,000 cold tenants in PostgreSQL, one wildcard certificate', served: wild, from },
    { row: 'first visit: 1,000 cold tenants in PostgreSQL, a certificate issued per name (--dev)', served: perName, from },
  ];
}

/** `--only first-visit`: the first-visit rows alone (a PostgreSQL database of 1,000 tenants a round), printed and written to results/platform-first-visit.json. */
async function firstVisitOnly(rounds: number): Promise<void> {
  if (!PG_URL) {
    console.log('first-visit rows: skipped (set VRPKIT_TEST_PG_URL)');
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-bench-first-visit-'));
  const children: ChildProcess[] = [];
  const start = starter(children);
  try {
    await initNode({ domain: NODE_DOMAIN, dataDir: join(tmp, 'node') });
    await platformDb(join(tmp, 'pg'), FIRST_VISITS * rounds, pgUrl(PG_SCHEMA));
    const node = await start('--serve-node', join(tmp, 'node'));
    const platforms = await firstVisitPlatforms(start, join(tmp, 'pg'), await createDevCa(), 0);
    const rows = await firstVisitRows(node, platforms, rounds);
    console.log(
      `bench/platform first visits — load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(
          ' ',
        )} — ${FIRST_VISIT_CONCURRENCY} concurrent new TLS connections, ${rounds} rounds of ${FIRST_VISITS}, fresh offers, ${cpus().length} CPUs (shared)`,
    );
    printTable([Object.keys(rows[0]!), ...rows.map((r) => Object.values(r).map(String))]);
    // Two serving processes, each with its own listener: a write's commit to the moment each honours it.
    const window = await invalidationWindow(
      platforms.map((p) => p.served),
      tenantName(0),
      20,
    );
    console.log('invalidation window (commit sent → first answer honouring it), per serving process:', window);
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    writeFileSync(
      new URL('./results/platform-first-visit.json', import.meta.url),
      `${JSON.stringify({ bench: 'platform-first-visit', run_at: new Date().toISOString(), load_average: loadavg(), node: process.version, cpus: cpus().length, concurrency: FIRST_VISIT_CONCURRENCY, rounds, baseline: 'single-domain node on SQLite, first connection each (full TLS handshake), same run', target: { throughput_ratio_min: 0.8 }, rows, invalidation_window_ms: window }, null, 2)}\n`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
    await dropSchemas();
  }
}

/** Drop the bench's PostgreSQL schemas. */
async function dropSchemas(): Promise<void> {
  if (!PG_URL) return;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  for (const schema of [PG_SCHEMA, PG_NODE_SCHEMA]) await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.end();
}

/**
 * The steady-state rows (kept-alive connections, fresh offers): the node, 10 tenants, 1,000 of 10,000 tenants on
 * SQLite and, with VRPKIT_TEST_PG_URL, the node and the 10,000 tenants on PostgreSQL; `--only steady-state` runs these alone.
 */
async function steadyRows(
  start: ReturnType<typeof starter>,
  tmp: string,
  node: Served,
  p10: Served,
  p10k: Served,
  seconds: number,
  rounds: number,
) {
  // The same 10,000 tenants in PostgreSQL (the system of record of a deployment on several machines): its head
  // read per request is a round trip. Its own baseline is the single-domain node on the same PostgreSQL, whose
  // store revision read is a round trip too.
  let pgServed: Served | undefined;
  let pgNode: Served | undefined;
  if (PG_URL) {
    await platformDb(join(tmp, 'pg'), 10_000, pgUrl(PG_SCHEMA));
    pgServed = await start('--serve-platform', join(tmp, 'pg'), { offerCacheSeconds: 0, databaseUrl: pgUrl(PG_SCHEMA) });
    await initNode({ domain: NODE_DOMAIN, dataDir: join(tmp, 'node-pg'), databaseUrl: pgUrl(PG_NODE_SCHEMA) });
    pgNode = await start('--serve-node', join(tmp, 'node-pg'), { offerCacheSeconds: 0, databaseUrl: pgUrl(PG_NODE_SCHEMA) });
  }

  const names = (n: number) => Array.from({ length: n }, (_, i) => tenantName(i));
  // `seconds` per row in `rounds` slices, the order rotated each round (each row leads as often as the others).
  // The PostgreSQL rows' connections are opened first: loading their 1,000 tenants can take longer than the 65 s
  // keep-alive on a loaded machine, and the SQLite rows' connections, opened before, then idled out and handshook
  // again in the measured phase (0.7 new connections per request in one run).
  const pgLoads = pgServed && pgNode ? [await openLoad(pgNode, [NODE_DOMAIN]), await openLoad(pgServed, names(SPREAD))] : [];
  // The node also over as many kept-alive connections as the 1,000 names hold (1,000 agents, one connection each):
  // what 1,000 connections cost the server and the load client alike (a bare https server answering a static body
  // measured 0.70× its throughput and +0.02 ms CPU per request over 1,000 connections against 30), apart from what
  // 1,000 tenants cost; the rows over 1,000 names show their ratio to it beside the acceptance's ratio to the node.
  const loads = [
    await openLoad(node, [NODE_DOMAIN]),
    await openLoad(node, [NODE_DOMAIN], SPREAD),
    await openLoad(p10, names(10)),
    await openLoad(p10k, names(SPREAD)),
    ...pgLoads,
  ];
  // Opening the rows' connections (1,000 handshakes for some, a certificate issued per name for p10k) can outlast the
  // 65 s keep-alive on a loaded machine: each row's connections are used once more just before the measured phase.
  for (const l of loads) await l.warm();
  for (let round = 0; round < rounds; round++)
    for (let k = 0; k < loads.length; k++) await loads[(round + k) % loads.length]!.slice(seconds / rounds);
  const [rNode, rNodeConns, r10, r10k, rPgNode, rPg] = [
    await loads[0]!.finish(),
    await loads[1]!.finish(),
    await loads[2]!.finish(),
    await loads[3]!.finish(),
    await loads[4]?.finish(),
    await loads[5]?.finish(),
  ];
  const rows = [];
  for (const [name, r] of [
    ['node (baseline)', rNode],
    ['node, 1,000 kept-alive connections (same-connections baseline)', rNodeConns],
    ['platform, 10 tenants', r10],
    ['platform, 10,000 tenants (1,000 served)', r10k],
    ...(rPgNode && rPg
      ? ([
          ['node in PostgreSQL', rPgNode],
          ['platform, 10,000 tenants in PostgreSQL (1,000 served)', rPg],
        ] as const)
      : []),
  ] as const) {
    rows.push({
      row: name,
      rps: Math.round(r.rps),
      p99_ms: Math.round(r.p99 * 10) / 10,
      rps_ratio_to_node: Math.round((r.rps / rNode.rps) * 100) / 100,
      p99_ratio_to_node: Math.round((r.p99 / rNode.p99) * 100) / 100,
      server_cpu_ms_per_req: Math.round(r.cpuPerRequestMs * 1000) / 1000,
      cpu_ratio_to_node: Math.round((r.cpuPerRequestMs / rNode.cpuPerRequestMs) * 100) / 100,
      new_tls_conn_per_req: Math.round(r.handshakesPerRequest * 1000) / 1000,
      rps_ratio_to_node_1000_conn: Math.round((r.rps / rNodeConns.rps) * 100) / 100,
      cpu_ratio_to_node_1000_conn: Math.round((r.cpuPerRequestMs / rNodeConns.cpuPerRequestMs) * 100) / 100,
    });
  }
  return { rows, r10k, pgServed, rPgNode, rPg };
}

async function main(steadyOnly: boolean) {
  const seconds = numberFlag('seconds', 5);
  const rounds = numberFlag('rounds', 5);
  const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-bench-platform-'));
  const children: ChildProcess[] = [];
  const start = starter(children);
  try {
    await initNode({ domain: NODE_DOMAIN, dataDir: join(tmp, 'node') });
    await platformDb(join(tmp, 'p10'), 10);
    const seedStart = performance.now();
    await platformDb(join(tmp, 'p10k'), 10_000);
    const seedSeconds = (performance.now() - seedStart) / 1000;

    const node = await start('--serve-node', join(tmp, 'node'));
    const p10 = await start('--serve-platform', join(tmp, 'p10'));
    const p10k = await start('--serve-platform', join(tmp, 'p10k'));
    if (steadyOnly) {
      const rows = await steadyRows(start, tmp, node, p10, p10k, seconds, rounds);
      console.log(
        `bench/platform steady state — load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} — ${CONCURRENCY} concurrent, ${seconds}s per row in ${rounds} interleaved slices, ${cpus().length} CPUs (shared)`,
      );
      printTable([Object.keys(rows.rows[0]!), ...rows.rows.map((r) => Object.values(r).map(String))]);
      return;
    }

    // Memory per tenant served (offer cache off: every byte is tenant state, TLS or allocator): after 10 distinct tenants, then after 1,000;
    // then the 1,000 revisited on new connections (what a context rebuilt past the context bound costs a handshake).
    // Each TLS setup also with the context bound at the tenant cache's size (1,000: every name keeps its context) for comparison.
    const { at10: m10, churned: mChurned, at1000: m1000 } = await tenantGrowth(p10k);
    const devRevisit = await revisit(p10k, SPREAD);
    const devAllContexts = await (async () => {
      const s = await start('--serve-platform', join(tmp, 'p10k'), { offerCacheSeconds: 0, tlsContextCacheSize: SPREAD });
      const growth = await tenantGrowth(s);
      const again = await revisit(s, SPREAD);
      children.pop()?.kill('SIGTERM');
      return { ...growth, again };
    })();
    // Again from certificate files (`--tls-dir`, no issuing in the server): one per name, then one wildcard for every
    // name (one TLS context), each with the offer cache off; then the wildcard with the shared offer cache on (its
    // default max-age), whose fill is reported apart from the tenants'. First, the RSS an idle TLS connection holds.
    const tlsCa = await createDevCa();
    const perNameDir = join(tmp, 'per-name-tls');
    const wildcardDir = join(tmp, 'wildcard-tls');
    mkdirSync(perNameDir);
    mkdirSync(wildcardDir);
    for (let i = 0; i < SPREAD; i++) {
      const pair = await issueServerCertificate(tlsCa, [tenantName(i)]);
      writeFileSync(join(perNameDir, `${tenantName(i)}.pem`), pair.certPem);
      writeFileSync(join(perNameDir, `${tenantName(i)}.key`), pair.keyPem);
    }
    const wildcard = await issueServerCertificate(tlsCa, [`*.${WILDCARD_PARENT}`]);
    writeFileSync(join(wildcardDir, `_wildcard.${WILDCARD_PARENT}.pem`), wildcard.certPem);
    writeFileSync(join(wildcardDir, `_wildcard.${WILDCARD_PARENT}.key`), wildcard.keyPem);
    const fromFiles = async (o: ChildOptions, measureIdle = false) => {
      const s = { ...(await start('--serve-platform', join(tmp, 'p10k'), o)), ca: tlsCa.certPem };
      const growth = await tenantGrowth(s);
      const again = await revisit(s, SPREAD);
      const idleKb = measureIdle ? await idleConnectionKb(s, SPREAD) : 0;
      children.pop()?.kill('SIGTERM'); // done: its CPU stays out of the rows below
      return { ...growth, again, idleKb };
    };
    const perName = await fromFiles({ offerCacheSeconds: 0, tlsDir: perNameDir });
    const perNameAllContexts = await fromFiles({ offerCacheSeconds: 0, tlsDir: perNameDir, tlsContextCacheSize: SPREAD });
    const wild = await fromFiles({ offerCacheSeconds: 0, tlsDir: wildcardDir }, true);
    const wildCache = await fromFiles({ offerCacheSeconds: DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS, tlsDir: wildcardDir });

    const { rows, r10k, pgServed, rPgNode, rPg } = await steadyRows(start, tmp, node, p10, p10k, seconds, rounds);
    // First visits (PostgreSQL): tenants from 1,000 on, none served yet by the processes measuring them.
    const firstVisit = pgServed ? await firstVisitRows(node, await firstVisitPlatforms(start, join(tmp, 'pg'), tlsCa, SPREAD), rounds) : [];
    const per1000 = (a: number, b: number) => Math.round((((b - a) / MB) * 1000 * 10) / (SPREAD - 10)) / 10;
    const ms = (v: number) => Math.round(v * 100) / 100;
    const memory = {
      rss_after_10_tenants_mb: Math.round(m10.rss / MB),
      rss_after_1000_tenants_mb: Math.round(m1000.rss / MB),
      rss_growth_per_1000_tenants_mb: per1000(mChurned.rss, m1000.rss),
      // The same from the first 10 tenants, the connection churn's high-water mark included (not tenant memory, not hidden).
      rss_growth_with_churn_per_1000_tenants_mb: per1000(m10.rss, m1000.rss),
      heap_growth_per_1000_tenants_mb: per1000(mChurned.heapUsed, m1000.heapUsed),
      external_growth_per_1000_tenants_mb: per1000(mChurned.external, m1000.external),
      tls_contexts_held: m1000.tlsContexts,
      open_connections_when_measured: m1000.connections,
      connection_churn_rss_mb_per_1000_connections: Math.round(((mChurned.rss - m10.rss) / MB) * 10) / 10,
      files_per_name_connection_churn_rss_mb_per_1000_connections: Math.round(((perName.churned.rss - perName.at10.rss) / MB) * 10) / 10,
      files_wildcard_connection_churn_rss_mb_per_1000_connections: Math.round(((wild.churned.rss - wild.at10.rss) / MB) * 10) / 10,
      revisit_cpu_ms_per_handshake: ms(devRevisit.cpuMsPerHandshake),
      revisit_tls_contexts_created: devRevisit.contextsCreated,
      all_contexts_rss_growth_per_1000_tenants_mb: per1000(devAllContexts.churned.rss, devAllContexts.at1000.rss),
      all_contexts_tls_contexts_held: devAllContexts.at1000.tlsContexts,
      all_contexts_revisit_cpu_ms_per_handshake: ms(devAllContexts.again.cpuMsPerHandshake),
      all_contexts_revisit_tls_contexts_created: devAllContexts.again.contextsCreated,
      files_per_name_rss_growth_per_1000_tenants_mb: per1000(perName.churned.rss, perName.at1000.rss),
      files_per_name_rss_growth_with_churn_per_1000_tenants_mb: per1000(perName.at10.rss, perName.at1000.rss),
      files_per_name_tls_contexts_held: perName.at1000.tlsContexts,
      files_per_name_revisit_cpu_ms_per_handshake: ms(perName.again.cpuMsPerHandshake),
      files_per_name_revisit_tls_contexts_created: perName.again.contextsCreated,
      files_per_name_all_contexts_rss_growth_per_1000_tenants_mb: per1000(perNameAllContexts.churned.rss, perNameAllContexts.at1000.rss),
      files_per_name_all_contexts_tls_contexts_held: perNameAllContexts.at1000.tlsContexts,
      files_per_name_all_contexts_revisit_cpu_ms_per_handshake: ms(perNameAllContexts.again.cpuMsPerHandshake),
      files_per_name_all_contexts_revisit_tls_contexts_created: perNameAllContexts.again.contextsCreated,
      files_wildcard_rss_growth_per_1000_tenants_mb: per1000(wild.churned.rss, wild.at1000.rss),
      files_wildcard_rss_growth_with_churn_per_1000_tenants_mb: per1000(wild.at10.rss, wild.at1000.rss),
      files_wildcard_heap_growth_per_1000_tenants_mb: per1000(wild.churned.heapUsed, wild.at1000.heapUsed),
      files_wildcard_tls_contexts_held: wild.at1000.tlsContexts,
      files_wildcard_cache_on_rss_growth_per_1000_tenants_mb: per1000(wildCache.churned.rss, wildCache.at1000.rss),
      files_wildcard_cache_on_offer_cache_growth_per_1000_tenants_mb: per1000(
        wildCache.churned.offerCacheBytes ?? 0,
        wildCache.at1000.offerCacheBytes ?? 0,
      ),
      idle_tls_connection_rss_kb: Math.round(wild.idleKb * 10) / 10,
      // The load row over 1,000 names: the server before the client opened its connections, and with them open (one per
      // name, kept alive after the load): the client's connections, not tenant memory (every tenant was loaded before).
      load_1000_names_open_connections: r10k.withConnections.connections,
      load_1000_names_rss_before_connections_mb: Math.round(r10k.withoutConnections.rss / MB),
      load_1000_names_rss_with_connections_mb: Math.round(r10k.withConnections.rss / MB),
    };
    const startup = {
      startup_ms_10_tenants: Math.round(p10.startupMs),
      startup_ms_10000_tenants: Math.round(p10k.startupMs),
      startup_ratio: Math.round((p10k.startupMs / p10.startupMs) * 100) / 100,
      seed_10000_tenants_s: Math.round(seedSeconds * 10) / 10,
    };
    console.log(
      `bench/platform — load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(
          ' ',
        )} — ${CONCURRENCY} concurrent, ${seconds}s per row in ${rounds} interleaved slices, fresh offers, https loopback, SQLite, ${cpus().length} CPUs (shared)`,
    );
    printTable([Object.keys(rows[0]!), ...rows.map((r) => Object.values(r).map(String))]);
    if (firstVisit.length > 0) printTable([Object.keys(firstVisit[0]!), ...firstVisit.map((r) => Object.values(r).map(String))]);
    console.log(memory);
    console.log(startup);
    const r10kRow = rows.find((r) => r.row === 'platform, 10,000 tenants (1,000 served)')!;
    const tput = r10kRow.rps_ratio_to_node;
    console.log(
      `throughput with 10,000 tenants: ${tput}× the node: ${tput >= 0.8 ? 'meets' : 'MISSES'} the 0.8× target (${r10kRow.rps_ratio_to_node_1000_conn}× the node over as many connections)`,
    );
    console.log(
      `RSS growth per 1,000 tenants served (offer cache off): ${memory.rss_growth_per_1000_tenants_mb} MB with --dev (a certificate issued per name), ${memory.files_per_name_rss_growth_per_1000_tenants_mb} MB with a certificate file per name, ${memory.files_wildcard_rss_growth_per_1000_tenants_mb} MB with one wildcard certificate; target 40 MB (with a TLS context kept per name: ${memory.all_contexts_rss_growth_per_1000_tenants_mb} MB --dev, ${memory.files_per_name_all_contexts_rss_growth_per_1000_tenants_mb} MB files)`,
    );
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    writeFileSync(
      new URL('./results/platform.json', import.meta.url),
      `${JSON.stringify({ bench: 'platform', run_at: new Date().toISOString(), load_average: loadavg(), node: process.version, cpus: cpus().length, concurrency: CONCURRENCY, seconds_per_row: seconds, rounds, baseline: 'single-domain node, same run', target: { throughput_ratio_min: 0.8, rss_growth_per_1000_max_mb: 40 }, rows, first_visit: firstVisit, memory, startup }, null, 2)}\n`,
    );
    if (rPgNode && rPg) {
      const r = Math.round((rPg.rps / rPgNode.rps) * 100) / 100;
      const c = Math.round((rPg.cpuPerRequestMs / rPgNode.cpuPerRequestMs) * 100) / 100;
      console.log(`PostgreSQL: 10,000 tenants ${r}× the node on the same PostgreSQL (server CPU per request ${c}×)`);
    } else console.log('PostgreSQL rows: skipped (set VRPKIT_TEST_PG_URL)');
  } finally {
    for (const c of children) c.kill('SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
    await dropSchemas();
  }
}

const mode = process.argv[2];
if (mode === '--serve-node' || mode === '--serve-platform')
  await child(mode, process.argv[3]!, JSON.parse(process.argv[4]!) as ChildOptions);
else if (process.argv.includes('--only') && process.argv[process.argv.indexOf('--only') + 1] === 'first-visit')
  await firstVisitOnly(numberFlag('rounds', 5));
else await main(process.argv.includes('--only') && process.argv[process.argv.indexOf('--only') + 1] === 'steady-state');
