import type { Command } from 'commander';
import { registerConsoleCommands } from './console/index.js';
import { registerInit } from './init.js';
import { registerKeysCommands } from './keys/index.js';
import { registerMasterKeyCommands } from './master-key/index.js';
import { registerServe } from './serve.js';
import { registerSyncWorker } from './sync-worker.js';
import { registerTenantsCommands } from './tenants/index.js';

/** `vrp platform …` — one deployment serving many host domains, each a full VRP node. */
export function registerPlatformCommands(program: Command): void {
  const platform = program
    .command('platform')
    .description('platform mode: serve many host domains, each its own VRP node, from PostgreSQL (or SQLite)');
  registerInit(platform);
  registerMasterKeyCommands(platform);
  registerServe(platform);
  registerSyncWorker(platform);
  registerKeysCommands(platform);
  registerTenantsCommands(platform);
  registerConsoleCommands(platform);
}
