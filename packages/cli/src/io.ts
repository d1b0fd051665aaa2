import { isVrpError, VrpError } from '@vrpkit/core';
import { UNSAFE_TEXT_CHARACTERS } from '@vrpkit/protocol';

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
  // A message can quote input (a file name, a feed name, a property field): each of its lines
  // (a property file's problems are one per line) is shown terminal-safe.
  else process.stderr.write(`error[${err.code}]: ${err.message.split('\n').map(terminalSafe).join('\n')}\n`);
  return exitCode;
}

/** A usage error of a command's own checks: reported like any error, exit 64. */
export function usage(message: string): VrpError {
  return new VrpError('usage', message);
}

/** Run a command's action; a thrown error is reported (`reportError`), exit 1, or 64 for a usage error. */
export async function run(json: boolean | undefined, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    process.exitCode = reportError(e, !!json, isVrpError(e) && e.code === 'usage' ? EXIT_USAGE : 1);
  }
}

/**
 * Text for a terminal that came from elsewhere (a downstream MCP server's tool names and
 * descriptions, a guest's booking details): C0/C1 controls, DEL and the bidi overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069) are shown as visible `\u{XXXX}` escapes, so a
 * server cannot move the cursor, erase a line, retitle the window or reorder what a person
 * reviews. `--json` output needs none of this: JSON already escapes controls.
 */
export function terminalSafe(text: string): string {
  // The same character class the node refuses in guest fields (protocol: one rule, one place).
  return text.replace(UNSAFE_TEXT_CHARACTERS, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`);
}
