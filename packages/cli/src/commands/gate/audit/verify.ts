import { verifyAuditChain } from '@vrpkit/gate';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { closing, type GateStoreOptions, openStore, storeOption } from '../options.js';
import { type AuditTrustOptions, auditTrustOptions, verifyOptionsOf } from './trust.js';

/** `vrp gate audit verify`: walk the hash chain; exit 0 when intact, else 1 naming the first bad entry and why. */
export function registerVerify(audit: Command): void {
  storeOption(
    auditTrustOptions(
      audit
        .command('verify')
        .description('walk the hash chain from its first entry; exit 0 when intact, else 1 naming the first bad entry and why')
        .option('--anchor <file>', 'also check the chain against the checkpoints `vrp gate audit anchor` appended to this file'),
    ),
  ).action((o: GateStoreOptions & AuditTrustOptions & { anchor?: string }) =>
    run(o.json, async () => {
      const opts = verifyOptionsOf(o, o.anchor);
      await closing(openStore(o, false), async (store) => {
        const r = await verifyAuditChain(store.audit, opts);
        if (o.json) printJson(r);
        if (r.ok) {
          if (!o.json)
            process.stdout.write(
              `audit chain intact: ${r.entries} entries, head ${r.head.hash}, ${r.checkpoints} signed checkpoints (last at ${r.last_checkpoint_seq ?? 'none'})${o.anchor === undefined ? '' : `, ${r.anchored} anchored`}\n`,
            );
          return;
        }
        if (!o.json) process.stderr.write(`error[audit_${r.problem}]: entry ${r.seq} ${r.problem}: ${r.reason}\n`);
        process.exitCode = 1;
      });
    }),
  );
}
