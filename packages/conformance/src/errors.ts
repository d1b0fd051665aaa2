import { type CodeArgs, CodedError, type CodeTable } from '@vrpkit/core';

/**
 * Every code the conformance runners raise, with its message template. A report never throws for
 * a node or a vector that fails (it reports); these are for input the runner cannot run at all:
 * a corpus or vector directory it cannot read, a vector it cannot parse, a run with no must-fail
 * control. `vrp conformance` reports each as a usage error (exit 64).
 */
export const CONFORMANCE_CODES = {
  // Verifier vector corpora (conformance-report-v0.1).
  corpus_unreadable: { message: 'cannot read the corpus directory {dir}' },
  corpus_empty: { message: 'no *.json vectors in {dir}' },
  control_not_in_corpus: { message: 'the control {control} is not a vector of {dir}' },
  no_control: {
    message: 'a report needs at least one must-fail control: name one with --control (a vector the verifier must reject)',
  },
  // Recorded node vectors.
  vectors_unreadable: { message: 'cannot read the vector directory {dir}' },
  vectors_empty: { message: 'no *.json vectors in {dir}' },
  invalid_vector: { message: '{file} is not {what}' },
} as const satisfies CodeTable;

export type ConformanceCode = keyof typeof CONFORMANCE_CODES;

/** An input the conformance runners cannot run: `code` is always a `CONFORMANCE_CODES` code. */
export class ConformanceError extends CodedError<typeof CONFORMANCE_CODES> {
  constructor(...args: CodeArgs<typeof CONFORMANCE_CODES>) {
    super(CONFORMANCE_CODES, args);
  }
}
