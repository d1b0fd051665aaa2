import { type Clock, systemClock } from '@vrpkit/core';
import type { Command } from 'commander';
import { registerApprove } from './approve.js';
import { registerApprovers } from './approvers.js';
import { registerAuditCommands } from './audit/index.js';
import { registerBumpEpoch } from './bump-epoch.js';
import { registerJournal } from './journal.js';
import { registerKeys } from './keys.js';
import { registerPending } from './pending.js';
import { registerPolicyCommands } from './policy/index.js';
import { registerProxy } from './proxy.js';
import { registerReport } from './report.js';
import { registerRevoke } from './revoke.js';
import { registerToolsCommands } from './tools/index.js';
import { registerUi } from './ui.js';

/**
 * `vrp gate …`: operate the Tool-Use Binding gate's authority store, policy and keys (docs/gate.md §CLI),
 * and run it as a sidecar in front of an MCP server (docs/gateway.md).
 * Every command reads the time from the one `clock` (decisions, revocations, epochs, expiry filters).
 */
export function registerGateCommands(program: Command, clock: Clock = systemClock): void {
  const gate = program.command('gate').description('the Tool-Use Binding gate: approvals, journal, policy checks, signing keys');
  registerProxy(gate);
  registerToolsCommands(gate, clock);
  registerReport(gate, clock);
  registerUi(gate, clock);
  registerApprovers(gate, clock);
  registerAuditCommands(gate, clock);
  registerApprove(gate, clock);
  registerPending(gate, clock);
  registerJournal(gate);
  registerRevoke(gate, clock);
  registerBumpEpoch(gate, clock);
  registerPolicyCommands(gate);
  registerKeys(gate);
}
