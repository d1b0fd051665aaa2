/**
 * Concurrent audit writer child: its own store connection and Gate, prints READY, waits for
 * `GO`, then dispatches `count` acts (each appends allow, issued, consumed, invoked, result)
 * and prints DONE.
 *
 * argv[2]: JSON { store: { sqlite: string } | { postgres: string, schema: string }, instance, count }
 */
import { createInterface } from 'node:readline';
import { type ChildStoreConfig, childGate, makeAct } from './common.js';

interface Config {
  store: ChildStoreConfig;
  instance: string;
  count: number;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;
const gate = await childGate(cfg.store, cfg.instance, { poolSize: 2, gate: { auditCheckpointEvery: 7 } });
const policy_state = await gate.policyState();
process.stdout.write('READY\n');
const rl = createInterface({ input: process.stdin });
for await (const line of rl) if (line.trim() === 'GO') break;
rl.close();
let invoked = 0;
for (let i = 0; i < cfg.count; i++) {
  const args = { q: `${cfg.instance}-${i}` };
  const act = makeAct({ id: `${cfg.instance}-act-${i}`, args, policy_state });
  const r = await gate.dispatch(act, args, async () => 'ok');
  if (r.invoked) invoked += 1;
}
await gate.close();
process.stdout.write(`DONE ${invoked}\n`);
