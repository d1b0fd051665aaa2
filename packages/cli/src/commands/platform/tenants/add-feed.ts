import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';
import { feedTenant, feedTenantOptions } from './feed-tenant.js';

/** `vrp platform tenants add-feed DOMAIN`: an iCal feed; the tenant's offers are non-quoteable until it is synced. */
export function registerAddFeed(tenants: Command): void {
  platformOptions(
    feedTenantOptions(
      tenants
        .command('add-feed')
        .description('add an iCal feed (https URL) to a tenant; its offers are non-quoteable until a sync worker imports it'),
    )
      .requiredOption('--name <name>', 'feed name: 1–63 letters, digits, . _ -')
      .requiredOption('--url <url>', 'https URL of the .ics export (its path or query may hold a secret token; neither is ever logged)'),
  ).action((arg: string | undefined, o: PlatformOptions & { domain?: string; name: string; url: string }) =>
    run(o.json, async () => {
      const domain = feedTenant('add-feed', arg, o.domain);
      await withStore(o, (s) => s.addTenantFeeds([{ domain, name: o.name, url: o.url }]));
      if (o.json) printJson({ domain, feed: o.name });
      else process.stdout.write(`added feed ${o.name} to ${domain}\n`);
    }),
  );
}
