import { listConsolePasskeys, passkeyLabel, removeHostConsolePasskey } from '@vrpkit/node';
import type { Command } from 'commander';
import { CliError } from '../../../errors.js';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions } from '../options.js';

/**
 * `vrp node console passkeys [--json]` lists the host console's passkeys; `vrp node console passkeys
 * remove ID` removes one as the console does (never the last). One command with an optional verb, so
 * `--data-dir` and `--json` read the same in both forms.
 */
export function registerPasskeys(console: Command): void {
  nodeOptions(
    console
      .command('passkeys')
      .description('list the host console’s passkeys; `passkeys remove ID` removes one (not the last)')
      .argument('[verb]', '`remove` to remove the passkey ID')
      .argument('[id]', 'with remove: the passkey’s credential id (from the list)'),
  ).action((verb: string | undefined, id: string | undefined, o: NodeOptions) =>
    run(o.json, async () => {
      if (verb === undefined) {
        const list = listConsolePasskeys({ dataDir: o.dataDir });
        if (o.json) printJson({ passkeys: list.map(({ public_key: _key, counter: _counter, ...p }) => p) });
        else if (list.length === 0) process.stdout.write('no passkeys: run `vrp node console enroll`\n');
        else
          for (const p of list)
            process.stdout.write(`${p.id}  ${passkeyLabel(p.id)}  created ${p.created_at}  last used ${p.last_used_at ?? 'never'}\n`);
        return;
      }
      if (verb !== 'remove' || id === undefined) throw new CliError('usage', { detail: 'vrp node console passkeys [remove ID]' });
      await removeHostConsolePasskey({ dataDir: o.dataDir }, id);
      if (o.json) printJson({ removed: id });
      else process.stdout.write(`removed ${passkeyLabel(id)}\n`);
    }),
  );
}
