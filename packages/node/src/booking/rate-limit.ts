/**
 * Booking requests per remote address: a fixed one-minute window per address, in memory (per
 * process; a cluster of N workers admits up to N times the limit, which still bounds one
 * address). Bounded in size: the table is cleared when a window ends, so an address flood costs
 * one window's worth of entries at most.
 */

/** `--booking-rate-limit` default: booking requests per minute from one address. */
export const DEFAULT_BOOKING_RATE_LIMIT = 10;
const WINDOW_MS = 60_000;
/** Most addresses tracked in one window; past it the window's oldest addresses are forgotten. */
const MAX_TRACKED_ADDRESSES = 100_000;

export interface RateLimiter {
  /** Count one request from `address` at `now`: admitted, or refused with the seconds until the window ends. */
  take(address: string, now: number): { ok: true } | { ok: false; retryAfterSeconds: number };
}

export function createRateLimiter(perMinute: number): RateLimiter {
  let windowStart = Number.NEGATIVE_INFINITY;
  const counts = new Map<string, number>();
  return {
    take(address, now) {
      if (now >= windowStart + WINDOW_MS || now < windowStart) {
        windowStart = now;
        counts.clear();
      }
      const n = (counts.get(address) ?? 0) + 1;
      if (counts.size >= MAX_TRACKED_ADDRESSES && !counts.has(address)) counts.delete(counts.keys().next().value as string);
      counts.set(address, n);
      if (n <= perMinute) return { ok: true };
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)) };
    },
  };
}
