/**
 * WAL checkpoints off the write path. In WAL mode SQLite copies the log back into the database
 * file (a checkpoint, with an fsync of that file) inside whichever COMMIT first finds the log
 * over `wal_autocheckpoint` pages. An act's transaction writes about ten pages, so every hundredth
 * consume paid a checkpoint of the whole log: milliseconds, at exactly the 99th percentile
 * (bench/gate: enforce p99 over five times the raw durable compare-and-swap's). Here a worker
 * thread with a connection of its own runs `PRAGMA wal_checkpoint(PASSIVE)`, which never waits
 * for a reader or the writer, once every `CHECKPOINT_EVERY_COMMITS` commits; the store's
 * connection keeps a high `wal_autocheckpoint` only as a backstop. Counted in commits, not time:
 * a timer (every 50 ms while commits came in) checkpointed a proxy's slow trickle of calls every
 * dozen commits, each time fsyncing the database file, and cost it 0.4 ms of CPU per call
 * (bench/gateway, stdio enforce) against SQLite's own once-per-1000-pages. Durability is
 * unchanged: a COMMIT is durable once the log is fsync'd (`synchronous = FULL`), whoever copies
 * it into the database file later. Should the worker fail, the store's connection checkpoints
 * in its commits again, as SQLite does by default.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/**
 * Commits between two background checkpoints. A commit of the gate writes 5–20 pages, so this
 * checkpoints about as often as SQLite's default 1000-page threshold would.
 */
export const CHECKPOINT_EVERY_COMMITS = 64;
/** The store connection's own `wal_autocheckpoint` while the worker runs: about 40 MB of log, a backstop. */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 10_000;
/** SQLite's default, restored when the worker is gone. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

/**
 * The worker, CommonJS evaluated from this string (so it runs the same from the TypeScript
 * sources and the built package): on each request it checkpoints once, then reports back. A
 * busy database (another checkpoint, another process) is skipped: the next request tries again.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    process.exit(0);
  }
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
  parentPort.postMessage(0);
});
`;

export interface Checkpointer {
  /** Call after a commit: every `CHECKPOINT_EVERY_COMMITS`th asks for a checkpoint (or the next, if one is running). */
  committed(): void;
  stop(): Promise<void>;
}

/** Move `raw`'s checkpoints (a file database in WAL mode) to a worker thread. */
export function startCheckpointer(raw: Database.Database, file: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file } });
  // Never what keeps a process alive; nor a reason for it to exit.
  worker.unref();
  raw.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  let pending = false;
  let alive = true;
  let stopped: Promise<void> | undefined;
  const gone = () => {
    if (!alive) return;
    alive = false;
    if (raw.open) raw.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  };
  /** Commits since the last checkpoint was asked for. */
  let commits = 0;
  const request = () => {
    pending = true;
    commits = 0;
    worker.postMessage(0);
  };
  worker.on('message', () => {
    pending = false;
    if (commits >= CHECKPOINT_EVERY_COMMITS && alive) request();
  });
  let ended = false;
  worker.on('error', gone);
  worker.on('exit', () => {
    ended = true;
    gone();
  });
  return {
    committed() {
      if (!alive) return;
      commits++;
      if (!pending && commits >= CHECKPOINT_EVERY_COMMITS) request();
    },
    /** Close the worker's connection and end it (the store's own close checkpoints what is left); once, however often called. */
    stop() {
      alive = false;
      stopped ??= new Promise<void>((resolve) => {
        if (ended) return resolve();
        // Held by the wait for it to end (it is unref'd while it runs).
        worker.ref();
        worker.once('exit', () => resolve());
        worker.postMessage('close');
      });
      return stopped;
    },
  };
}
