/** What both `vrp receipt` verbs read: the receipt and JSON option values, and the exit statuses they share. */
import { CliError } from '../../errors.js';

export const EXIT_NOT_VERIFIED = 1;
export const EXIT_UNKNOWN = 2;

/** A JSON option value (or file content) `what` names; `invalid_json` (exit 64) when it is not JSON. */
export function parseJsonOption(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError('invalid_json', { what });
  }
}
