import type { Command } from 'commander';

/** `vrp node …` — owned by the node work stream; commands are registered here. */
export function registerNodeCommands(_program: Command): void {}
