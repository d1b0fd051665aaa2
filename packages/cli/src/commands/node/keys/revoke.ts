import { revokeKey } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node keys revoke KID`: out of the JWKS at once (compromise); every offer it signed stops verifying. */
export function registerRevoke(keys: Command): void {
  nodeOptions(
    keys
      .command('revoke')
      .description('remove a key from the JWKS at once (compromise): every offer it signed stops verifying')
      .argument('<kid>', 'the key id'),
  ).action((kid: string, o: NodeOptions) =>
    run(o.json, async () => {
      const r = await revokeKey({ ...storeOptions(o), kid });
      if (o.json) printJson(r);
      else process.stdout.write(`revoked ${r.kid}${r.new_active_kid ? `; new active key ${r.new_active_kid}` : ''}\n`);
    }),
  );
}
