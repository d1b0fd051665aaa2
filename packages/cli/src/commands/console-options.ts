/**
 * The options of a console's own listener, shared by `vrp node serve --console` (the host console)
 * and `vrp platform serve --console` (the operator console): the same address rules (loopback or
 * private by default, a public address only with `--console-public` and TLS) under the same names.
 */
import type { Command } from 'commander';
import { port } from '../options.js';

/** What the console options parse to. */
export interface ConsoleCommandOptions {
  console?: boolean;
  consoleHost: string;
  consolePort: number;
  consolePublic?: boolean;
  consoleName?: string[];
}

/** The listener options' defaults: a value other than these was asked for. */
export const CONSOLE_DEFAULTS = { host: '127.0.0.1', port: 0 } as const;

/** `--console`, `--console-host`, `--console-port`, `--console-public`, `--console-name`; `what` names the console, `tls` where its certificate comes from. */
export function consoleListenOptions(c: Command, what: string, tls: string): Command {
  return c
    .option('--console', `serve the ${what} on an admin listener of its own`)
    .option(
      '--console-host <addr>',
      'with --console: address of its listener; loopback or private (http), a public one only with --console-public (https)',
      CONSOLE_DEFAULTS.host,
    )
    .option('--console-port <port>', 'with --console: port of its listener (0 = ephemeral)', port, CONSOLE_DEFAULTS.port)
    .option('--console-public', `with --console: allow a public --console-host (served over ${tls})`)
    .option(
      '--console-name <name>',
      'with --console: another host name the console is reached by (an SSH tunnel’s, a private DNS name); repeatable',
      (v: string, prev: string[] = []) => [...prev, v],
    );
}

/** The listener the options ask for (`ConsoleListenOptions` of @vrpkit/node). */
export function consoleListen(o: ConsoleCommandOptions) {
  return {
    host: o.consoleHost,
    port: o.consolePort,
    ...(o.consolePublic ? { public: true } : {}),
    ...(o.consoleName ? { names: o.consoleName } : {}),
  };
}
