import { visibleEscapes } from '@vrpkit/core';
import type { TenantStatus } from '@vrpkit/platform';
import type { Command } from 'commander';
import { CliError } from '../../../errors.js';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** `vrp platform tenants list`: every tenant, or those of one status. */
export function registerList(tenants: Command): void {
  platformOptions(
    tenants.command('list').description('list tenants').option('--status <status>', 'only active or disabled tenants'),
  ).action((o: PlatformOptions & { status?: string }) =>
    run(o.json, async () => {
      if (o.status !== undefined && o.status !== 'active' && o.status !== 'disabled') throw new CliError('invalid_status');
      const list = await withStore(o, (s) => s.listTenants(o.status ? { status: o.status as TenantStatus } : {}));
      if (o.json) printJson(list);
      else for (const t of list) process.stdout.write(`${t.domain}\t${t.status}\t${visibleEscapes(t.property_id)}\n`);
    }),
  );
}
