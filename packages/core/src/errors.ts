/**
 * Errors are data with stable codes. Every error vrpkit throws for a
 * programmer or input error carries a `code` that scripts can match on; messages may
 * change, codes may not. Verification functions never throw for a bad artifact: they
 * return a result with a status and a code instead.
 */
export class VrpError extends Error {
  /** Stable, machine-readable code, e.g. `invalid_date`. */
  readonly code: string;
  /** Optional structured details (never raw tool arguments or key material). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: string, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }

  toJSON(): { code: string; message: string; details?: Record<string, unknown> } {
    return this.details
      ? { code: this.code, message: this.message, details: { ...this.details } }
      : { code: this.code, message: this.message };
  }
}

export function isVrpError(e: unknown): e is VrpError {
  return e instanceof VrpError;
}
