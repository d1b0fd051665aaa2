/**
 * Core's own code table (error-codes.ts): what the primitives throw for input they cannot take.
 * Verification never throws for a bad artifact; these are programmer and input errors.
 */
import { type CodeTable, codedErrorClass } from './error-codes.js';

export const CORE_CODES = {
  /** RFC 8785: the value has no canonical JSON form (undefined, NaN, Infinity, a BigInt, a cycle …). */
  not_canonicalizable: { message: 'value is not representable as canonical JSON: {reason}' },
  invalid_private_key: { message: 'the private key is not a usable Ed25519 JWK' },
  /** RFC 8032: an Ed25519 seed is 32 bytes. */
  invalid_seed: { message: 'an Ed25519 seed is 32 bytes' },
} as const satisfies CodeTable;

export type CoreCode = keyof typeof CORE_CODES;

/** An error of this package: `code` is always a `CORE_CODES` code. */
export class CoreError extends codedErrorClass(CORE_CODES) {}

/** The value cannot be expressed as RFC 8785 canonical JSON (undefined, NaN, Infinity, a function, a cycle …). */
export class CanonicalizationError extends CoreError {
  constructor(reason: string, details?: Record<string, unknown>) {
    super('not_canonicalizable', { reason }, details ? { details } : undefined);
  }
}
