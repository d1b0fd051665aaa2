import type { Command } from 'commander';

/** `vrp demo` — what `npm start` runs. */
export function registerDemoCommand(_program: Command): void {}
