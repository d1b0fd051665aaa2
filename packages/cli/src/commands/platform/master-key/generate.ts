import { existsSync, writeFileSync } from 'node:fs';
import { generateMasterKeyText, loadMasterKey } from '@vrpkit/platform';
import type { Command } from 'commander';
import { CliError } from '../../../errors.js';
import { printJson, run } from '../../../io.js';
import { jsonOption } from '../../../options.js';

/** `vrp platform master-key generate`: a fresh random master key in a new file (mode 0600). */
export function registerGenerate(masterKey: Command): void {
  masterKey
    .command('generate')
    .description('write a fresh random master key to a new file (mode 0600)')
    .requiredOption('--out <file>', 'file to create (never overwritten)')
    .addOption(jsonOption())
    .action((o: { out: string; json?: boolean }) =>
      run(o.json, async () => {
        if (existsSync(o.out)) throw new CliError('file_exists', { file: o.out });
        writeFileSync(o.out, generateMasterKeyText(), { mode: 0o600, flag: 'wx' });
        const id = loadMasterKey(o.out).id;
        if (o.json) printJson({ file: o.out, master_key_id: id });
        else process.stdout.write(`wrote master key ${id} to ${o.out}\n`);
      }),
    );
}
