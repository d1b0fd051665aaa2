/**
 * Group commit under a crash (issue 37 item 2): a child process enforces a stream of acts with
 * eight concurrent enforcers, so their consumes are committed in groups, and is SIGKILLed in the
 * middle of the stream; then a second child (the restart) enforces every act again. On SQLite
 * and on PostgreSQL: every consume the first child acknowledged is in the store after the kill,
 * none is granted twice across the two runs, every act ends consumed exactly once, and the
 * audit chain verifies.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Gate, type GateStore, loadPolicy, verifyAuditChain } from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';
import { type Child, spawnProc } from './procs/spawn.js';
import { storeBackends } from './store-backends.js';

const ACTS = 160;
const ENFORCERS = 8;
const KILLS = 2;

/** Every stdout line of a child, as it comes. */
function lines(child: Child): string[] {
  const seen: string[] = [];
  let buf = '';
  child.proc.stdout!.on('data', (d) => {
    buf += d;
    const parts = buf.split('\n');
    buf = parts.pop()!;
    seen.push(...parts);
  });
  return seen;
}

const idsOf = (seen: string[], prefix: string) => seen.filter((l) => l.startsWith(prefix)).map((l) => l.split(' ')[1]!);

/** `ACTS` acts authorized in the store (not consumed), written to a file for the children. */
async function authorizedActs(store: GateStore, dir: string, round: number): Promise<{ file: string; ids: string[] }> {
  const gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, instanceId: 'issuer' });
  const policy_state = await gate.policyState();
  const acts = [];
  for (let i = 0; i < ACTS; i++) {
    const args = { q: `stream-${round}-${i}` };
    const act = makeAct({ id: `stream-${round}-${i}`, args, policy_state });
    expect((await gate.authorize(act)).status).toBe('issued');
    acts.push({ act, args });
  }
  const file = join(dir, `acts-${round}.json`);
  writeFileSync(file, JSON.stringify(acts));
  return { file, ids: acts.map((a) => a.act.candidate_act_id) };
}

/** The first child, killed once it acknowledged a random number of consumes (it runs on meanwhile). */
async function killedStream(storeConfig: unknown, file: string, round: number) {
  const child = spawnProc('consume-stream', { store: storeConfig, acts: file, enforcers: ENFORCERS, instance: `stream-${round}-a` });
  const seen = lines(child);
  await child.waitFor('READY');
  const killAfter = 8 + Math.floor(Math.random() * 40);
  await new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (idsOf(seen, 'ACK ').length >= killAfter || child.proc.exitCode !== null) {
        clearInterval(poll);
        resolve();
      }
    }, 1);
  });
  child.proc.kill('SIGKILL');
  const died = await child.exited;
  return { died, seen };
}

const backends = storeBackends('the group-commit crash test', tmpDir('group-crash'), 'gate_group_crash');

describe('group commit: a SIGKILL in the middle of a stream of concurrent consumes', () => {
  for (const b of backends) {
    it.skipIf(b.skip)(
      `${b.name}: no acknowledged consume is lost, none is granted twice on restart (${KILLS} kills)`,
      async () => {
        const db = await b.fresh();
        const dir = tmpDir(`group-crash-${b.name}`);
        try {
          for (let round = 0; round < KILLS; round++) {
            let store = await db.open({ poolSize: 2 });
            const { file, ids } = await authorizedActs(store, dir, round);
            await store.close();

            const first = await killedStream(db.config, file, round);
            expect(first.died.signal, 'killed before the stream ended').toBe('SIGKILL');
            expect(first.seen).not.toContain('DONE');
            // The stream was committed in groups: the kill met group commit, not single consumes.
            expect(Math.max(...first.seen.filter((l) => l.startsWith('GROUP ')).map((l) => Number(l.slice(6))))).toBeGreaterThan(1);
            const acked = new Set(idsOf(first.seen, 'ACK '));
            expect(idsOf(first.seen, 'DENY ')).toEqual([]);

            // After the kill: every acknowledged consume is there.
            store = await db.open({ poolSize: 2 });
            const consumed = new Set<string>();
            for (const id of ids) {
              const a = await store.ledger.getAuthority(id);
              if (a?.state === 'CONSUMED') {
                consumed.add(id);
                expect((await store.journal.get(id))?.owner).toBe(`stream-${round}-a`);
              } else expect(a?.state).toBe('ISSUED');
            }
            for (const id of acked) expect(consumed, `acknowledged ${id}`).toContain(id);
            expect(await verifyAuditChain(store.audit)).toMatchObject({ ok: true });
            await store.close();

            // The restart enforces every act again: only those the first run did not commit are granted.
            const again = spawnProc('consume-stream', {
              store: db.config,
              acts: file,
              enforcers: ENFORCERS,
              instance: `stream-${round}-b`,
            });
            const seen = lines(again);
            await again.waitFor('DONE');
            await again.exited;
            const granted = idsOf(seen, 'ACK ');
            expect(granted.filter((id) => consumed.has(id))).toEqual([]);
            expect(new Set([...granted, ...consumed]).size).toBe(ids.length);
            expect(granted.length + consumed.size).toBe(ids.length);
            const refused = seen.filter((l) => l.startsWith('DENY '));
            expect(refused.map((l) => l.split(' ')[2])).toEqual(Array(consumed.size).fill('EF_005'));
            process.stdout.write(
              `[group-crash ${b.name}] round ${round}: ${acked.size} acknowledged, ${consumed.size} committed before the kill, ${granted.length} granted on restart\n`,
            );
          }
        } finally {
          await db.drop();
        }
      },
      300_000,
    );
  }
});

afterAll(removeTmpDirs);
