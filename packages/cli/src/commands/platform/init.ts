import { loadMasterKey } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../io.js';
import { type PlatformOptions, platformOptions, withStore } from './options.js';

/** `vrp platform init`: the platform's tables, and which master key seals tenant keys. */
export function registerInit(platform: Command): void {
  platformOptions(
    platform
      .command('init')
      .description("create the platform's tables (versioned migrations) and record which master key seals tenant keys")
      .option('--operator-domain <domain>', "the platform's own domain, serving the operator's MCP surface"),
    { masterKey: true },
  ).action((o: PlatformOptions & { operatorDomain?: string }) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const r = await withStore(o, (s) => s.init(master, o.operatorDomain ?? null));
      if (o.json) printJson({ ...r, master_key_id: master.id });
      else process.stdout.write(`${r.created ? 'initialized' : 'already initialized'}: platform (master key ${master.id})\n`);
    }),
  );
}
