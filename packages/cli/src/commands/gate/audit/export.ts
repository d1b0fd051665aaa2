import type { Clock } from '@vrpkit/core';
import { exportAudit } from '@vrpkit/gate';
import type { Command } from 'commander';
import { usage } from '../../../errors.js';
import { run } from '../../../io.js';
import { closing, type GateStoreOptions, openStore, parseSince, storeOption } from '../options.js';

/** `vrp gate audit export`: the entries in chain order, one JSON object per line (digests and codes only). */
export function registerExport(audit: Command, clock: Clock): void {
  storeOption(
    audit
      .command('export')
      .description('stream audit entries in chain order, one JSON object per line (digests and codes only, never arguments)')
      .option('--since <when>', 'only entries since this time: a duration back from now (30m, 24h, 7d) or an ISO date')
      .option('--format <format>', 'output format (jsonl)', 'jsonl'),
  ).action((o: GateStoreOptions & { since?: string; format: string }) =>
    run(o.json, async () => {
      if (o.format !== 'jsonl') throw usage(`--format must be jsonl, got ${o.format}`);
      const since = o.since === undefined ? undefined : parseSince(o.since, clock.now());
      let n = 0;
      await closing(openStore(o, false), async (store) => {
        for await (const e of exportAudit(store.audit, since === undefined ? {} : { since })) {
          n += 1;
          // Respect back-pressure: a slow reader (a pipe) holds the next page, not the whole log.
          if (!process.stdout.write(`${JSON.stringify(e)}\n`)) await new Promise((r) => process.stdout.once('drain', r));
        }
      });
      if (!o.json) process.stderr.write(`exported ${n} entries\n`);
    }),
  );
}
