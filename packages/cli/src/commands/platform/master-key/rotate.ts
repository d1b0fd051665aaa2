import { loadMasterKey } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform master-key rotate`: re-seal every tenant key under a new master key (resumable). */
export function registerRotate(masterKey: Command): void {
  platformOptions(
    masterKey
      .command('rotate')
      .description('re-seal every tenant private key under a new master key (resumable; serve with both keys meanwhile)')
      .requiredOption('--new-master-key-file <file>', 'file holding the new master key'),
    { masterKey: true },
  ).action((o: PlatformOptions & { newMasterKeyFile: string }) =>
    run(o.json, async () => {
      const from = loadMasterKey(o.masterKeyFile);
      const to = loadMasterKey(o.newMasterKeyFile);
      const r = await withStore(o, (s) => s.rotateMasterKey(from, to, (n) => process.stderr.write(`re-sealed ${n} keys\n`)));
      if (o.json) printJson({ ...r, master_key_id: to.id });
      else process.stdout.write(`re-sealed ${r.resealed} keys under master key ${to.id}\n`);
    }),
  );
}
