import { VrpError } from '@vrpkit/core';

/**
 * The store did not answer within the caller's bound (a lock wait, a statement or a
 * connection timed out). Nothing was written: the transaction never began or was rolled
 * back. enforce maps it to `EF-060` (Tool-Use Binding draft, enforce() contract: "Timeout of that fetch MUST deny").
 */
export class StoreTimeoutError extends VrpError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('store_timeout', message, undefined, options);
  }
}

/** The store is misconfigured or unreachable for another reason (bad schema name, closed pool …). */
export class StoreConfigError extends VrpError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('store_config', message, undefined, options);
  }
}

/** A concurrent escalation of the same act id with another binding committed first (the write is rolled back). */
export class EscalationBindingConflict extends Error {
  constructor(readonly candidateActId: string) {
    super(`escalation ${candidateActId} is bound to other arguments`);
    this.name = 'EscalationBindingConflict';
  }
}

/**
 * An issue-and-consume for an act that has authority already: nothing is written (the act's one
 * authority is the existing one, whatever the epochs say now; the caller reads it and decides, so
 * a retry still gets its recorded result after an epoch bump).
 */
export class ActHasAuthority extends Error {
  constructor(readonly candidateActId: string) {
    super(`act ${candidateActId} has authority already`);
    this.name = 'ActHasAuthority';
  }
}
