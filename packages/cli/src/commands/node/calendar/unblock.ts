import { removeCalendarBlock } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node calendar unblock ID`: remove a host block or booking. */
export function registerUnblock(cal: Command): void {
  nodeOptions(
    cal.command('unblock').description('remove a host block or booking by id (see `calendar list`)').argument('<id>', 'the block id'),
  ).action((id: string, o: NodeOptions) =>
    run(o.json, async () => {
      await removeCalendarBlock({ ...storeOptions(o), id });
      if (o.json) printJson({ removed: id });
      else process.stdout.write(`removed block ${id}\n`);
    }),
  );
}
