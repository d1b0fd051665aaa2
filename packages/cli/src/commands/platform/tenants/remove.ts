import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform tenants remove DOMAIN`: the tenant and its keys, feeds and calendar. */
export function registerRemove(tenants: Command): void {
  platformOptions(tenants.command('remove').description('delete a tenant and its keys, feeds and calendar').argument('<domain>')).action(
    (domain: string, o: PlatformOptions) =>
      run(o.json, async () => {
        await withStore(o, (s) => s.removeTenant(domain));
        if (o.json) printJson({ domain, removed: true });
        else process.stdout.write(`removed ${domain}\n`);
      }),
  );
}
