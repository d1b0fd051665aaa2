import type { Clock } from '@vrpkit/core';
import type { Command } from 'commander';
import { registerExport } from './export.js';
import { registerVerify } from './verify.js';

/**
 * `vrp gate audit verify|export`: check the store's hash-chained audit log (naming the first
 * bad entry and why) and stream its entries (docs/gateway.md "Audit log").
 */
export function registerAuditCommands(gate: Command, clock: Clock): void {
  const audit = gate.command('audit').description('the tamper-evident audit log of every gate decision: verify it, export it');
  registerVerify(audit);
  registerExport(audit, clock);
}
