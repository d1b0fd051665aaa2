/**
 * `vrp node serve --workers N`: N processes serve the one node (node:cluster), so a multi-core
 * host signs offers on every core — an Ed25519 signature per offer keeps one process CPU-bound.
 *
 * Nothing is shared in memory: every worker opens the same store and reads its revision on each
 * offer, so a write by any process (`vrp node calendar block`, a key rotation …) reaches every
 * worker on its next offer, exactly as with one process. The primary opens the store first (so the
 * migrations run once, not racing in N workers) and creates the dev TLS files before forking.
 * A worker that dies stops the whole node (fail fast: the supervisor restarts it cleanly, no
 * half-served node and no crash loop inside). `forkServeWorkers` is the forking and stopping
 * alone, which `vrp platform serve --workers` shares.
 */
import cluster, { type Worker } from 'node:cluster';
import { withNodeStore } from './admin/store.js';
import type { BookingUpkeep } from './booking/upkeep.js';
import { NodeError } from './errors.js';
import { loadServeTls, openNodeBookingUpkeep, type ServedNode, type ServeNodeOptions } from './serve.js';
import { type CalendarSync, startNodeCalendarSync } from './sync-loop.js';

/** Most workers `--workers` accepts (one per core is the useful maximum). */
export const MAX_SERVE_WORKERS = 64;

/** What a worker tells the primary once it listens. */
interface ListeningMessage {
  event: 'vrpkit_worker_listening';
  address: string;
  port: number;
}

/** True in a process forked by `serveNodeCluster`. */
export function isServeWorker(): boolean {
  return cluster.isWorker;
}

/**
 * In a worker: start serving, tell the primary this worker listens, serve until SIGTERM/SIGINT
 * or until the primary goes away, then close. The IPC channel would keep a worker alive, so it
 * is let go both after closing and when starting fails (the primary then sees the exit).
 */
export async function runServeWorker(start: () => Promise<Pick<ServedNode, 'address' | 'port' | 'close'>>): Promise<void> {
  let served: Pick<ServedNode, 'address' | 'port' | 'close'>;
  try {
    served = await start();
  } catch (e) {
    if (process.connected) process.disconnect();
    throw e;
  }
  const message: ListeningMessage = { event: 'vrpkit_worker_listening', address: served.address, port: served.port };
  process.send?.(message);
  await new Promise<void>((done) => {
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
    process.once('disconnect', done);
  });
  await served.close();
  if (process.connected) process.disconnect();
}

export interface ServedCluster extends Omit<ServedNode, 'service'> {
  workerPids: number[];
  /** Settles once the node stopped by itself: a worker exited, so the others were stopped too. */
  stopped: Promise<void>;
}

/** Before anything is opened: this is the primary and `workers` is a worker count it can fork. */
export function checkWorkers(workers: number): void {
  if (!cluster.isPrimary) throw new NodeError('not_primary');
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_SERVE_WORKERS)
    throw new NodeError('invalid_workers', { max: MAX_SERVE_WORKERS });
}

/** Workers forked by `forkServeWorkers`, listening on one shared port. */
export interface ServeWorkers {
  address: string;
  port: number;
  workerPids: number[];
  /** Settles once the workers stopped by themselves: one exited, so the others were stopped too. */
  stopped: Promise<void>;
  close(): Promise<void>;
}

/**
 * In the primary: fork `workers` copies of this process's entry script (they see
 * `isServeWorker()` and call `runServeWorker`), wait until every one listens on the shared
 * port, then run `alongside` (what the primary runs once for all workers; it adds each thing it
 * started to `stops`, which `close` runs). Rejects when a worker fails to start. `what` names the served thing in
 * the message of a worker that exits on its own (it stops all of them).
 */
export async function forkServeWorkers(
  workers: number,
  what: string,
  alongside: (stops: Array<() => Promise<void>>) => Promise<void> = async () => {},
): Promise<ServeWorkers> {
  checkWorkers(workers);
  const forked: Worker[] = [];
  let closing = false;
  const stop = (w: Worker) =>
    new Promise<void>((done) => {
      // isDead() turns true in the same tick 'exit' fires, so a live worker's exit is still ahead.
      if (w.isDead()) return done();
      w.once('exit', () => done());
      w.process.kill('SIGTERM');
    });
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    closing = true;
    await Promise.all([...forked.map(stop), ...stops.map((s) => s())]);
  };
  try {
    const listening = await Promise.all(
      Array.from({ length: workers }, () => {
        const w = cluster.fork();
        forked.push(w);
        return new Promise<ListeningMessage>((resolveListen, reject) => {
          w.on('message', (m: ListeningMessage) => {
            if (m?.event === 'vrpkit_worker_listening') resolveListen(m);
          });
          w.once('exit', () => reject(new NodeError('worker_failed', { problem: 'it stopped before it listened (its error is above)' })));
        });
      }),
    );
    const { address, port } = listening[0]!;
    await alongside(stops);
    if (listening.some((l) => l.port !== port)) throw new NodeError('worker_failed', { problem: 'the workers listen on different ports' });
    // After start-up, a worker exiting on its own stops them all (see the module comment).
    let stoppedItself: () => void = () => {};
    const stopped = new Promise<void>((done) => {
      stoppedItself = done;
    });
    for (const w of forked) {
      w.once('exit', (code, signal) => {
        if (closing) return;
        // Exit 0 is a worker that was told to stop (Ctrl-C reaches the whole process group).
        if (code !== 0 || signal) {
          process.stderr.write(
            `error[worker_exited]: serve worker ${w.process.pid} exited (${signal ?? `code ${code}`}); stopping the ${what}\n`,
          );
          process.exitCode = 1;
        }
        void stopAll().then(stoppedItself);
      });
    }
    let closed: Promise<void> | undefined;
    return {
      address,
      port,
      workerPids: forked.map((w) => w.process.pid!),
      stopped,
      close() {
        closed ??= stopAll();
        return closed;
      },
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/**
 * In the primary: fork `workers` copies of this process's entry script (they see
 * `isServeWorker()` and call `serveNode` with the same options), wait until every one listens
 * on the shared port, and return the node's address. Rejects when a worker fails to start.
 */
export async function serveNodeCluster(
  o: Omit<ServeNodeOptions, 'log' | 'bookingLog' | 'onError' | 'clock'>,
  workers: number,
): Promise<ServedCluster> {
  checkWorkers(workers);
  const domain = await withNodeStore(o, async (store) => (await store.nodeInfo()).canonical_domain);
  const tls = await loadServeTls(o, domain);
  const served = await forkServeWorkers(workers, 'node', async (stops) => {
    // The primary syncs the calendar feeds, once for the node (workers never do).
    if (o.syncIntervalMs) {
      const sync: CalendarSync = await startNodeCalendarSync({ ...o, intervalMs: o.syncIntervalMs });
      stops.push(() => sync.stop());
    }
    // So does the booking upkeep: hold expiry sweeps and webhook delivery.
    const upkeep: BookingUpkeep = await openNodeBookingUpkeep(o, domain);
    stops.push(() => upkeep.stop());
  });
  return {
    ...served,
    origin: `https://${domain}`,
    canonicalDomain: domain,
    ...(tls?.caFile ? { caFile: tls.caFile, caPem: tls.caPem } : {}),
  };
}
