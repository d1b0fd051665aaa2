import { isVrpError, visibleEscapes } from '@vrpkit/core';
import { type CLI_CODES, exitStatusOf } from './errors.js';

export { EXIT_USAGE } from './errors.js';

/** Print one JSON document on stdout (scripts parse it; nothing else goes to stdout in --json mode). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** One `--json` event line on stdout, stamped with the time it happened (`ts`, RFC 3339 UTC). */
export function printEvent({ event, ...fields }: { event: string; [field: string]: unknown }): void {
  process.stdout.write(`${JSON.stringify({ event, ts: new Date().toISOString(), ...fields })}\n`);
}

/**
 * Report an error the way every vrp command does: `error[code]: message` on stderr, or
 * `{"error":{"code","message"}}` on stdout with --json. Returns the exit code to use.
 */
export function reportError(e: unknown, json: boolean, exitCode = 1): number {
  const err = isVrpError(e)
    ? e.toJSON()
    : { code: 'internal_error' satisfies keyof typeof CLI_CODES, message: e instanceof Error ? e.message : String(e) };
  if (json) printJson({ error: err });
  // A message can quote input (a file name, a feed name, a property field): each of its lines
  // (a property file's problems are one per line) is shown terminal-safe.
  else process.stderr.write(`error[${err.code}]: ${visibleEscapes(err.message, '\n')}\n`);
  return exitCode;
}

/**
 * Run a command's action. A number it returns (or resolves to) is the exit status; a thrown error is reported
 * (`reportError`) and ends the command with its code's status (`exitStatusOf`), else `failure`.
 */
export async function run(json: boolean | undefined, fn: () => unknown, failure = 1): Promise<void> {
  try {
    const status = await fn();
    if (typeof status === 'number') process.exitCode = status;
  } catch (e) {
    process.exitCode = reportError(e, !!json, exitStatusOf(e, failure));
  }
}

/**
 * Serve until SIGINT, SIGTERM or SIGHUP (the terminal that started it closed), then close
 * cleanly; resolves with the signal that stopped it.
 */
export async function serveUntilSignal(served: { close(): Promise<void> }): Promise<NodeJS.Signals> {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  return new Promise<NodeJS.Signals>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, stop);
      void served.close().then(() => resolve(signal));
    };
    for (const s of signals) process.on(s, stop);
  });
}
