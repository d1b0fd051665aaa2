/**
 * Group-commit crash child: enforces a stream of authorized acts with several concurrent
 * enforcers over one store (so their consumes are committed in groups), and writes `ACK <act id>`
 * the moment an enforce allowed (`DENY <act id> <code>` otherwise) and `GROUP <n>` for every group
 * committed. The parent SIGKILLs it in the middle of the stream and checks on restart that every
 * acknowledged consume is there and none is granted twice.
 *
 * argv[2]: JSON { store: { sqlite: string } | { postgres: string, schema: string }, acts: file of [{ act, args }], enforcers, instance }
 */
import { readFileSync, writeSync } from 'node:fs';
import type { AgentCandidateAct } from '@vrpkit/gate';
import { type ChildStoreConfig, childGate } from './common.js';

interface Config {
  store: ChildStoreConfig;
  acts: string;
  enforcers: number;
  instance: string;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;
const acts = JSON.parse(readFileSync(cfg.acts, 'utf8')) as { act: AgentCandidateAct; args: unknown }[];
// Synchronous writes: a line is out before the next step runs, so a kill loses no line already due.
const say = (line: string) => void writeSync(1, `${line}\n`);
const gate = await childGate(cfg.store, cfg.instance, { poolSize: cfg.enforcers, onGroupCommit: (n) => say(`GROUP ${n}`) });
say('READY');
let next = 0;
await Promise.all(
  Array.from({ length: cfg.enforcers }, async () => {
    while (next < acts.length) {
      const { act, args } = acts[next++]!;
      const d = await gate.enforce(act, args);
      say(d.allow ? `ACK ${act.candidate_act_id}` : `DENY ${act.candidate_act_id} ${d.code}`);
    }
  }),
);
say('DONE');
await gate.close();
