import { readPropertyFile } from '@vrpkit/node';
import { loadMasterKey } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform tenants add`: a tenant's canonical domain, property and first signing key (sealed). */
export function registerAdd(tenants: Command): void {
  platformOptions(
    tenants
      .command('add')
      .description('add a tenant: its canonical domain, property and first Ed25519 signing key (sealed)')
      .requiredOption('--domain <domain>', 'the tenant canonical domain, e.g. villa.example')
      .requiredOption('--property <file>', 'property description, JSON or YAML'),
    { masterKey: true },
  ).action((o: PlatformOptions & { domain: string; property: string }) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const property = readPropertyFile(o.property);
      await withStore(o, (s) => s.addTenants(master, [{ domain: o.domain, property }]));
      if (o.json) printJson({ domain: o.domain, property_id: property.property_id });
      else process.stdout.write(`added ${o.domain} (property ${property.property_id})\n`);
    }),
  );
}
