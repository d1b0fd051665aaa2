import type { Command } from 'commander';

/** `vrp receipt …` — owned by the receipt work stream; commands are registered here. */
export function registerReceiptCommands(_program: Command): void {}
