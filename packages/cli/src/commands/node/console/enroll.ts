import { enrollConsole } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions } from '../options.js';

/** `vrp node console enroll`: print a one-time link that enrolls a passkey for the host console. */
export function registerEnroll(console: Command): void {
  nodeOptions(
    console.command('enroll').description('print a one-time link (valid 15 minutes) that enrolls a passkey for the host console'),
  ).action((o: NodeOptions) =>
    run(o.json, async () => {
      const e = enrollConsole({ dataDir: o.dataDir });
      if (o.json) printJson(e);
      else
        process.stdout.write(
          `${e.complete ? 'open this link' : 'open this path on the host console'} once, before ${e.expires_at}, to enroll a passkey:\n  ${e.link}\n`,
        );
    }),
  );
}
