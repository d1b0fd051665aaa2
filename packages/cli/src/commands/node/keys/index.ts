import type { Command } from 'commander';
import { registerList } from './list.js';
import { registerRevoke } from './revoke.js';
import { registerRotate } from './rotate.js';

/** `vrp node keys …`: the node's signing key ring (Core VRP v0.1 §3.1). */
export function registerKeysCommands(node: Command): void {
  const keys = node.command('keys').description('the signing key ring: list, rotate, revoke (Core §3.1)');
  registerList(keys);
  registerRotate(keys);
  registerRevoke(keys);
}
