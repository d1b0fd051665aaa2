import { VrpError } from '@vrpkit/core';

/**
 * Errors the node raises for bad input or bad state. Every one carries a stable `code`;
 * messages may change, codes may not.
 */
export class NodeError extends VrpError {}

/** An offer request the node cannot answer as asked (Core VRP v0.1 §4): HTTP 400 `{error:{code,message}}`. */
export class OfferRequestError extends NodeError {}

/** One problem in a property description: the dotted field path ('' = the document) and the reason. */
export interface PropertyIssue {
  field: string;
  reason: string;
}

/**
 * A property description file that does not validate: every problem at once, one
 * `file: field: reason` line each. `field` and `reason` are the first problem's.
 */
export class InvalidPropertyError extends NodeError {
  readonly issues: readonly PropertyIssue[];
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
    issues: readonly PropertyIssue[] = [{ field, reason }],
  ) {
    super('invalid_property', issues.map((i) => `${file}: ${i.field || '(root)'}: ${i.reason}`).join('\n'), {
      file,
      field,
      reason,
      issues,
    });
    this.issues = issues;
  }
}
