import type { Command } from 'commander';
import { registerGenerate } from './generate.js';
import { registerRotate } from './rotate.js';

/** `vrp platform master-key …`: the key that seals every tenant private key. */
export function registerMasterKeyCommands(platform: Command): void {
  const masterKey = platform.command('master-key').description('the master key that seals every tenant private key');
  registerGenerate(masterKey);
  registerRotate(masterKey);
}
