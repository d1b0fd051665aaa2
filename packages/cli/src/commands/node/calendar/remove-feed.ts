import { removeCalendarFeed } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node calendar remove-feed NAME`: the feed and every range it imported. */
export function registerRemoveFeed(cal: Command): void {
  nodeOptions(
    cal.command('remove-feed').description('remove a calendar feed and every range it imported').argument('<name>', 'the feed name'),
  ).action((name: string, o: NodeOptions) =>
    run(o.json, async () => {
      await removeCalendarFeed({ ...storeOptions(o), name });
      if (o.json) printJson({ removed: name });
      else process.stdout.write(`removed feed ${name} and its imported ranges\n`);
    }),
  );
}
