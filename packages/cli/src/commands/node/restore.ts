import { restoreNode } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../io.js';
import { backupPassphrase, type NodeOptions, nodeOptions, passphraseOption } from './options.js';

/** `vrp node restore`: a backup into a new data directory, checked and decrypted before anything is written. */
export function registerRestore(node: Command): void {
  nodeOptions(
    node
      .command('restore')
      .description('restore a backup into a new data directory (checked and decrypted before anything is written)')
      .requiredOption('--in <file>', 'the backup file')
      .addOption(passphraseOption()),
    { dataDir: 'data directory to create (must not exist or be empty)' },
  ).action((o: NodeOptions & { in: string; passphraseFile?: string }) =>
    run(o.json, async () => {
      const r = restoreNode({ dataDir: o.dataDir, in: o.in, passphrase: backupPassphrase(o.passphraseFile) });
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `restored ${r.canonical_domain} (backup of ${r.created_at}) into ${r.data_dir}${r.note ? `; ${r.note}` : ''}\n`,
        );
    }),
  );
}
