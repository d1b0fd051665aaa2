/**
 * Random ids on the per-act path (evidence id, authority id, act nonce): drawn from a pool the
 * CSPRNG refills 4 KiB at a time, so an act pays one `randomFillSync` per ~100 acts instead of
 * three. A byte of the pool is handed out once, never twice.
 */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.allocUnsafe(4096);
let next = pool.length;

/** `bytes` fresh random bytes (at most 4096), encoded. */
export function randomId(bytes: number, encoding: 'base64url' | 'hex'): string {
  if (next + bytes > pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const id = pool.toString(encoding, next, next + bytes);
  next += bytes;
  return id;
}
