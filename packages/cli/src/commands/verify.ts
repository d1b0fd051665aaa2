import type { Command } from 'commander';

/** `vrp verify …` — owned by the verify work stream; commands are registered here. */
export function registerVerifyCommands(_program: Command): void {}
