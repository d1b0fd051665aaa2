import type { Command } from 'commander';

/** `vrp gate …` — owned by the gate work stream; commands are registered here. */
export function registerGateCommands(_program: Command): void {}
