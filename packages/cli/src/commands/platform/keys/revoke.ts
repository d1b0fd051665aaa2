import { loadMasterKey } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform keys revoke DOMAIN KID`: at once; a revoked signing key is replaced first. */
export function registerRevoke(keys: Command): void {
  platformOptions(
    keys
      .command('revoke')
      .description(
        'revoke a tenant key at once (a revoked signing key is replaced first); returns once no serving process signs with it or publishes it (at most 5 s on PostgreSQL)',
      )
      .argument('<domain>')
      .argument('<kid>'),
    { masterKey: true },
  ).action((domain: string, kid: string, o: PlatformOptions) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const r = await withStore(o, (s) => s.revokeTenantKey(master, domain, kid));
      if (o.json) printJson(r);
      else process.stdout.write(`revoked ${r.kid}${r.new_active_kid ? `; ${r.new_active_kid} signs now` : ''}\n`);
    }),
  );
}
