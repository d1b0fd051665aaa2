import type { Command } from 'commander';
import { registerCheck } from './check.js';
import { registerVectors } from './vectors.js';

/** `vrp conformance https://DOMAIN …` (the group's own action) and `vrp conformance vectors`. */
export function registerConformanceCommands(program: Command): void {
  const conformance = program.command('conformance');
  registerVectors(conformance);
  registerCheck(conformance);
}
