import { visibleEscapes } from '@vrpkit/core';
import { importTenants, loadMasterKey } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform tenants import DIR`: a tenant per property file; idempotent; exit 2 when a file failed. */
export function registerImport(tenants: Command): void {
  platformOptions(
    tenants
      .command('import')
      .description('add a tenant per property file in DIR (DOMAIN.yaml|.yml|.json); idempotent; bad files are reported, the rest import')
      .argument('<dir>', 'folder of property files'),
    { masterKey: true },
  ).action((dir: string, o: PlatformOptions) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const r = await withStore(o, (s) => importTenants(s, master, dir, (p) => process.stderr.write(`imported ${p.done}/${p.total}\n`)));
      if (o.json) printJson(r);
      else {
        // File names and property fields are the importer's input: shown terminal-safe.
        for (const f of r.failed) process.stderr.write(`${visibleEscapes(`${f.file}: ${f.field}: ${f.reason}`)}\n`);
        process.stdout.write(
          `${r.imported} imported, ${r.already_present} already present, ${r.failed.length} failed (of ${r.files} files)\n`,
        );
      }
      if (r.failed.length > 0) process.exitCode = 2;
    }),
  );
}
