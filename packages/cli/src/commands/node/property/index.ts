import type { Command } from 'commander';
import { registerUpdate } from './update.js';

/** `vrp node property …`: the property description the node signs its offers from. */
export function registerPropertyCommands(node: Command): void {
  const property = node.command('property').description('the property description: rates, fees, rules');
  registerUpdate(property);
}
