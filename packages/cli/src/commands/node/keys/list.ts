import { listKeys } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node keys list`: every key with its status and whether the JWKS serves it now. */
export function registerList(keys: Command): void {
  nodeOptions(keys.command('list').description('list keys with status and whether the JWKS serves them now')).action((o: NodeOptions) =>
    run(o.json, async () => {
      const list = await listKeys(storeOptions(o));
      if (o.json) printJson({ keys: list });
      else
        for (const k of list)
          process.stdout.write(
            `${k.kid}  ${k.status}${k.status === 'pending' ? ` (signs from ${k.activates_at})` : ''}${k.published ? '  published' : ''}${k.retain_until ? `  retained until ${k.retain_until}` : ''}\n`,
          );
    }),
  );
}
