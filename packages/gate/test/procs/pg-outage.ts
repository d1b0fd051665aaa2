/**
 * PostgreSQL outage child (issue 36 defect 1): a Gate on a PostgreSQL store whose connections
 * carry `application_name`, so the test can cut exactly them. Prints READY, then for each
 * `CALL <id>` line on stdin dispatches a fresh act and prints `RESULT <id> {allow, code, invoked}`
 * (`invoked`: how many times the tool ran so far — nothing may reach it while the store is away).
 * `QUIT` closes the gate and exits 0.
 *
 * argv[2]: JSON { url, schema, applicationName }
 */
import { createInterface } from 'node:readline';
import { Gate, loadPolicy, openPostgresStore } from '@vrpkit/gate';
import { makeAct, SIGNING_KEY, SINK, TEST_POLICY } from './common.js';

interface Config {
  url: string;
  schema: string;
  applicationName: string;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;
const store = await openPostgresStore(cfg.url, { schema: cfg.schema, applicationName: cfg.applicationName, poolSize: 4, timeoutMs: 2000 });
const gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, policyTimeoutMs: 2000 });
let invoked = 0;
process.stdout.write('READY\n');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [cmd, id] = line.trim().split(' ');
  if (cmd === 'QUIT') break;
  if (cmd !== 'CALL' || !id) continue;
  let out: { allow: boolean; code: string | null };
  try {
    const act = makeAct({ id, policy_state: await gate.policyState() });
    const r = await gate.dispatch(act, { q: 'lisbon' }, async () => {
      invoked++;
      return 'ran';
    });
    out = { allow: r.decision.allow, code: r.decision.code ?? null };
  } catch (e) {
    out = { allow: false, code: String((e as { code?: unknown }).code ?? 'thrown') };
  }
  process.stdout.write(`RESULT ${id} ${JSON.stringify({ ...out, invoked })}\n`);
}
lines.close();
process.stdin.destroy();
await gate.close();
