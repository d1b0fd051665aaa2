/**
 * Cross-process race child: opens its own store connection and Gate, prints READY, waits
 * for `GO` on stdin (a barrier so all racers start together), enforces the shared act once
 * and prints the decision as JSON.
 *
 * argv[2]: JSON { store: { sqlite: string } | { postgres: string, schema: string }, act, args, instance }
 */
import { createInterface } from 'node:readline';
import type { AgentCandidateAct } from '@vrpkit/gate';
import { type ChildStoreConfig, childGate } from './common.js';

interface Config {
  store: ChildStoreConfig;
  act: AgentCandidateAct;
  args: unknown;
  instance: string;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;
// Connected and started up before the barrier.
const gate = await childGate(cfg.store, cfg.instance, { poolSize: 1 });
process.stdout.write('READY\n');
const rl = createInterface({ input: process.stdin });
for await (const line of rl) if (line.trim() === 'GO') break;
rl.close();
const decision = await gate.enforce(cfg.act, cfg.args);
process.stdout.write(`RESULT ${JSON.stringify(decision)}\n`);
await gate.close();
