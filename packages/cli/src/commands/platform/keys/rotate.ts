import { loadMasterKey } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { positiveInt } from '../../../options.js';
import { age, type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform keys rotate --older-than AGE`: a new key for every tenant whose key is older; safe while serving. */
export function registerRotate(keys: Command): void {
  platformOptions(
    keys
      .command('rotate')
      .description('rotate the key of every tenant whose key is older than AGE; safe while serving and from several machines at once')
      .requiredOption('--older-than <age>', 'a key age with its unit: 90d, 12h, 30m or 45s', age)
      .option('--batch <n>', 'tenants per transaction', positiveInt, 100),
    { masterKey: true },
  ).action((o: PlatformOptions & { olderThan: number; batch: number }) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const r = await withStore(o, (s) =>
        s.rotateKeysOlderThan(master, s.clock.now() - o.olderThan, o.batch, (n) => process.stderr.write(`rotated ${n}\n`)),
      );
      if (o.json) printJson({ rotated: r.rotated.length, domains: r.rotated });
      else process.stdout.write(`rotated ${r.rotated.length} tenant keys\n`);
    }),
  );
}
