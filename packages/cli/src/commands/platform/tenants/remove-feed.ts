import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';
import { feedTenant, feedTenantOptions } from './feed-tenant.js';

/** `vrp platform tenants remove-feed DOMAIN --feed NAME|URL`: the feed and the blocks it imported. */
export function registerRemoveFeed(tenants: Command): void {
  platformOptions(
    feedTenantOptions(
      tenants
        .command('remove-feed')
        .description("remove a tenant's iCal feed and the blocks it imported; its freshness no longer counts for the tenant's offers"),
    ).requiredOption('--feed <name-or-url>', "the feed's name, or its URL"),
  ).action((arg: string | undefined, o: PlatformOptions & { domain?: string; feed: string }) =>
    run(o.json, async () => {
      const domain = feedTenant('remove-feed', arg, o.domain);
      const r = await withStore(o, (s) => s.removeTenantFeed(domain, o.feed));
      if (o.json) printJson({ domain, feed: r.name, removed: true });
      else process.stdout.write(`removed feed ${r.name} from ${domain}\n`);
    }),
  );
}
