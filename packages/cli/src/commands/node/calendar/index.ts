import type { Command } from 'commander';
import { registerAddFeed } from './add-feed.js';
import { registerBlock } from './block.js';
import { registerList } from './list.js';
import { registerRemoveFeed } from './remove-feed.js';
import { registerSync } from './sync.js';
import { registerUnblock } from './unblock.js';

/** `vrp node calendar …`: availability, from iCal feeds and the host's own blocks. */
export function registerCalendarCommands(node: Command): void {
  const cal = node.command('calendar').description('availability: iCal feed imports and blocked dates');
  registerAddFeed(cal);
  registerSync(cal);
  registerBlock(cal);
  registerUnblock(cal);
  registerRemoveFeed(cal);
  registerList(cal);
}
