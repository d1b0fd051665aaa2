/**
 * bench/node-offer: signed offers per second and p50/p99 latency on a node's offer endpoint
 * over https on loopback at concurrency 32, as a ratio to a bare JSON endpoint served by the
 * same stack (Hono app + @hono/node-server + TLS, same certificate) in the same run, beside raw
 * Ed25519 `crypto.sign` operations per second.
 *
 * Every offer request is computed and signed fresh (store reads, pricing, availability,
 * freshness, signature): nothing is cached. The servers run in a child process (this file with
 * `--serve`) so the load generator does not share their event loop. Rounds alternate the two
 * endpoints so machine drift hits both alike.
 *
 * A second baseline, a static body the size of a real offer response, separates the cost of
 * computing and signing an offer from the cost of carrying its ~6 KB over TLS.
 *
 * Beside req/s, each row reports the CPU the serving process(es) spent per answered request
 * (from /proc): on a shared machine throughput follows the neighbours' load, CPU per request
 * follows the code.
 *
 * A last row serves the same node with `--workers 2` (node:cluster, `serveNodeCluster`): the
 * signature keeps one process CPU-bound, so this is what a multi-core host gets. On a 2-core
 * machine the load generator shares those cores, so read it as a lower bound.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/node-offer.ts [--seconds 5] [--rounds 2]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createPrivateKey, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { initNode, isServeWorker, runServeWorker, serveNode, serveNodeCluster } from '@vrpkit/node';
import { Hono } from 'hono';
import { Agent, buildConnector } from 'undici';
import { numberFlag } from './lib.js';

const DOMAIN = 'bench-node.example';
const CONCURRENCY = 32;

const WORKERS = 2;

const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU seconds (user + system) the processes `pids` have used so far, from /proc/PID/stat, or
 * null where there is no /proc. On a shared machine throughput swings with the neighbours' load;
 * CPU per request is what a code change moves, so the table reports both.
 */
function cpuSeconds(pids: number[]): number | null {
  try {
    let ticks = 0;
    for (const pid of pids) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

// ── child: the node and the bare endpoint, same stack, same TLS certificate ─────────────────
if (isServeWorker()) {
  // A forked worker of the --serve-workers child: serve the node it was handed, report, wait.
  await runServeWorker(() => serveNode({ dataDir: process.env.VRPKIT_BENCH_NODE_DIR!, dev: true }));
} else if (process.argv.includes('--serve-workers')) {
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-node-'));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
  process.env.VRPKIT_BENCH_NODE_DIR = join(dir, 'node');
  const served = await serveNodeCluster({ dataDir: join(dir, 'node'), dev: true }, WORKERS);
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
  const node = await serveNode({ dataDir: join(dir, 'node'), dev: true });
  const tls = join(dir, 'node', 'tls');
  const bareApp = new Hono();
  const bareBody = { kind: 'bare', ok: true };
  bareApp.get('/bare', (c) => c.json(bareBody));
  // A second baseline: a static body as large as a real offer response, to separate the cost of
  // computing and signing an offer from the cost of carrying ~6 KB over TLS.
  const sample = await node.service.getOffer({
    check_in: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
    check_out: new Date(Date.now() + 33 * 86_400_000).toISOString().slice(0, 10),
    guests: 2,
  });
  if (!sample.ok) throw new Error(`sample offer failed: ${sample.error.code}`);
  const sameSize = sample.json;
  bareApp.get('/bare-same-size', (c) => c.body(sameSize, 200, { 'content-type': 'application/json; charset=utf-8' }));
  const bare = serve({
    fetch: bareApp.fetch,
    port: 0,
    hostname: '127.0.0.1',
    createServer,
    serverOptions: { key: readFileSync(join(tls, 'server-key.pem'), 'utf8'), cert: readFileSync(join(tls, 'server.pem'), 'utf8') },
  });
  await new Promise((r) => bare.once('listening', r));
  process.stdout.write(
    `${JSON.stringify({ offerPort: node.port, barePort: (bare.address() as AddressInfo).port, caPem: node.caPem, pids: [process.pid] })}\n`,
  );
  const stop = async () => {
    bare.close();
    await node.close();
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
      } catch {
        errors++;
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

function rawSignOpsPerSecond(ms: number): number {
  const key = createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32, 7)]),
    format: 'der',
    type: 'pkcs8',
  });
  // A signing input the size of a real offer's (about 4 KB of base64url).
  const input = Buffer.from('e'.repeat(4000), 'ascii');
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) sign(null, input, key);
    n += 100;
  }
  return n / (ms / 1000);
}

async function main() {
  const seconds = numberFlag('seconds', 5);
  const rounds = numberFlag('rounds', 2);
  const children: ChildProcess[] = [];
  const startChild = async (mode: '--serve' | '--serve-workers') => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=vrpkit-source', fileURLToPath(import.meta.url), mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
    return JSON.parse(first.value as string) as Record<string, unknown>;
  };
  try {
    const single = await startChild('--serve');
    const cluster = await startChild('--serve-workers');
    const { offerPort, barePort, caPem } = single as unknown as { offerPort: number; barePort: number; caPem: string };
    const workersPort = cluster.port as number;
    const workersCa = cluster.caPem as string;
    const singlePids = single.pids as number[];
    const workersPids = cluster.pids as number[];
    const agentFor = (port: number, ca = caPem) => {
      const connector = buildConnector({ ca });
      return new Agent({
        connections: CONCURRENCY,
        connect: (opts, cb) => connector({ ...opts, hostname: '127.0.0.1', port: String(port), servername: DOMAIN }, cb),
      });
    };
    const offerAgent = agentFor(offerPort);
    const bareAgent = agentFor(barePort);
    const workersAgent = agentFor(workersPort, workersCa);
    // Stays spread over 90 start dates, 3 nights, inside the sample node's horizon.
    let i = 0;
    const base = Date.now() + 20 * 86_400_000;
    const offerPath = () => {
      const d = base + (i++ % 90) * 86_400_000;
      const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      return `/api/verified-stay-offer?check_in=${iso(d)}&check_out=${iso(d + 3 * 86_400_000)}&guests=2`;
    };
    const barePath = () => '/bare';
    const sameSizePath = () => '/bare-same-size';

    // Warm up both (TLS sessions, JIT).
    await load(offerAgent, offerPath, 1500, 200, singlePids);
    await load(bareAgent, barePath, 1500, 200, singlePids);
    await load(workersAgent, offerPath, 1500, 200, workersPids);
    const offerRuns: Run[] = [];
    const workersRuns: Run[] = [];
    const bareRuns: Run[] = [];
    const sameSizeRuns: Run[] = [];
    for (let r = 0; r < rounds; r++) {
      bareRuns.push(await load(bareAgent, barePath, seconds * 1000, 200, singlePids));
      sameSizeRuns.push(await load(bareAgent, sameSizePath, seconds * 1000, 200, singlePids));
      offerRuns.push(await load(offerAgent, offerPath, seconds * 1000, 200, singlePids));
      workersRuns.push(await load(workersAgent, offerPath, seconds * 1000, 200, workersPids));
    }
    await offerAgent.close();
    await bareAgent.close();
    await workersAgent.close();
    const signOps = rawSignOpsPerSecond(2000);

    const median = (runs: Run[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
    const offer = median(offerRuns);
    const bare = median(bareRuns);
    const sameSize = median(sameSizeRuns);
    const workers = median(workersRuns);
    const ratio = offer.rps / bare.rps;
    const workersRatio = workers.rps / bare.rps;
    const sameSizeRatio = offer.rps / sameSize.rps;
    const row = (name: string, r: Run) => [
      name,
      r.rps.toFixed(0),
      r.server_cpu_us_per_request === null ? 'n/a' : r.server_cpu_us_per_request.toFixed(0),
      r.p50_ms.toFixed(2),
      r.p99_ms.toFixed(2),
      String(r.requests),
      String(r.errors),
    ];
    const rows = [
      ['endpoint', 'req/s', 'server CPU µs/req', 'p50 ms', 'p99 ms', 'requests', 'errors'],
      row('bare JSON (baseline)', bare),
      row('static offer-sized JSON (baseline 2)', sameSize),
      row('signed offer (fresh each request)', offer),
      row(`signed offer, --workers ${WORKERS}`, workers),
    ];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const r of rows) process.stdout.write(`${r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')}\n`);
    process.stdout.write(
      `\noffer / bare throughput: ${ratio.toFixed(2)} (target ≥ 0.60: ${ratio >= 0.6 ? 'met' : 'NOT met'})\n` +
        `offer / static same-size body: ${sameSizeRatio.toFixed(2)} (the share left after carrying the same bytes)\n` +
        `offer with --workers ${WORKERS} / bare (one process): ${workersRatio.toFixed(2)}; / one-process offer: ${(workers.rps / offer.rps).toFixed(2)}\n` +
        `raw Ed25519 crypto.sign (4 KB input): ${signOps.toFixed(0)} ops/s; offers/s as a share of it: ${(offer.rps / signOps).toFixed(2)}\n` +
        `concurrency ${CONCURRENCY}, ${rounds} round(s) × ${seconds} s per endpoint, median round; ${cpus().length} CPUs, Node ${process.version}\n`,
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
          bare,
          static_same_size: sameSize,
          offer,
          offer_workers: { workers: WORKERS, ...workers },
          offer_to_bare_ratio: ratio,
          offer_workers_to_bare_ratio: workersRatio,
          offer_to_same_size_ratio: sameSizeRatio,
          target_ratio: 0.6,
          target_met: ratio >= 0.6,
          raw_crypto_sign_ops_per_s: signOps,
          rounds_detail: { bare: bareRuns, static_same_size: sameSizeRuns, offer: offerRuns, offer_workers: workersRuns },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
  }
}
