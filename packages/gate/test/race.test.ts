/**
 * Cross-process race (issue 6): N processes enforce the same authority at the same moment,
 * each with its own connection, on SQLite and on PostgreSQL; exactly one is allowed.
 */
import { randomBytes } from 'node:crypto';
import { Gate, type GateStore, loadPolicy } from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';
import { spawnProc } from './procs/spawn.js';
import { storeBackends } from './store-backends.js';

const RACERS = 6;
const ROUNDS = 2;

async function race(store: GateStore, storeConfig: unknown): Promise<void> {
  const gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, instanceId: 'race-issuer' });
  for (let round = 0; round < ROUNDS; round++) {
    const args = { q: `race-${round}` };
    const act = makeAct({ id: `race-${round}-${randomBytes(4).toString('hex')}`, args, policy_state: await gate.policyState() });
    expect((await gate.authorize(act)).status).toBe('issued');
    const racers = Array.from({ length: RACERS }, (_, i) =>
      spawnProc('race-enforce', { store: storeConfig, act, args, instance: `racer-${i}` }),
    );
    try {
      await Promise.all(racers.map((r) => r.waitFor('READY')));
      for (const r of racers) r.proc.stdin!.write('GO\n');
      const decisions = await Promise.all(racers.map(async (r) => JSON.parse((await r.waitFor('RESULT ')).slice(7))));
      const allowed = decisions.filter((d) => d.allow);
      expect(allowed, JSON.stringify(decisions)).toHaveLength(1);
      expect(decisions.filter((d) => !d.allow).map((d) => d.code)).toEqual(Array(RACERS - 1).fill('EF_005'));
      const journal = await store.journal.get(act.candidate_act_id);
      expect(journal?.state).toBe('CONSUMED');
      expect(journal?.authority_id).toBe(allowed[0].authority_id);
    } finally {
      for (const r of racers) if (r.proc.exitCode === null) r.proc.kill('SIGKILL');
      await Promise.all(racers.map((r) => r.exited));
    }
  }
}

const backends = storeBackends('the cross-process race', tmpDir('race'), 'gate_race');

describe('cross-process race: exactly one allow', () => {
  for (const b of backends) {
    it.skipIf(b.skip)(
      `${b.name}: ${RACERS} processes enforce one authority at once (${ROUNDS} rounds)`,
      async () => {
        const db = await b.fresh();
        const store = await db.open({ poolSize: 10 });
        try {
          await race(store, db.config);
        } finally {
          await store.close();
          await db.drop();
        }
      },
      180_000,
    );
  }
});

afterAll(removeTmpDirs);
