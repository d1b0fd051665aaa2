import type { Command } from 'commander';
import { registerRevoke } from './revoke.js';
import { registerRotate } from './rotate.js';

/** `vrp platform keys …`: the tenants' Ed25519 signing keys. */
export function registerKeysCommands(platform: Command): void {
  const keys = platform.command('keys').description("tenants' Ed25519 signing keys (Core VRP v0.1 §3.1)");
  registerRotate(keys);
  registerRevoke(keys);
}
