import type { EnforceDecision } from '../errors.js';
import type { ToolCallOutcome } from './dispatch-mapped.js';

/** The model-visible text of a tool's return value: strings as they are, anything else as JSON. */
function resultText(result: unknown): string {
  if (typeof result === 'string') return result;
  return JSON.stringify(result ?? null);
}

/** The model-visible text when the tool ran and threw: the model may recover, and it must not mistake this for a deny. */
function toolErrorText(outcome: ToolCallOutcome, error: unknown): string {
  const message = error instanceof Error ? error.message : 'the tool failed';
  return JSON.stringify({ error: { code: 'tool_error', message, retryable: false, invoked: outcome.invoked } });
}

/**
 * What goes back to the model for one block: the tool's result (also a recorded result returned
 * for a retried act), the tool's own error, or — on deny — the decision for the vendor's host
 * error object.
 */
export function replyFor(r: {
  outcome: ToolCallOutcome;
  result?: unknown;
  toolError?: unknown;
}): { text: string; isError?: true } | { deny: EnforceDecision } {
  if (r.toolError !== undefined) return { text: toolErrorText(r.outcome, r.toolError), isError: true };
  if (r.outcome.decision.allow || r.result !== undefined) return { text: resultText(r.result) };
  return { deny: r.outcome.decision };
}
