/**
 * bench/node-offer: signed offers per second and p50/p99 latency on a node's offer endpoint
 * over https on loopback at concurrency 32, as ratios to baselines served by the same stack
 * (Hono app + @hono/node-server + TLS, same certificate) in the same run: a bare JSON endpoint
 * and a static body the size of a real offer response (which separates computing and signing an
 * offer from carrying its ~6 KB over TLS). Beside req/s, each row reports the CPU the serving
 * process(es) spent per answered request (from /proc): on a shared machine throughput follows
 * the neighbours' load, CPU per request follows the code.
 *
 * Rows:
 * - static body + one raw signature: the static body's endpoint signing the benches' raw 4 KB
 *   input once per request before it answers: the floor of any freshly signed response on this
 *   stack, so `fresh − floor` is the offer's own work (store read, pricing, serialising, key ring);
 * - fresh: a node with the signed-offer cache off (`--offer-cache-max-age 0`): every request
 *   reads the store, prices, checks availability and signs;
 * - cache miss: the cache on, every request one not asked before (so signed, then stored);
 * - cache hit: the cache on, 90 stays asked over and over (each signed once, then reused);
 * - mixed: 90% of requests from those 90 stays, 10% new stays;
 * - fresh, --workers 2: the cache off, two processes (node:cluster); on a 2-core machine the
 *   load generator shares those cores, so read it as a lower bound.
 * The target for a fresh offer is stated in CPU: static-body CPU + 1.5 × one raw Ed25519
 * signature, the signature's CPU measured in this run too.
 *
 * The servers run in child processes (this file with `--serve` / `--serve-workers`) so the load
 * generator does not share their event loop. Rounds alternate the endpoints so machine drift
 * hits all alike.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/node-offer.ts [--seconds 5] [--rounds 2]
 */
import type { ChildProcess } from 'node:child_process';
import { sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { initNode, isServeWorker, runServeWorker, serveNode, serveNodeCluster } from '@vrpkit/node';
import { Hono } from 'hono';
import { Agent, buildConnector } from 'undici';
import { cpuSeconds, numberFlag, printTable, RAW_SIGN, rawSignCpuMicros, startChild } from './lib.js';

const DOMAIN = 'bench-node.example';
const CONCURRENCY = 32;
const WORKERS = 2;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

const stayPath = (startDay: number, nights: number, guests: number) => {
  const d = Date.now() + startDay * DAY;
  return `/api/verified-stay-offer?check_in=${iso(d)}&check_out=${iso(d + nights * DAY)}&guests=${guests}`;
};

/** The 90 repeated stays: 3 nights for 2 guests from 20 to 109 days ahead. */
function hotStays(): () => string {
  let i = 0;
  return () => stayPath(20 + (i++ % 90), 3, 2);
}

/**
 * Requests never made before in this run: the hot stays, each under a new `language` tag (part
 * of the cache key and echoed in the offer), so a miss signs an offer of the same size as a hit serves.
 */
let newStay = 0;
function newStays(): string {
  const k = newStay++;
  return `${stayPath(20 + (k % 90), 3, 2)}&language=en-k${k}`;
}

// ── children: the nodes and the baselines, same stack, same TLS certificate ─────────────────
if (isServeWorker()) {
  // A forked worker of the --serve-workers child: serve the node it was handed (cache off), report, wait.
  await runServeWorker(() => serveNode({ dataDir: process.env.VRPKIT_BENCH_NODE_DIR!, dev: true, offerCacheMaxAgeSeconds: 0 }));
} else if (process.argv.includes('--serve-workers')) {
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-node-'));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
  process.env.VRPKIT_BENCH_NODE_DIR = join(dir, 'node');
  const served = await serveNodeCluster({ dataDir: join(dir, 'node'), dev: true, offerCacheMaxAgeSeconds: 0 }, WORKERS);
  process.stdout.write(`${JSON.stringify({ port: served.port, caPem: served.caPem, pids: [process.pid, ...served.workerPids] })}\n`);
  const stop = async () => {
    await served.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else if (process.argv.includes('--serve')) {
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-node-'));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
  // One store, served twice: with the signed-offer cache (the default max-age) and without it.
  const cached = await serveNode({ dataDir: join(dir, 'node'), dev: true });
  const fresh = await serveNode({ dataDir: join(dir, 'node'), dev: true, offerCacheMaxAgeSeconds: 0 });
  const tls = join(dir, 'node', 'tls');
  const bareApp = new Hono();
  const bareBody = { kind: 'bare', ok: true };
  bareApp.get('/bare', (c) => c.json(bareBody));
  // A static body as large as a real offer response, written the way a static file server would: one Buffer with its length.
  const sample = await fresh.service.getOffer({ check_in: iso(Date.now() + 30 * DAY), check_out: iso(Date.now() + 33 * DAY), guests: 2 });
  if (!sample.ok) throw new Error(`sample offer failed: ${sample.error.code}`);
  const sameSize = sample.body;
  const sameSizeHeaders = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(sameSize.byteLength) };
  bareApp.get('/bare-same-size', (c) => c.body(sameSize, 200, sameSizeHeaders));
  bareApp.get('/bare-same-size-signed', (c) => {
    sign(null, RAW_SIGN.input, RAW_SIGN.key);
    return c.body(sameSize, 200, sameSizeHeaders);
  });
  const bare = serve({
    fetch: bareApp.fetch,
    port: 0,
    hostname: '127.0.0.1',
    createServer,
    serverOptions: { key: readFileSync(join(tls, 'server-key.pem'), 'utf8'), cert: readFileSync(join(tls, 'server.pem'), 'utf8') },
  });
  await new Promise((r) => bare.once('listening', r));
  process.stdout.write(
    `${JSON.stringify({ cachedPort: cached.port, freshPort: fresh.port, barePort: (bare.address() as AddressInfo).port, caPem: cached.caPem, pids: [process.pid] })}\n`,
  );
  const stop = async () => {
    bare.close();
    await cached.close();
    await fresh.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  await main();
}

interface Run {
  requests: number;
  errors: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** CPU the serving processes spent per answered request (Linux /proc; null elsewhere). */
  server_cpu_us_per_request: number | null;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** A bounded closed loop: CONCURRENCY workers, each issuing one request after another for `ms`. */
async function load(agent: Agent, paths: () => string, ms: number, expectStatus: number, serverPids: number[]): Promise<Run> {
  const cpuBefore = cpuSeconds(serverPids);
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + ms;
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      try {
        const res = await agent.request({ origin: `https://${DOMAIN}`, path: paths(), method: 'GET' });
        await res.body.text();
        if (res.statusCode === expectStatus) latencies.push(performance.now() - t);
        else errors++;
      } catch (e) {
        if (errors++ === 0) process.stderr.write(`first error: ${String(e)}\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = cpuSeconds(serverPids);
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    server_cpu_us_per_request:
      cpuBefore === null || cpuAfter === null || latencies.length === 0 ? null : ((cpuAfter - cpuBefore) * 1e6) / latencies.length,
  };
}

async function main() {
  const seconds = numberFlag('seconds', 5);
  const rounds = numberFlag('rounds', 2);
  const children: ChildProcess[] = [];
  try {
    const single = await startChild(import.meta.url, ['--serve']);
    children.push(single.child);
    const cluster = await startChild(import.meta.url, ['--serve-workers']);
    children.push(cluster.child);
    const { cachedPort, freshPort, barePort, caPem } = single.hello as {
      cachedPort: number;
      freshPort: number;
      barePort: number;
      caPem: string;
    };
    const singlePids = single.hello.pids as number[];
    const workersPids = cluster.hello.pids as number[];
    const agentFor = (port: number, ca = caPem) => {
      const connector = buildConnector({ ca });
      return new Agent({
        connections: CONCURRENCY,
        connect: (opts, cb) => connector({ ...opts, hostname: '127.0.0.1', port: String(port), servername: DOMAIN }, cb),
      });
    };
    const cachedAgent = agentFor(cachedPort);
    const freshAgent = agentFor(freshPort);
    const bareAgent = agentFor(barePort);
    const workersAgent = agentFor(cluster.hello.port as number, cluster.hello.caPem as string);
    const hot = hotStays();
    let m = 0;
    const mixed = () => (m++ % 10 === 9 ? newStays() : hot());

    const rows: { name: string; agent: Agent; path: () => string; pids: number[] }[] = [
      { name: 'bare JSON (baseline)', agent: bareAgent, path: () => '/bare', pids: singlePids },
      { name: 'static offer-sized body (baseline 2)', agent: bareAgent, path: () => '/bare-same-size', pids: singlePids },
      { name: 'static body + one raw signature (floor)', agent: bareAgent, path: () => '/bare-same-size-signed', pids: singlePids },
      { name: 'signed offer, fresh (cache off)', agent: freshAgent, path: hotStays(), pids: singlePids },
      { name: 'signed offer, cache miss', agent: cachedAgent, path: newStays, pids: singlePids },
      { name: 'signed offer, cache hit', agent: cachedAgent, path: hot, pids: singlePids },
      { name: 'signed offer, mixed (90% repeated)', agent: cachedAgent, path: mixed, pids: singlePids },
      { name: `signed offer, fresh, --workers ${WORKERS}`, agent: workersAgent, path: hotStays(), pids: workersPids },
    ];
    // Warm up every row (TLS sessions, JIT; the hot stays enter the cache).
    for (const r of rows) await load(r.agent, r.path, 1000, 200, r.pids);
    const runs = rows.map(() => [] as Run[]);
    for (let round = 0; round < rounds; round++) {
      for (const [i, r] of rows.entries()) runs[i]!.push(await load(r.agent, r.path, seconds * 1000, 200, r.pids));
    }
    for (const a of [cachedAgent, freshAgent, bareAgent, workersAgent]) await a.close();
    const signUs = rawSignCpuMicros(1500);

    const median = (rs: Run[]) => [...rs].sort((a, b) => a.rps - b.rps)[Math.floor(rs.length / 2)]!;
    const med = runs.map(median);
    const [bare, sameSize, floor, fresh, miss, hit, mix] = med as [Run, Run, Run, Run, Run, Run, Run, Run];
    const cpu = (r: Run) => r.server_cpu_us_per_request;
    const fmt = (v: number | null, digits = 2) => (v === null ? 'n/a' : v.toFixed(digits));
    const cpuRatio = (r: Run) => (cpu(r) === null || cpu(sameSize) === null ? null : cpu(r)! / cpu(sameSize)!);
    printTable([
      ['endpoint', 'req/s', '× bare', '× static', 'server CPU µs/req', 'CPU × static', 'p50 ms', 'p99 ms', 'requests', 'errors'],
      ...rows.map((r, i) => {
        const run = med[i]!;
        return [
          r.name,
          run.rps.toFixed(0),
          (run.rps / bare.rps).toFixed(2),
          (run.rps / sameSize.rps).toFixed(2),
          fmt(cpu(run), 0),
          fmt(cpuRatio(run)),
          run.p50_ms.toFixed(2),
          run.p99_ms.toFixed(2),
          String(run.requests),
          String(run.errors),
        ];
      }),
    ]);
    const hitBare = hit.rps / bare.rps;
    const hitStatic = hit.rps / sameSize.rps;
    const freshBudget = cpu(sameSize) === null ? null : cpu(sameSize)! + 1.5 * signUs;
    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
    process.stdout.write(
      `\ncache hit / bare: ${hitBare.toFixed(2)} (target ≥ 0.60: ${verdict(hitBare >= 0.6)}); cache hit / static same-size body: ${hitStatic.toFixed(2)} (target ≥ 0.90: ${verdict(hitStatic >= 0.9)})\n` +
        `fresh CPU/request: ${fmt(cpu(fresh), 0)} µs; budget = static ${fmt(cpu(sameSize), 0)} µs + 1.5 × raw Ed25519 crypto.sign ${signUs.toFixed(1)} µs (4 KB input, this run) = ${fmt(freshBudget, 0)} µs: ` +
        `${freshBudget === null || cpu(fresh) === null ? 'n/a' : `${cpu(fresh)! <= freshBudget ? 'PASS' : 'MISS'} (non-signature CPU over static: ${((cpu(fresh)! - cpu(sameSize)! - signUs) / signUs).toFixed(2)} × sign, budget 0.50)`}\n` +
        `floor (static body + one raw signature, in the server): ${fmt(cpu(floor), 0)} µs; fresh − floor: ${fmt(cpu(fresh) === null || cpu(floor) === null ? null : cpu(fresh)! - cpu(floor)!, 0)} µs (the offer's own work; the budget leaves ${fmt(freshBudget === null || cpu(floor) === null ? null : freshBudget - cpu(floor)!, 0)} µs for it)\n` +
        `cache miss CPU / fresh CPU: ${fmt(cpu(miss) === null || cpu(fresh) === null ? null : cpu(miss)! / cpu(fresh)!)}; mixed / bare: ${(mix.rps / bare.rps).toFixed(2)}\n` +
        `concurrency ${CONCURRENCY}, ${rounds} round(s) × ${seconds} s per row, median round; ${cpus().length} CPUs, Node ${process.version}\n`,
    );
    const results = new URL('./results/', import.meta.url);
    mkdirSync(results, { recursive: true });
    writeFileSync(
      new URL('node-offer.json', results),
      `${JSON.stringify(
        {
          bench: 'node-offer',
          at: new Date().toISOString(),
          node: process.version,
          cpus: cpus().length,
          concurrency: CONCURRENCY,
          seconds_per_round: seconds,
          rounds,
          raw_crypto_sign_cpu_us: signUs,
          floor_cpu_us: cpu(floor),
          rows: rows.map((r, i) => ({
            name: r.name,
            median: med[i],
            ratio_to_bare: med[i]!.rps / bare.rps,
            ratio_to_static: med[i]!.rps / sameSize.rps,
            rounds: runs[i],
          })),
          targets: {
            cache_hit_to_bare: { min: 0.6, value: hitBare, met: hitBare >= 0.6 },
            cache_hit_to_static: { min: 0.9, value: hitStatic, met: hitStatic >= 0.9 },
            fresh_cpu_us: {
              max: freshBudget,
              value: cpu(fresh),
              met: freshBudget !== null && cpu(fresh) !== null && cpu(fresh)! <= freshBudget,
            },
          },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
  }
}
