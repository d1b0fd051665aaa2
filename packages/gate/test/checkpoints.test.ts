/**
 * WAL checkpoints off the write path (store/sqlite-checkpointer.ts): the SQLite store's commits
 * never copy the log into the database file themselves while its worker thread does it, the
 * log is copied back within moments of the writes, and closing the store (more than once, as a
 * proxy's stop and its caller may) ends the worker. Read from the real file's WAL index.
 */
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { Gate, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

afterAll(removeTmpDirs);

/**
 * Frames in the log (`mxFrame`) and frames of it not yet copied into the database file
 * (`mxFrame − nBackfill`), read from the WAL index (`-shm`; SQLite file format, "The WAL-Index
 * Format": the header's mxFrame at byte 16, the checkpoint information's nBackfill at byte 96,
 * native byte order), without a connection that could itself checkpoint.
 */
function walState(file: string): { log: number; uncopied: number } {
  const shm = readFileSync(`${file}-shm`);
  const le = endianness() === 'LE';
  const u32 = (at: number) => (le ? shm.readUInt32LE(at) : shm.readUInt32BE(at));
  const log = u32(16);
  return { log, uncopied: log - u32(96) };
}

/** Dispatch `n` allowed acts through a gate on `file` (each a few commits of several pages). */
async function dispatchActs(file: string, n: number, checkpoints?: 'inline') {
  const store = await openSqliteStore(file, checkpoints ? { checkpoints } : {});
  const gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY });
  const policy_state = await gate.policyState();
  for (let i = 0; i < n; i++) {
    const args = { q: `act-${i}` };
    const r = await gate.dispatch(makeAct({ id: `ck-${i}`, tool: 'side_effect', args, policy_state }), args, async () => 'done');
    expect(r.invoked).toBe(true);
  }
  return { gate, store };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

describe('SQLite store: WAL checkpoints in a worker thread', () => {
  // Enough acts for well over CHECKPOINT_EVERY_COMMITS commits, far too few pages for SQLite's own 1000-page threshold.
  const ACTS = 40;

  it('copies the log back once enough commits came in, without a commit doing it', async () => {
    const file = join(tmpDir('checkpoints'), 'gate.db');
    const { gate } = await dispatchActs(file, ACTS);
    // The worker has copied the log up to its last checkpoint; what came after waits for the next.
    expect(await until(() => walState(file).uncopied < walState(file).log, 5_000)).toBe(true);
    await gate.close();
  });

  it('inline (the option): the same log stays uncopied below the threshold, as SQLite does by default', async () => {
    const file = join(tmpDir('checkpoints-inline'), 'gate.db');
    const { gate } = await dispatchActs(file, ACTS, 'inline');
    await new Promise((r) => setTimeout(r, 300));
    const { log, uncopied } = walState(file);
    // Nothing checkpoints these acts in their commits, so the worker above is what copied its log.
    expect(log).toBeGreaterThan(0);
    expect(uncopied).toBe(log);
    await gate.close();
  });

  it('closing the store twice ends the worker once and resolves both times', async () => {
    const file = join(tmpDir('checkpoints-close'), 'gate.db');
    const store = await openSqliteStore(file);
    await store.audit.append([{ kind: 'pin', actor: 'test' }], Date.now());
    await store.close();
    await expect(Promise.race([store.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('hung'), 3_000))])).resolves.toBe(
      'closed',
    );
  });
});
