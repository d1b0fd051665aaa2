import { VrpError } from '@vrpkit/core';

/** Errors platform mode raises for bad input or bad state: every one carries a stable `code`. */
export class PlatformError extends VrpError {}
