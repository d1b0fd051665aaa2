import type { ToolCallOutcome } from '@vrpkit/gate';
import type { ExampleWorld } from './tools.js';

/** Print what the gate decided (ids, codes, digests — never arguments) and what changed in the world. */
export function printRun(run: { outcomes: ToolCallOutcome[]; final: string }, world: ExampleWorld): void {
  const rows = run.outcomes.map((o) => ({
    tool: o.name,
    call: o.id,
    allow: o.decision.allow,
    code: o.decision.code ?? '',
    invoked: o.invoked,
    digest: o.arguments_digest?.slice(0, 12) ?? '',
  }));
  console.table(rows);
  console.log(`effects: ${world.searches.length} search(es), ${world.outbox.length} email(s), ${world.payouts.length} payout(s)`);
  console.log(`model: ${run.final}`);
}
