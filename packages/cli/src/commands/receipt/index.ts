import type { Command } from 'commander';
import { registerMatch } from './match.js';
import { registerVerify } from './verify.js';

/** `vrp receipt …`: verify a VRP receipt envelope v1 and bind its MCP transport assertion to a call. */
export function registerReceiptCommands(program: Command): void {
  const receipt = program.command('receipt').description('VRP receipts (envelope v1) and the MCP composition profile');
  registerVerify(receipt);
  registerMatch(receipt);
}
