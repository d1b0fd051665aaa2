import canonicalize from 'canonicalize';
import { CanonicalizationError } from './codes.js';

/**
 * RFC 8785 (JCS) canonical JSON of `value`, via the `canonicalize` package.
 * Throws `CanonicalizationError` for values JSON cannot carry (undefined at the top,
 * non-finite numbers, BigInt, cycles) instead of silently producing a different document.
 */
export function canonicalJson(value: unknown): string {
  let out: string | undefined;
  try {
    out = canonicalize(value);
  } catch (cause) {
    throw new CanonicalizationError((cause as Error).message);
  }
  if (out === undefined) throw new CanonicalizationError('the value has no JSON form (undefined, a function or a symbol)');
  return out;
}
