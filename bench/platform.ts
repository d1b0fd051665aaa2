/**
 * bench/platform: platform mode against the single-domain node, in the same run, over https on
 * loopback at concurrency 32.
 *
 * Rows:
 * - node: one `serveNode` (dev TLS), every request for its one domain (the baseline);
 * - platform, 10 tenants: `servePlatform` over an SQLite database holding 10 tenants, requests
 *   spread uniformly over them;
 * - platform, 10,000 tenants: the same over 10,000 tenants, requests spread uniformly over 1,000
 *   of them (each tenant its own TLS name, so its own connection).
 * Every request is a fresh stay (the signed-offer cache off on both sides), so each is read,
 * priced and signed. Reported: req/s and p99 as ratios to the node, and the server process's CPU
 * time per request (user + system, from /proc: on a loaded machine the steadier figure) and the
 * share of requests that opened a new TLS connection (a name revisited after the server's 5 s
 * keep-alive, as with 1,000 names at low throughput, pays a handshake); the platform process's RSS
 * after serving 10 distinct tenants and after 1,000 (memory per tenant served); startup time
 * (spawn to listening) with 10 and with 10,000 tenants in the database (lazy loading: it should
 * not grow with the count). Targets: throughput with 10,000 tenants ≥ 0.8× the node; RSS growth
 * ≤ 40 MB per 1,000 tenants served.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/platform.ts [--seconds 5]
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { initNode, sampleProperty, serveNode } from '@vrpkit/node';
import { generateMasterKeyText, PlatformStore, parseMasterKey, servePlatform } from '@vrpkit/platform';
import { cpuSeconds, numberFlag, printTable, startChild } from './lib.js';

const NODE_DOMAIN = 'bench-node.example';
const CONCURRENCY = 32;
const SPREAD = 1000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const tenantName = (i: number) => `bench-${i}.example`;

/** Child modes: serve and print `{port, ca, pid}` as the first stdout line. */
async function child(mode: string, dir: string): Promise<void> {
  if (mode === '--serve-node') {
    const node = await serveNode({ dataDir: dir, dev: true, offerCacheMaxAgeSeconds: 0 });
    process.stdout.write(`${JSON.stringify({ port: node.port, ca: node.caPem, pid: process.pid })}\n`);
    return;
  }
  const store = await PlatformStore.open(`sqlite:${join(dir, 'platform.sqlite')}`);
  const served = await servePlatform({
    store,
    masterKeys: [parseMasterKey(readFileSync(join(dir, 'master.key'), 'utf8'))],
    tls: { kind: 'dev', dir: join(dir, 'dev') },
    offerCacheMaxAgeSeconds: 0,
    onError: () => {},
  });
  process.stdout.write(`${JSON.stringify({ port: served.port, ca: served.caPem, pid: process.pid })}\n`);
}

async function platformDb(dir: string, tenants: number): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const keyText = generateMasterKeyText();
  writeFileSync(join(dir, 'master.key'), keyText, { mode: 0o600 });
  const master = parseMasterKey(keyText);
  const store = await PlatformStore.open(`sqlite:${join(dir, 'platform.sqlite')}`);
  await store.init(master, null);
  const property = sampleProperty(Date.now());
  for (let i = 0; i < tenants; i += 1000) {
    const chunk = Array.from({ length: Math.min(1000, tenants - i) }, (_, j) => ({ domain: tenantName(i + j), property }));
    await store.addTenants(master, chunk);
  }
  await store.close();
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

let stay = 0;
function offerPath(): string {
  const d = Date.now() + (20 + (stay++ % 200)) * DAY;
  return `/api/verified-stay-offer?check_in=${iso(d)}&check_out=${iso(d + 3 * DAY)}&guests=2`;
}

/** Connections `get` has seen, and how many it opened (each a TLS handshake). A request queued for a busy socket is not new. */
const seenSockets = new WeakSet<object>();
let freshConnections = 0;

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
    });
    // A kept-alive connection the server closed as idle (its keep-alive timeout) while this request was sent on it: resend once.
    req.on('error', (e: NodeJS.ErrnoException) =>
      req.reusedSocket && e.code === 'ECONNRESET' ? get(agent, port, ca, domain, path).then(resolve, reject) : reject(e),
    );
    req.end();
  });
}

/**
 * Concurrency 32 for `seconds`: requests/s and p99 latency (ms). Any non-200 aborts the run.
 * The keep-alive connections are opened first (one request per name in `names`), so the
 * measured phase compares serving, not TLS handshakes, on both sides.
 */
async function load(pid: number, port: number, ca: string, names: string[], seconds: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: Math.max(1, Math.floor(CONCURRENCY / names.length)) });
  for (let i = 0; i < names.length; i += CONCURRENCY)
    await Promise.all(names.slice(i, i + CONCURRENCY).map((d) => get(agent, port, ca, d, offerPath())));
  const domainFor = () => names[Math.floor(Math.random() * names.length)]!;
  const latencies: number[] = [];
  const cpuBefore = cpuSeconds([pid]) ?? 0;
  const freshBefore = freshConnections;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const status = await get(agent, port, ca, domainFor(), offerPath());
        if (status !== 200) throw new Error(`status ${status}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const cpuPerRequestMs = (((cpuSeconds([pid]) ?? 0) - cpuBefore) * 1000) / latencies.length;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const handshakesPerRequest = (freshConnections - freshBefore) / latencies.length;
  return {
    rps: latencies.length / seconds,
    p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
    cpuPerRequestMs,
    handshakesPerRequest,
  };
}

/** Touch `count` distinct tenants once each (their first requests: lazy load, certificate, connection). */
async function touch(port: number, ca: string, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: false });
  for (let i = 0; i < count; i += CONCURRENCY)
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, count - i) }, (_, j) => get(agent, port, ca, tenantName(i + j), offerPath())),
    );
}

async function main() {
  const seconds = numberFlag('seconds', 5);
  const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-bench-platform-'));
  const children: ChildProcess[] = [];
  const start = async (mode: string, dir: string) => {
    const t = performance.now();
    const { child: c, hello } = await startChild(import.meta.url, [mode, dir]);
    children.push(c);
    return { port: hello.port as number, ca: hello.ca as string, pid: hello.pid as number, startupMs: performance.now() - t };
  };
  try {
    await initNode({ domain: NODE_DOMAIN, dataDir: join(tmp, 'node') });
    await platformDb(join(tmp, 'p10'), 10);
    const seedStart = performance.now();
    await platformDb(join(tmp, 'p10k'), 10_000);
    const seedSeconds = (performance.now() - seedStart) / 1000;

    const node = await start('--serve-node', join(tmp, 'node'));
    const p10 = await start('--serve-platform', join(tmp, 'p10'));
    const p10k = await start('--serve-platform', join(tmp, 'p10k'));

    // Memory per tenant served: RSS after 10 distinct tenants, then after 1,000.
    await touch(p10k.port, p10k.ca, 10);
    const rss10 = rssMb(p10k.pid);
    await touch(p10k.port, p10k.ca, SPREAD);
    const rss1000 = rssMb(p10k.pid);

    const rows = [];
    const names = (n: number) => Array.from({ length: n }, (_, i) => tenantName(i));
    const rNode = await load(node.pid, node.port, node.ca, [NODE_DOMAIN], seconds);
    const r10 = await load(p10.pid, p10.port, p10.ca, names(10), seconds);
    const r10k = await load(p10k.pid, p10k.port, p10k.ca, names(SPREAD), seconds);
    for (const [name, r] of [
      ['node (baseline)', rNode],
      ['platform, 10 tenants', r10],
      ['platform, 10,000 tenants (1,000 served)', r10k],
    ] as const) {
      rows.push({
        row: name,
        rps: Math.round(r.rps),
        p99_ms: Math.round(r.p99 * 10) / 10,
        rps_ratio_to_node: Math.round((r.rps / rNode.rps) * 100) / 100,
        p99_ratio_to_node: Math.round((r.p99 / rNode.p99) * 100) / 100,
        server_cpu_ms_per_req: Math.round(r.cpuPerRequestMs * 1000) / 1000,
        cpu_ratio_to_node: Math.round((r.cpuPerRequestMs / rNode.cpuPerRequestMs) * 100) / 100,
        new_tls_conn_per_req: Math.round(r.handshakesPerRequest * 100) / 100,
      });
    }
    const memory = {
      rss_after_10_tenants_mb: Math.round(rss10),
      rss_after_1000_tenants_mb: Math.round(rss1000),
      rss_growth_per_1000_tenants_mb: Math.round(((rss1000 - rss10) * 1000) / (SPREAD - 10)),
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
        .join(' ')} — ${CONCURRENCY} concurrent, ${seconds}s per row, fresh offers, https loopback, SQLite, ${cpus().length} CPUs (shared)`,
    );
    printTable([Object.keys(rows[0]!), ...rows.map((r) => Object.values(r).map(String))]);
    console.log(memory);
    console.log(startup);
    const tput = rows[2]!.rps_ratio_to_node;
    console.log(`throughput with 10,000 tenants: ${tput}× the node: ${tput >= 0.8 ? 'meets' : 'MISSES'} the 0.8× target`);
    console.log(
      `RSS growth: ${memory.rss_growth_per_1000_tenants_mb} MB per 1,000 tenants served: ${memory.rss_growth_per_1000_tenants_mb <= 40 ? 'meets' : 'MISSES'} the 40 MB target`,
    );
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    writeFileSync(
      new URL('./results/platform.json', import.meta.url),
      `${JSON.stringify({ bench: 'platform', run_at: new Date().toISOString(), load_average: loadavg(), node: process.version, cpus: cpus().length, concurrency: CONCURRENCY, seconds_per_row: seconds, baseline: 'single-domain node, same run', target: { throughput_ratio_min: 0.8, rss_growth_per_1000_max_mb: 40 }, rows, memory, startup }, null, 2)}\n`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
  }
}

const mode = process.argv[2];
if (mode === '--serve-node' || mode === '--serve-platform') await child(mode, process.argv[3]!);
else await main();
