import type { Command } from 'commander';
import { registerAdd } from './add.js';
import { registerAddFeed } from './add-feed.js';
import { registerBookings } from './bookings.js';
import { registerImport } from './import.js';
import { registerList } from './list.js';
import { registerRemove } from './remove.js';
import { registerRemoveFeed } from './remove-feed.js';
import { registerShow } from './show.js';
import { registerStatus } from './status.js';

/** `vrp platform tenants …`: the host domains this platform serves. */
export function registerTenantsCommands(platform: Command): void {
  const tenants = platform.command('tenants').description('the host domains this platform serves');
  registerAdd(tenants);
  registerImport(tenants);
  registerList(tenants);
  registerShow(tenants);
  registerStatus(
    tenants,
    'disable',
    'disabled',
    'stop serving a tenant (returns once no serving process serves it: at most 5 s on PostgreSQL)',
  );
  registerStatus(tenants, 'enable', 'active', 'serve a disabled tenant again');
  registerAddFeed(tenants);
  registerRemoveFeed(tenants);
  registerBookings(tenants);
  registerRemove(tenants);
}
