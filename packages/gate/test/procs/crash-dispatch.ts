/**
 * T-G child: a host that dispatches side-effecting acts through the real Gate on a SQLite
 * file. The tool appends `<act id>\n` to a side-effect file and fsyncs it. The parent
 * SIGKILLs this process at a crash point (it announces `AT <point> <act id>` and blocks) or
 * at a random moment, restarts it, and checks the tool ran at most once per act.
 *
 * argv[2]: JSON { db, sideEffect, acts: string[], crash?: { point: 'after-consume' | 'after-invoke', act: string } }
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { Gate, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { makeAct, SIGNING_KEY, SINK, TEST_POLICY } from './common.js';

interface Config {
  db: string;
  sideEffect: string;
  acts: string[];
  crash?: { point: 'after-consume' | 'after-invoke' | 'after-outcome'; act: string };
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;

/** Announce the crash point and block this thread until the parent's SIGKILL arrives. */
function stopHere(point: string, act: string): void {
  writeSync(1, `AT ${point} ${act}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
  process.exit(3); // only reached if nobody killed us
}

function appendDurably(file: string, line: string): void {
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, line);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const store = await openSqliteStore(cfg.db);
const gate = new Gate({
  store,
  policy: loadPolicy(TEST_POLICY),
  sinkId: SINK,
  signingKey: SIGNING_KEY,
  // One host identity across restarts: its unfinished acts are recovered as EFFECT_RESULT_UNKNOWN.
  instanceId: 'crash-host',
  onEvent: (e) => {
    if (e.type === 'journal' && e.state === 'CONSUMED' && cfg.crash?.point === 'after-consume' && e.candidate_act_id === cfg.crash.act)
      stopHere('after-consume', e.candidate_act_id);
  },
});
const policyState = await gate.policyState();
writeSync(1, 'READY\n');

const outcomes: Record<string, string> = {};
for (const id of cfg.acts) {
  const args = { act: id };
  const act = makeAct({ id, tool: 'side_effect', args, policy_state: policyState });
  const r = await gate.dispatch(act, args, async () => {
    appendDurably(cfg.sideEffect, `${id}\n`);
    if (cfg.crash?.point === 'after-invoke' && cfg.crash.act === id) stopHere('after-invoke', id);
    return { wrote: id };
  });
  // The outcome was committed without waiting for the disk (durable across a process crash only).
  if (cfg.crash?.point === 'after-outcome' && cfg.crash.act === id) stopHere('after-outcome', id);
  outcomes[id] = r.invoked ? 'invoked' : r.replayed ? 'replayed' : `denied:${r.decision.code}`;
}
writeSync(1, `DONE ${JSON.stringify(outcomes)}\n`);
await gate.close();
