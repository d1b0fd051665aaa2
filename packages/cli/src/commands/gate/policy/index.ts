import type { Command } from 'commander';
import { registerCheck } from './check.js';

/** `vrp gate policy …`: gate policies. */
export function registerPolicyCommands(gate: Command): void {
  const policy = gate.command('policy').description('gate policies');
  registerCheck(policy);
}
