import type { Clock } from '@vrpkit/core';
import type { Command } from 'commander';
import { registerAnchor } from './anchor.js';
import { registerExport } from './export.js';
import { registerVerify } from './verify.js';

/**
 * `vrp gate audit verify|export|anchor`: check the store's hash-chained audit log (naming the
 * first bad entry and why), stream its entries (docs/gateway.md "Audit log"), and anchor its
 * signed checkpoints outside the store (docs/security.md "Audit anchoring").
 */
export function registerAuditCommands(gate: Command, clock: Clock): void {
  const audit = gate
    .command('audit')
    .description('the tamper-evident audit log of every gate decision: verify it, export it, anchor it outside the store');
  registerVerify(audit);
  registerExport(audit, clock);
  registerAnchor(audit);
}
