import { loadMasterKey } from '@vrpkit/platform';
import type { Command } from 'commander';
import { usage } from '../../../errors.js';
import { printJson, run } from '../../../io.js';
import { positiveInt } from '../../../options.js';
import { age, type PlatformOptions, platformOptions, withStore } from '../options.js';

/**
 * `vrp platform keys rotate --older-than AGE`: a new key for every tenant whose key is older; safe
 * while serving. `--domain DOMAIN`: one tenant's key now (what the operator console's "rotate" runs).
 */
export function registerRotate(keys: Command): void {
  platformOptions(
    keys
      .command('rotate')
      .description(
        'rotate the key of every tenant whose key is older than AGE, or of one tenant (--domain); safe while serving and from several machines at once',
      )
      .option('--older-than <age>', 'a key age with its unit: 90d, 12h, 30m or 45s', age)
      .option('--domain <domain>', "rotate this one tenant's key now")
      .option('--batch <n>', 'tenants per transaction', positiveInt, 100),
    { masterKey: true },
  ).action((o: PlatformOptions & { olderThan?: number; domain?: string; batch: number }) =>
    run(o.json, async () => {
      if ((o.olderThan === undefined) === (o.domain === undefined)) throw usage('give one of --older-than AGE or --domain DOMAIN');
      const master = loadMasterKey(o.masterKeyFile);
      const domain = o.domain;
      if (domain !== undefined) {
        const r = await withStore(o, async (s) => {
          await s.assertMasterKey(master);
          return s.rotateTenantKey(master, domain);
        });
        if (o.json) printJson({ domain, kid: r.kid, retired: r.retired });
        else process.stdout.write(`rotated ${domain}: ${r.kid} signs now\n`);
        return;
      }
      const olderThan = o.olderThan ?? 0;
      const r = await withStore(o, (s) =>
        s.rotateKeysOlderThan(master, s.clock.now() - olderThan, o.batch, (n) => process.stderr.write(`rotated ${n}\n`)),
      );
      if (o.json) printJson({ rotated: r.rotated.length, domains: r.rotated });
      else process.stdout.write(`rotated ${r.rotated.length} tenant keys\n`);
    }),
  );
}
