import { Command, CommanderError } from 'commander';
import { registerConformanceCommands } from './commands/conformance.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerGateCommands } from './commands/gate.js';
import { registerNodeCommands } from './commands/node.js';
import { registerReceiptCommands } from './commands/receipt.js';
import { registerVerifyCommands } from './commands/verify.js';
import { EXIT_USAGE } from './io.js';

/** Build the `vrp` program. Each command group lives in its own module under commands/. */
export function buildProgram(): Command {
  const program = new Command('vrp')
    .description('vrpkit: publish, verify and gate verifiable agent tool calls for direct vacation-rental booking')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  registerNodeCommands(program);
  registerVerifyCommands(program);
  registerReceiptCommands(program);
  registerGateCommands(program);
  registerConformanceCommands(program);
  registerDemoCommand(program);
  return program;
}

/** Run the CLI; resolves to the process exit code (64 for usage errors, as sysexits EX_USAGE). */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return 0;
      // `vrp help …` asked for help (exit 0); a bare `vrp` or `vrp node` named no command (usage error).
      if (e.code === 'commander.help') return e.exitCode === 0 ? 0 : EXIT_USAGE;
      return EXIT_USAGE;
    }
    throw e;
  }
}
