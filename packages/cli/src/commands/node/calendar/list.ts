import { listCalendar } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node calendar list`: the feeds with their last sync, and every blocked range. */
export function registerList(cal: Command): void {
  nodeOptions(cal.command('list').description('feeds with their last sync, and every blocked range')).action((o: NodeOptions) =>
    run(o.json, async () => {
      const r = await listCalendar(storeOptions(o));
      if (o.json) return printJson(r);
      for (const f of r.feeds)
        process.stdout.write(
          `feed ${f.name}: ${f.url ?? f.file}  last success ${f.last_success_at ?? 'never'}${f.last_error ? `  last error ${f.last_error}` : ''}\n`,
        );
      for (const b of r.blocks)
        process.stdout.write(
          `${b.id}  ${b.start_date} → ${b.end_date}  ${b.kind}${b.feed_name ? ` (${b.feed_name})` : ''}${b.note ? `  ${b.note}` : ''}\n`,
        );
    }),
  );
}
