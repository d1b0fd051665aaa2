import type { TenantStatus } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform tenants disable|enable DOMAIN`: a disable returns once every serving process honours it (docs/platform.md, the invalidation window). */
export function registerStatus(tenants: Command, name: 'disable' | 'enable', status: TenantStatus, help: string): void {
  platformOptions(tenants.command(name).description(help).argument('<domain>')).action((domain: string, o: PlatformOptions) =>
    run(o.json, async () => {
      await withStore(o, (s) => s.setTenantStatus(domain, status));
      if (o.json) printJson({ domain, status });
      else process.stdout.write(`${name}d ${domain}\n`);
    }),
  );
}
