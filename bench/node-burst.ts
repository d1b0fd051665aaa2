/**
 * bench/node-burst: the node's peak resident memory under a burst of simultaneous connections
 * from one client address, with the per-client connection cap at its default and effectively
 * off, as a ratio to the node's idle RSS measured in the same run.
 *
 * The node runs in a child process (`serveNode`, dev CA, https on 127.0.0.1) so its RSS is its
 * own; the parent opens `--burst` TLS connections at once (one GET of the offer endpoint each,
 * no keep-alive), then reads the child's peak RSS (VmHWM) and, after a GC, its RSS and heap.
 * Loopback only; the count is bounded by the flag.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/node-burst.ts [--burst 2000]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT, initNode, serveNode } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { numberFlag } from './lib.js';

const DOMAIN = 'bench-burst.example';
/** A cap no single-address burst here reaches: the node as it was before the cap. */
const UNCAPPED = 1_000_000;

interface ChildReport {
  port: number;
  caPem: string;
}

if (process.argv[2] === '--child') {
  // Child mode: serve the node with the given cap; answer 'measure' with memory after a GC.
  const [, , , dataDir, cap] = process.argv;
  const node = await serveNode({ dataDir: dataDir!, dev: true, maxConnectionsPerClient: Number(cap) });
  process.on('message', (m) => {
    if (m !== 'measure') return;
    (globalThis as { gc?: () => void }).gc?.();
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    process.send?.({
      peak_rss_mb: kb('VmHWM') / 1024,
      rss_after_gc_mb: kb('VmRSS') / 1024,
      heap_used_mb: process.memoryUsage().heapUsed / 2 ** 20,
    });
  });
  process.send?.({ port: node.port, caPem: node.caPem! } satisfies ChildReport);
} else {
  const BURST = numberFlag('burst', 2000);
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const path = `${OFFER_ENDPOINT_PATH}?check_in=${day(30)}&check_out=${day(33)}&guests=2`;
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-burst-'));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });

  const measure = (child: ChildProcess) =>
    new Promise<{ peak_rss_mb: number; rss_after_gc_mb: number; heap_used_mb: number }>((resolve) => {
      child.once('message', (m) => resolve(m as never));
      child.send('measure');
    });

  async function row(label: string, cap: number) {
    const child = fork(fileURLToPath(import.meta.url), ['--child', join(dir, 'node'), String(cap)], {
      execArgv: ['--import', 'tsx', '--conditions=vrpkit-source', '--expose-gc'],
    });
    const { port, caPem } = await new Promise<ChildReport>((resolve) => child.once('message', (m) => resolve(m as ChildReport)));
    const idle = await measure(child);
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from(
        { length: BURST },
        () =>
          new Promise<'ok' | 'refused'>((resolve) => {
            const req = request(
              { host: '127.0.0.1', port, servername: DOMAIN, ca: caPem, path, headers: { host: DOMAIN }, agent: false },
              (res) => {
                res.resume();
                res.on('end', () => resolve(res.statusCode === 200 ? 'ok' : 'refused'));
              },
            );
            req.on('error', () => resolve('refused'));
            req.end();
          }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const after = await measure(child);
    child.kill('SIGTERM');
    return {
      row: label,
      max_connections_per_client: cap,
      burst: BURST,
      served: outcomes.filter((o) => o === 'ok').length,
      refused: outcomes.filter((o) => o === 'refused').length,
      seconds: Number(seconds.toFixed(2)),
      idle_rss_mb: Number(idle.rss_after_gc_mb.toFixed(1)),
      peak_rss_mb: Number(after.peak_rss_mb.toFixed(1)),
      rss_after_gc_mb: Number(after.rss_after_gc_mb.toFixed(1)),
      heap_used_after_gc_mb: Number(after.heap_used_mb.toFixed(1)),
      peak_to_idle: Number((after.peak_rss_mb / idle.rss_after_gc_mb).toFixed(2)),
    };
  }

  const rows = [await row('uncapped', UNCAPPED), await row('default cap', DEFAULT_MAX_CONNECTIONS_PER_CLIENT)];
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(
    `node burst: ${BURST} simultaneous connections from one address, one GET each; ${cpus().length} CPUs, Node ${process.version}\n`,
  );
  console.table(rows);
  const out = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, 'node-burst.json'),
    `${JSON.stringify({ bench: 'node-burst', run_at: new Date().toISOString(), node: process.version, cpus: cpus().length, baseline: 'idle RSS', rows }, null, 2)}\n`,
  );
}
