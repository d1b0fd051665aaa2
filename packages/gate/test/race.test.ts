/**
 * Cross-process race (issue 6): N processes enforce the same authority at the same moment,
 * each with its own connection, on SQLite and on PostgreSQL; exactly one is allowed.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Gate, type GateStore, loadPolicy, openPostgresStore, openSqliteStore } from '@vrpkit/gate';
import { testPgUrl } from '@vrpkit/testkit/pg';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';
import { spawnProc } from './procs/spawn.js';

const RACERS = 6;
const ROUNDS = 2;
const PG_URL = testPgUrl('gate race', 'the PostgreSQL cross-process race');

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

describe('cross-process race: exactly one allow', () => {
  it(`SQLite: ${RACERS} processes enforce one authority at once (${ROUNDS} rounds)`, async () => {
    const file = join(tmpDir('race'), 'gate.db');
    const store = await openSqliteStore(file);
    try {
      await race(store, { sqlite: file });
    } finally {
      await store.close();
    }
  }, 180_000);

  it.skipIf(!PG_URL)(
    `PostgreSQL: ${RACERS} processes enforce one authority at once (${ROUNDS} rounds)`,
    async () => {
      const schema = `gate_race_${randomBytes(5).toString('hex')}`;
      const store = await openPostgresStore(PG_URL!, { schema });
      try {
        await race(store, { postgres: PG_URL, schema });
      } finally {
        await store.close();
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
      }
    },
    180_000,
  );
});

afterAll(removeTmpDirs);
