import { backupNode } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../io.js';
import { backupPassphrase, type NodeOptions, nodeOptions, passphraseOption, storeOptions } from './options.js';

/** `vrp node backup`: one encrypted file with the store snapshot and the keys. */
export function registerBackup(node: Command): void {
  nodeOptions(
    node
      .command('backup')
      .description(
        'write one encrypted file with an online snapshot of the SQLite store and the keys (a PostgreSQL store: keys only, use pg_dump)',
      )
      .requiredOption('--out <file>', 'the backup file to write (mode 0600)')
      .addOption(passphraseOption()),
  ).action((o: NodeOptions & { out: string; passphraseFile?: string }) =>
    run(o.json, async () => {
      const r = await backupNode({ ...storeOptions(o), out: o.out, passphrase: backupPassphrase(o.passphraseFile) });
      if (o.json) printJson(r);
      else process.stdout.write(`backed up ${r.canonical_domain} to ${r.out} (${r.files.length} files)${r.note ? `; ${r.note}` : ''}\n`);
    }),
  );
}
