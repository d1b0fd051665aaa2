/**
 * Reading untrusted JSON one member at a time. A verifier walks documents it did not write
 * (offers, receipts, key sets, tool results), so every step asks "is this a JSON object?"
 * before reading a member, and a wrong shape reads as absent rather than throwing.
 *
 * "Record" here means what JSON calls an object (RFC 8259 §4): not `null`, not an array.
 * The prototype is not checked: `JSON.parse` only produces plain objects, and a check that
 * rejected class instances would change what callers already accept. A member read through a
 * record can still find inherited names (`constructor`, `toString`): when the member name is
 * chosen by the input rather than by the code, look it up with `Object.hasOwn`.
 */

/** Whether `value` is a JSON object: not `null`, not an array (RFC 8259 §4). A type guard. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `value` itself when it is a JSON object, else `undefined`, so that a chain of reads stays
 * one expression and a wrong shape anywhere reads as absent:
 * `asRecord(asRecord(payload)?.price)?.total`. Returns the same object, never a copy.
 */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}
