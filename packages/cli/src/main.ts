import { Command, CommanderError } from 'commander';
import { type CliCode, EXIT_USAGE } from './errors.js';
import { printJson } from './io.js';

type Register = (program: Command) => void;

/**
 * The command groups, each a folder under commands/ (its index.ts registers its verbs) imported
 * only when the command line names it: a group pulls in the node, agent or gate packages (TLS, SQLite, MCP and A2A
 * SDKs), so loading all of them would make `vrp --version` or `vrp gate …` pay for every other.
 * The summary is what `vrp --help` lists before any group is loaded.
 */
const COMMAND_GROUPS: Record<string, { summary: string; load: () => Promise<Register> }> = {
  node: { summary: 'run a VRP node for your property', load: async () => (await import('./commands/node/index.js')).registerNodeCommands },
  platform: {
    summary: 'serve many host domains, each its own node',
    load: async () => (await import('./commands/platform/index.js')).registerPlatformCommands,
  },
  verify: {
    summary: 'verify a node’s signed stay offer',
    load: async () => (await import('./commands/verify/index.js')).registerVerifyCommands,
  },
  receipt: { summary: 'verify VRP receipts', load: async () => (await import('./commands/receipt/index.js')).registerReceiptCommands },
  gate: { summary: 'the Tool-Use Binding gate', load: async () => (await import('./commands/gate/index.js')).registerGateCommands },
  conformance: {
    summary: 'check a node against the spec',
    load: async () => (await import('./commands/conformance/index.js')).registerConformanceCommands,
  },
  demo: { summary: 'run a sample node in dev mode', load: async () => (await import('./commands/demo/index.js')).registerDemoCommand },
};

/** What a usage error prints after its one line, instead of the whole help (issue 36: a typo buried under the help). */
export const USAGE_HINT = '(add --help to the command for its usage)';

/**
 * Build the `vrp` program with the named command groups registered in full (default: all of
 * them); the others appear in `vrp --help` with their summary only. With `json`, a usage error
 * prints nothing on stderr: `main` answers it as one JSON document on stdout, as every other error.
 */
export async function buildProgram(groups: readonly string[] = Object.keys(COMMAND_GROUPS), o: { json?: boolean } = {}): Promise<Command> {
  const program = new Command('vrp')
    .description('vrpkit: publish, verify and gate verifiable agent tool calls for direct vacation-rental booking')
    .version('0.1.0')
    .showHelpAfterError(USAGE_HINT)
    .exitOverride();
  // Set before the groups register: their commands inherit it.
  if (o.json) program.configureOutput({ outputError: () => {}, writeErr: () => {} });
  for (const [name, group] of Object.entries(COMMAND_GROUPS)) {
    if (groups.includes(name)) (await group.load())(program);
    else program.command(name).description(group.summary);
  }
  return program;
}

/** The command group a command line names (`vrp node …`, `vrp help node`), if any. */
function namedGroup(argv: readonly string[]): string | undefined {
  const [first, second] = argv.slice(2);
  const name = first === 'help' ? second : first;
  return name !== undefined && Object.hasOwn(COMMAND_GROUPS, name) ? name : undefined;
}

/** Run the CLI; resolves to the process exit code (64 for usage errors, as sysexits EX_USAGE). */
export async function main(argv: string[]): Promise<number> {
  const group = namedGroup(argv);
  // A `--json` after `--` belongs to a downstream command line, not to vrp.
  const own = argv.indexOf('--');
  const json = (own < 0 ? argv : argv.slice(0, own)).includes('--json');
  const program = await buildProgram(group ? [group] : [], { json });
  try {
    await program.parseAsync(argv);
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return 0;
      // `vrp help …` asked for help (exit 0); a bare `vrp` or `vrp node` named no command (usage error).
      if (e.code === 'commander.help') return e.exitCode === 0 ? 0 : EXIT_USAGE;
      // Commander printed the error and the hint on stderr; a script that asked for --json gets
      // it on stdout instead, as every other error ({"error":{code,message}}).
      if (json) printJson({ error: { code: 'usage' satisfies CliCode, message: e.message.replace(/^error: /, '') } });
      return EXIT_USAGE;
    }
    throw e;
  }
}
