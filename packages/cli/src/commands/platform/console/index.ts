import type { Command } from 'commander';
import { registerEnroll } from './enroll.js';

/** `vrp platform console …`: the operator console that `vrp platform serve --console` serves. */
export function registerConsoleCommands(platform: Command): void {
  const console = platform.command('console').description('the operator console served by `vrp platform serve --console`');
  registerEnroll(console);
}
