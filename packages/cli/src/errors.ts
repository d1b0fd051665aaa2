import { type CodeArgs, CodedError, type CodeTable, isVrpError, VrpError } from '@vrpkit/core';

/** sysexits(3) EX_USAGE: the command was used incorrectly. */
export const EXIT_USAGE = 64;

/**
 * Every code `vrp` itself raises, its message template and the exit status a command ends with
 * when it reports it (64 for a command line that cannot run, sysexits EX_USAGE). A code a
 * package raises (a node, platform, gate or agent error) is reported as that package made it,
 * and ends the command with the command's own failure status (1, or 2 where an unknown fails
 * closed). Codes are stable: scripts match on them, and on nothing else.
 */
export const CLI_CODES = {
  // The command line itself.
  usage: { exit: EXIT_USAGE, message: '{detail}' },
  property_required: { exit: EXIT_USAGE, message: 'pass --property FILE with your property, or --sample for a sample property' },
  conflicting_options: { exit: EXIT_USAGE, message: 'give {one} or {other}, not both' },
  missing_option: { exit: EXIT_USAGE, message: 'give both {one} and {other}, or neither' },
  invalid_target: { exit: EXIT_USAGE, message: 'not a node origin: {target} (expected https://DOMAIN, or --vectors DIR)' },
  invalid_domain: { exit: EXIT_USAGE, message: 'not a host domain: {target}' },
  invalid_now: { exit: EXIT_USAGE, message: '--now must be an RFC 3339 instant such as 2026-06-24T12:00:00Z, got {now}' },
  // Files and values an option names.
  file_unreadable: { exit: EXIT_USAGE, message: 'cannot read the {what} file {file}: {reason}' },
  file_not_json: { exit: EXIT_USAGE, message: 'the {what} file {file} is not JSON' },
  invalid_json: { exit: EXIT_USAGE, message: '{what} is not JSON' },
  file_unwritable: { exit: 1, message: 'cannot write {file}: {reason}' },
  file_exists: { exit: 1, message: '{file} already exists' },
  passphrase_unreadable: { exit: 1, message: 'cannot read the passphrase file {file}: {reason}' },
  // Serving.
  acme_email_required: { exit: 1, message: '--acme needs --acme-email: the CA sends expiry and policy mail there' },
  tls_required: { exit: 1, message: 'pass --tls-dir DIR with certificates, or --dev DIR for a local dev CA' },
  invalid_status: { exit: 1, message: '--status is active or disabled' },
  // The gate's store, approvals and tool pins.
  no_store: { exit: 1, message: 'no gate store at {path}' },
  not_pending: { exit: 1, message: 'act {act} is {state}' },
  // Tool-Use Binding draft: a decision bound to another digest than the one reviewed is a scope mismatch.
  EF_SCOPE_MISMATCH: { exit: 1, message: 'act {act} is bound to digest {bound}, not the reviewed {reviewed}; nothing was decided' },
  not_revocable: { exit: 1, message: 'authority {authority} does not exist or is no longer outstanding' },
  unknown_tool: { exit: 1, message: 'no {what} seen yet: start `vrp gate proxy` and list its tools once' },
  digest_mismatch: { exit: 1, message: "{tool}'s definition is now {seen}, not the reviewed {reviewed}; nothing was pinned" },
  bad_jwks: { exit: 1, message: 'cannot read a JWKS with keys from {file}: {reason}' },
  demo_files_missing: {
    exit: 1,
    message: 'vrp demo --booking runs from the vrpkit repository (it replays examples/recordings)',
  },
  // Anything else that went wrong (not a vrpkit error): the command's own failure status.
  internal_error: { message: '{detail}' },
} as const satisfies CodeTable;

export type CliCode = keyof typeof CLI_CODES;

/** An error of `vrp` itself: `code` is always a `CLI_CODES` code. */
export class CliError extends CodedError<typeof CLI_CODES> {
  constructor(...args: CodeArgs<typeof CLI_CODES>) {
    super(CLI_CODES, args);
  }
}

/** A usage error of a command's own checks: reported like any error, exit 64. */
export function usage(detail: string): CliError {
  return new CliError('usage', { detail });
}

/**
 * A package refused a value the command line gave it (a date the offer request parser refuses,
 * a corpus it cannot read, `--arguments` that are not I-JSON): reported with the package's own
 * code, and exit 64 as any usage error. With `option`, the message names the option it was
 * given as (`--arguments: …`) and stands alone; without, the package's error is shown as it is,
 * details included.
 */
export class InputRefused extends VrpError {
  constructor(e: unknown, option?: string) {
    const code = isVrpError(e) ? e.code : ('internal_error' satisfies CliCode);
    const message = e instanceof Error ? e.message : String(e);
    const details = !option && isVrpError(e) && e.details ? { ...e.details } : undefined;
    super(code, option ? `${option}: ${message}` : message, details, { cause: e });
  }
}

/** `fn`'s value; whatever it throws is an `InputRefused` (exit 64). */
export function refusing<T>(fn: () => T, option?: string): T {
  try {
    return fn();
  } catch (e) {
    throw new InputRefused(e, option);
  }
}

/**
 * The exit status a reported error ends a command with: a `vrp` code's own (`CLI_CODES`), 64 for
 * refused input and for any package's `usage` code, else the command's `failure` status.
 */
export function exitStatusOf(e: unknown, failure: number): number {
  if (e instanceof CliError) return (CLI_CODES[e.code] as { exit?: number }).exit ?? failure;
  return e instanceof InputRefused || (isVrpError(e) && e.code === 'usage') ? EXIT_USAGE : failure;
}
