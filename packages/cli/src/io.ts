import { isVrpError } from '@vrpkit/core';

/** sysexits(3) EX_USAGE: the command was used incorrectly. */
export const EXIT_USAGE = 64;

/** Print one JSON document on stdout (scripts parse it; nothing else goes to stdout in --json mode). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Report an error the way every vrp command does: `error[code]: message` on stderr, or
 * `{"error":{"code","message"}}` on stdout with --json. Returns the exit code to use.
 */
export function reportError(e: unknown, json: boolean, exitCode = 1): number {
  const err = isVrpError(e) ? e.toJSON() : { code: 'internal_error', message: e instanceof Error ? e.message : String(e) };
  if (json) printJson({ error: err });
  else process.stderr.write(`error[${err.code}]: ${err.message}\n`);
  return exitCode;
}
