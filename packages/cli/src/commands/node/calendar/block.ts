import { addCalendarBlock } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node calendar block`: nights [from, to) blocked by the host, or taken by a booking made elsewhere. */
export function registerBlock(cal: Command): void {
  nodeOptions(
    cal
      .command('block')
      .description('block nights [from, to) (a host block or a booking taken elsewhere)')
      .requiredOption('--from <date>', 'first blocked night YYYY-MM-DD')
      .requiredOption('--to <date>', 'first free night after the block (like a check-out date)')
      .option('--booking', 'record it as a booking rather than a host block')
      .option('--note <text>', 'a note for the host'),
  ).action((o: NodeOptions & { from: string; to: string; booking?: boolean; note?: string }) =>
    run(o.json, async () => {
      const b = await addCalendarBlock({
        ...storeOptions(o),
        from: o.from,
        to: o.to,
        kind: o.booking ? 'booking' : 'block',
        ...(o.note ? { note: o.note } : {}),
      });
      if (o.json) printJson(b);
      else process.stdout.write(`blocked ${b.start_date} → ${b.end_date} (${b.kind} ${b.id})\n`);
    }),
  );
}
