import type { Command } from 'commander';
import { usage } from '../../../errors.js';

/** The tenant argument of the feed verbs: `DOMAIN` like every other `tenants` verb, or `--domain DOMAIN`; both take both. */
export function feedTenantOptions(c: Command): Command {
  return c
    .argument('[domain]', 'the tenant canonical domain (or --domain)')
    .option('--domain <domain>', 'the tenant canonical domain (or as the argument)');
}

/**
 * The tenant a feed verb is about: `DOMAIN` as its argument, like every other `tenants`
 * command, or `--domain DOMAIN` — both feed commands accept both, so neither shape is a trap.
 */
export function feedTenant(command: string, positional: string | undefined, option: string | undefined): string {
  if (positional !== undefined && option !== undefined && positional !== option)
    throw usage(`two different tenants given: ${positional} and --domain ${option}`);
  const domain = positional ?? option;
  if (domain === undefined) throw usage(`give the tenant: vrp platform tenants ${command} DOMAIN …`);
  return domain;
}
