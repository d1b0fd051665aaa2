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
 * Run: npx tsx --conditions=vrpkit-source bench/node-offer.ts [--seconds 5] [--rounds 2]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createPrivateKey, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { initNode, serveNode } from '@vrpkit/node';
import { Hono } from 'hono';
import { Agent, buildConnector } from 'undici';

const DOMAIN = 'bench-node.example';
const CONCURRENCY = 32;

const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) {
    process.stderr.write(`error[usage]: --${name} takes a positive number\n`);
    process.exit(64);
  }
  return v;
};

// ── child: the node and the bare endpoint, same stack, same TLS certificate ─────────────────
if (process.argv.includes('--serve')) {
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-node-'));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
  const node = await serveNode({ dataDir: join(dir, 'node'), dev: true });
  const { readFileSync } = await import('node:fs');
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
  process.stdout.write(`${JSON.stringify({ offerPort: node.port, barePort: (bare.address() as AddressInfo).port, caPem: node.caPem })}\n`);
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
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** A bounded closed loop: CONCURRENCY workers, each issuing one request after another for `ms`. */
async function load(agent: Agent, paths: () => string, ms: number, expectStatus: number): Promise<Run> {
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
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
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
  const seconds = flag('seconds', 5);
  const rounds = flag('rounds', 2);
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=vrpkit-source', fileURLToPath(import.meta.url), '--serve'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
    const { offerPort, barePort, caPem } = JSON.parse(first.value as string) as { offerPort: number; barePort: number; caPem: string };
    const agentFor = (port: number) => {
      const connector = buildConnector({ ca: caPem });
      return new Agent({
        connections: CONCURRENCY,
        connect: (opts, cb) => connector({ ...opts, hostname: '127.0.0.1', port: String(port), servername: DOMAIN }, cb),
      });
    };
    const offerAgent = agentFor(offerPort);
    const bareAgent = agentFor(barePort);
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
    await load(offerAgent, offerPath, 1500, 200);
    await load(bareAgent, barePath, 1500, 200);
    const offerRuns: Run[] = [];
    const bareRuns: Run[] = [];
    const sameSizeRuns: Run[] = [];
    for (let r = 0; r < rounds; r++) {
      bareRuns.push(await load(bareAgent, barePath, seconds * 1000, 200));
      sameSizeRuns.push(await load(bareAgent, sameSizePath, seconds * 1000, 200));
      offerRuns.push(await load(offerAgent, offerPath, seconds * 1000, 200));
    }
    await offerAgent.close();
    await bareAgent.close();
    const signOps = rawSignOpsPerSecond(2000);

    const median = (runs: Run[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
    const offer = median(offerRuns);
    const bare = median(bareRuns);
    const sameSize = median(sameSizeRuns);
    const ratio = offer.rps / bare.rps;
    const sameSizeRatio = offer.rps / sameSize.rps;
    const row = (name: string, r: Run) => [
      name,
      r.rps.toFixed(0),
      r.p50_ms.toFixed(2),
      r.p99_ms.toFixed(2),
      String(r.requests),
      String(r.errors),
    ];
    const rows = [
      ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'errors'],
      row('bare JSON (baseline)', bare),
      row('static offer-sized JSON (baseline 2)', sameSize),
      row('signed offer (fresh each request)', offer),
    ];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const r of rows) process.stdout.write(`${r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')}\n`);
    process.stdout.write(
      `\noffer / bare throughput: ${ratio.toFixed(2)} (target ≥ 0.60: ${ratio >= 0.6 ? 'met' : 'NOT met'})\n` +
        `offer / static same-size body: ${sameSizeRatio.toFixed(2)} (the share left after carrying the same bytes)\n` +
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
          offer_to_bare_ratio: ratio,
          offer_to_same_size_ratio: sameSizeRatio,
          target_ratio: 0.6,
          target_met: ratio >= 0.6,
          raw_crypto_sign_ops_per_s: signOps,
          rounds_detail: { bare: bareRuns, static_same_size: sameSizeRuns, offer: offerRuns },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}
