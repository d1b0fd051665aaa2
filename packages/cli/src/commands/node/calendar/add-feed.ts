import { addCalendarFeed } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node calendar add-feed`: an iCal feed from an https URL or a file, imported by `calendar sync`. */
export function registerAddFeed(cal: Command): void {
  nodeOptions(
    cal
      .command('add-feed')
      .description('add an iCal (.ics) feed from an https URL or a file; `calendar sync` imports it')
      .requiredOption('--name <name>', 'a short name for the feed, e.g. airbnb')
      .option('--url <url>', 'https URL of the feed')
      .option('--file <file>', 'path of an .ics file (stored as an absolute path; it must exist)'),
  ).action((o: NodeOptions & { name: string; url?: string; file?: string }) =>
    run(o.json, async () => {
      const feed = await addCalendarFeed({
        ...storeOptions(o),
        name: o.name,
        ...(o.url ? { url: o.url } : {}),
        ...(o.file ? { file: o.file } : {}),
      });
      if (o.json) printJson({ added: o.name, ...(feed.file ? { file: feed.file } : {}) });
      else process.stdout.write(`added feed ${o.name}${feed.file ? ` (${feed.file})` : ''}; run \`vrp node calendar sync\` to import it\n`);
    }),
  );
}
