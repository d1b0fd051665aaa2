/**
 * Cross-process race child: opens its own store connection and Gate, prints READY, waits
 * for `GO` on stdin (a barrier so all racers start together), enforces the shared act once
 * and prints the decision as JSON.
 *
 * argv[2]: JSON { store: { sqlite: string } | { postgres: string, schema: string }, act, args, instance }
 */
import { createInterface } from 'node:readline';
import { type AgentCandidateAct, Gate, type GateStore, loadPolicy, openPostgresStore, openSqliteStore } from '@vrpkit/gate';
import { SIGNING_KEY, SINK, TEST_POLICY } from './common.js';

interface Config {
  store: { sqlite: string } | { postgres: string; schema: string };
  act: AgentCandidateAct;
  args: unknown;
  instance: string;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;
const store: GateStore =
  'sqlite' in cfg.store
    ? await openSqliteStore(cfg.store.sqlite)
    : await openPostgresStore(cfg.store.postgres, { schema: cfg.store.schema, poolSize: 1 });
const gate = new Gate({
  store,
  policy: loadPolicy(TEST_POLICY),
  sinkId: SINK,
  signingKey: SIGNING_KEY,
  instanceId: cfg.instance,
  policyTimeoutMs: 10_000,
});
await gate.policyState(); // connect and run start-up before the barrier
process.stdout.write('READY\n');
const rl = createInterface({ input: process.stdin });
for await (const line of rl) if (line.trim() === 'GO') break;
rl.close();
const decision = await gate.enforce(cfg.act, cfg.args);
process.stdout.write(`RESULT ${JSON.stringify(decision)}\n`);
await gate.close();
