import type { Clock } from '@vrpkit/core';
import type { Command } from 'commander';
import { registerList } from './list.js';
import { registerPin } from './pin.js';
import { registerUnpin } from './unpin.js';

/** `vrp gate tools …`: tool pins; a tool is listed and callable through the proxy only with its reviewed definition pinned. */
export function registerToolsCommands(gate: Command, clock: Clock): void {
  const tools = gate
    .command('tools')
    .description('tool pins: a tool is listed and callable through `vrp gate proxy` only with its reviewed definition pinned');
  registerList(tools);
  registerPin(tools, clock);
  registerUnpin(tools);
}
