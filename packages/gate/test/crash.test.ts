/**
 * T-G as a real crash test (seed: "kill the host after consume and before invoke; on restart
 * do not invoke again"). A child host dispatches side-effecting acts through the Gate on a
 * SQLite file; it is SIGKILLed between consume and invoke, after invoke before the result is
 * recorded, and at random moments — then restarted with the same acts. Across every
 * iteration the tool (an fsync'd append to a side-effect file) has run at most once per act.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteStore } from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { spawnProc } from './procs/spawn.js';

const ITERATIONS_PER_MODE = 10;
const ACTS_PER_ITERATION = 4;

function sideEffectCounts(file: string): Map<string, number> {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {}
  const counts = new Map<string, number>();
  for (const line of text.split('\n').filter(Boolean)) counts.set(line, (counts.get(line) ?? 0) + 1);
  return counts;
}

type Mode = 'after-consume' | 'after-invoke' | 'after-outcome' | 'random';

/** The journal states of an iteration's acts right after the kill, e.g. `E,E,C,-` (E effectuated, I invoked, C consumed, - none). */
async function whereKilled(db: string, acts: string[]): Promise<string> {
  const store = await openSqliteStore(db);
  try {
    const mark = { CONSUMED: 'C', INVOKED: 'I', EFFECTUATED: 'E', FAILED: 'F', EFFECT_RESULT_UNKNOWN: 'U', REFUSED: 'R' } as const;
    const marks = await Promise.all(
      acts.map(async (id) => {
        const j = await store.journal.get(id);
        return j ? mark[j.state] : '-';
      }),
    );
    return marks.join(',');
  } finally {
    await store.close();
  }
}

async function crashLoop(mode: Mode) {
  const dir = tmpDir(`crash-${mode}`);
  const db = join(dir, 'gate.db');
  const sideEffect = join(dir, 'side-effects.log');
  const allActs: string[] = [];
  const landed: string[] = [];
  // Random kills are spread over the dispatch loop's measured duration (a calibration run of the same loop).
  let loopMs = 0;
  if (mode === 'random') {
    const calib = Array.from({ length: ACTS_PER_ITERATION }, (_, k) => `calibration-${k}`);
    allActs.push(...calib);
    const c = spawnProc('crash-dispatch', { db, sideEffect, acts: calib });
    await c.waitFor('READY');
    const t = performance.now();
    await c.waitFor('DONE ');
    loopMs = performance.now() - t;
    await c.exited;
  }
  for (let it = 0; it < ITERATIONS_PER_MODE; it++) {
    const acts = Array.from({ length: ACTS_PER_ITERATION }, (_, k) => `${mode}-${it}-${k}`);
    allActs.push(...acts);
    const target = acts[Math.floor(Math.random() * acts.length)]!;
    const crash = mode === 'random' ? undefined : { point: mode, act: target };
    const first = spawnProc('crash-dispatch', { db, sideEffect, acts, crash });
    if (crash) {
      await first.waitFor(`AT ${mode} ${target}`);
    } else {
      await first.waitFor('READY');
      await new Promise((r) => setTimeout(r, Math.random() * loopMs));
    }
    first.proc.kill('SIGKILL');
    const died = await first.exited;
    if (crash) expect(died.signal).toBe('SIGKILL');
    else landed.push(await whereKilled(db, acts));

    // Restart: the same host identity retries the same acts.
    const second = spawnProc('crash-dispatch', { db, sideEffect, acts });
    const done = await second.waitFor('DONE ');
    expect((await second.exited).code).toBe(0);
    const outcomes = JSON.parse(done.slice(5)) as Record<string, string>;

    const counts = sideEffectCounts(sideEffect);
    const store = await openSqliteStore(db);
    try {
      for (const id of acts) {
        const n = counts.get(id) ?? 0;
        const j = await store.journal.get(id);
        // At most once per act, always.
        expect(n, `side effects of ${id}`).toBeLessThanOrEqual(1);
        // Whatever ran is in the journal; whatever is effectuated ran exactly once.
        if (n === 1) expect(j, `journal of ${id}`).toBeDefined();
        if (j?.state === 'EFFECTUATED') expect(n).toBe(1);
        expect(['EFFECTUATED', 'EFFECT_RESULT_UNKNOWN']).toContain(j?.state);
        if (j?.state === 'EFFECT_RESULT_UNKNOWN') expect(outcomes[id]).toBe('denied:EF_EFFECT_RESULT_UNKNOWN');
      }
      if (crash?.point === 'after-outcome') {
        // The outcome's commit does not wait for the disk, yet a killed process loses nothing:
        // the result is recorded and the retry gets it back (replayed), never a second invoke.
        expect((await store.journal.get(target))?.state).toBe('EFFECTUATED');
        expect(counts.get(target)).toBe(1);
        expect(outcomes[target]).toBe('replayed');
      } else if (crash) {
        const j = await store.journal.get(target);
        expect(j?.state).toBe('EFFECT_RESULT_UNKNOWN');
        // Between consume and invoke: the tool never ran. After invoke: it ran once and is not re-run.
        expect(counts.get(target) ?? 0).toBe(mode === 'after-consume' ? 0 : 1);
        // The INVOKED mark commits with the consume (one commit before invoke), so it is there in both windows.
        expect(j?.invoked_at).not.toBeNull();
      }
    } finally {
      await store.close();
    }
  }
  // Where the random kills landed (informative: the deterministic modes pin the two crash windows).
  if (mode === 'random') console.info(`[T-G random] journal rows per act at the kill: ${landed.join(' ')}`);
  // Over the whole run, across all iterations and restarts: no act ran twice.
  const counts = sideEffectCounts(sideEffect);
  for (const id of allActs) expect(counts.get(id) ?? 0).toBeLessThanOrEqual(1);
  expect([...counts.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
}

describe('T-G: crash between consume and invoke, and after invoke, never invokes twice', () => {
  it(`SIGKILL after the consume committed, before invoke (${ITERATIONS_PER_MODE} iterations)`, () => crashLoop('after-consume'), 240_000);
  it(`SIGKILL after invoke, before the result is recorded (${ITERATIONS_PER_MODE} iterations)`, () => crashLoop('after-invoke'), 240_000);
  it(`SIGKILL right after the outcome was recorded (${ITERATIONS_PER_MODE} iterations)`, () => crashLoop('after-outcome'), 240_000);
  it(`SIGKILL at random points of the dispatch loop (${ITERATIONS_PER_MODE} iterations)`, () => crashLoop('random'), 240_000);
});

afterAll(removeTmpDirs);
