import type { Command } from 'commander';
import { registerBackup } from './backup.js';
import { registerBookingsCommands } from './bookings/index.js';
import { registerCalendarCommands } from './calendar/index.js';
import { registerConsoleCommands } from './console/index.js';
import { registerInit } from './init.js';
import { registerKeysCommands } from './keys/index.js';
import { registerPropertyCommands } from './property/index.js';
import { registerRestore } from './restore.js';
import { registerServe } from './serve.js';

/** `vrp node …` — create, serve and operate a VRP node. */
export function registerNodeCommands(program: Command): void {
  const node = program.command('node').description('run a VRP node: discovery, JWKS and signed verified stay offers for your property');
  registerInit(node);
  registerServe(node);
  registerBackup(node);
  registerRestore(node);
  registerPropertyCommands(node);
  registerKeysCommands(node);
  registerCalendarCommands(node);
  registerBookingsCommands(node);
  registerConsoleCommands(node);
}
