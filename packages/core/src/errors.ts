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

/**
 * One entry of a package's code registry (the shape every vrpkit package's `*_ERRORS` table
 * satisfies, after the gate's `EF_CODES`): the default message, and the HTTP status a server answers
 * the code with where one applies.
 */
export interface ErrorCodeEntry {
  readonly message: string;
  readonly status?: number;
}

/** This package's one code registry. */
export const CORE_ERRORS = {
  not_canonicalizable: { message: 'value is not representable as canonical JSON' },
  invalid_private_key: { message: 'the private key is not a usable Ed25519 JWK' },
  invalid_seed: { message: 'an Ed25519 seed is 32 bytes' },
} as const satisfies Record<string, ErrorCodeEntry>;

export type CoreErrorCode = keyof typeof CORE_ERRORS;

/**
 * The error class of one code registry (each package has one: `class NodeError extends
 * errorClassFor(NODE_ERRORS) {}`): `code` typed as the registry's codes, and the registry's
 * message when the throw site gives none.
 */
export function errorClassFor<R extends Record<string, ErrorCodeEntry>>(registry: R) {
  return class extends VrpError {
    declare readonly code: keyof R & string;
    constructor(code: keyof R & string, message?: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
      super(code, message ?? (registry[code] as ErrorCodeEntry).message, details, options);
    }
  };
}

/** An error of this package: `code` is always a `CORE_ERRORS` code. */
export class CoreError extends errorClassFor(CORE_ERRORS) {}

/** The value cannot be expressed as RFC 8785 canonical JSON (undefined, NaN, Infinity, a function, a cycle …). */
export class CanonicalizationError extends CoreError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('not_canonicalizable', message, details);
  }
}

export function isVrpError(e: unknown): e is VrpError {
  return e instanceof VrpError;
}
