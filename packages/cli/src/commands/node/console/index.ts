import type { Command } from 'commander';
import { registerEnroll } from './enroll.js';
import { registerPasskeys } from './passkeys.js';

/** `vrp node console …`: the host console that `vrp node serve --console` serves. */
export function registerConsoleCommands(node: Command): void {
  const console = node.command('console').description('the host console served by `vrp node serve --console`');
  registerEnroll(console);
  registerPasskeys(console);
}
