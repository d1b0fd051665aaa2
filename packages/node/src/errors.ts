import { VrpError } from '@vrpkit/core';

/**
 * Errors the node raises for bad input or bad state. Every one carries a stable `code`;
 * messages may change, codes may not.
 */
export class NodeError extends VrpError {}

/** An offer request the node cannot answer as asked (Core VRP v0.1 §4): HTTP 400 `{error:{code,message}}`. */
export class OfferRequestError extends NodeError {}

/** A property description file that does not validate: names the file, the dotted field path and the reason. */
export class InvalidPropertyError extends NodeError {
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super('invalid_property', `${file}: ${field || '(root)'}: ${reason}`, { file, field, reason });
  }
}
