import { anchorCheckpoints } from '@vrpkit/gate';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { closing, type GateStoreOptions, openStore, storeOption } from '../options.js';
import { type AuditTrustOptions, auditTrustOptions, verifyOptionsOf } from './trust.js';

/**
 * `vrp gate audit anchor --to FILE`: append each signed checkpoint not yet anchored to FILE
 * (opened append-only), after the chain verifies; exit 1, anchoring nothing, when it does not.
 * FILE belongs where the store's writer cannot rewrite it (another host or mount); run this
 * after each stop of the gate and on a schedule (docs/security.md "Audit anchoring").
 */
export function registerAnchor(audit: Command): void {
  storeOption(
    auditTrustOptions(
      audit
        .command('anchor')
        .description('append every new signed checkpoint to an append-only file outside the store (after the chain verifies)')
        .requiredOption('--to <file>', 'the anchor file: opened append-only, created if missing'),
    ),
  ).action((o: GateStoreOptions & AuditTrustOptions & { to: string }) =>
    run(o.json, async () => {
      const opts = verifyOptionsOf(o);
      await closing(openStore(o, false), async (store) => {
        const r = await anchorCheckpoints(store.audit, o.to, opts);
        if (o.json) printJson(r);
        if (r.ok) {
          if (!o.json)
            process.stdout.write(`anchored ${r.appended} checkpoints to ${o.to} (newest anchored: ${r.last_anchored_seq ?? 'none'})\n`);
          return;
        }
        if (!o.json) process.stderr.write(`error[audit_${r.problem}]: entry ${r.seq} ${r.problem}: ${r.reason}; nothing was anchored\n`);
        process.exitCode = 1;
      });
    }),
  );
}
