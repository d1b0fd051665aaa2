import { clientKey } from '../http/client-key.js';

/**
 * Booking requests per client (`clientKey`: an IPv6 client by its /64): a fixed one-minute window per client, in memory (per
 * process; a cluster of N workers admits up to N times the limit, which still bounds one
 * address). Bounded in size: the table is cleared when a window ends, so an address flood costs
 * one window's worth of entries at most.
 */

/** `--booking-rate-limit` default: requests per minute from one address to the UCP endpoints, the guest page and the `/book` form. */
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
      const client = clientKey(address);
      if (now >= windowStart + WINDOW_MS || now < windowStart) {
        windowStart = now;
        counts.clear();
      }
      const n = (counts.get(client) ?? 0) + 1;
      if (counts.size >= MAX_TRACKED_ADDRESSES && !counts.has(client)) counts.delete(counts.keys().next().value as string);
      counts.set(client, n);
      if (n <= perMinute) return { ok: true };
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)) };
    },
  };
}

/** `--booking-holds-per-day` default: holds one client address may create in a rolling 24 hours. */
export const DEFAULT_BOOKING_HOLDS_PER_DAY = 3;
const DAY_MS = 86_400_000;

export interface HoldCap {
  /**
   * Reserve one hold for `address` at `now` before it is written, so concurrent requests cannot
   * pass the cap together: admitted with a `release` for when no hold is created after all, or
   * refused with the seconds until the address's oldest hold of the last 24 hours ages out.
   */
  reserve(address: string, now: number): { ok: true; release(): void } | { ok: false; retryAfterSeconds: number };
}

/**
 * Holds created per client (`clientKey`: an IPv6 client by its /64) in a rolling 24 hours, in memory (per process: a restart or
 * each of N workers starts afresh). A hold is made only once a guest confirmed a UCP session with the
 * code mailed to them (ucp/confirm.ts), from the address that confirmed; this still bounds what one
 * address can block with many mailboxes. Bounded in size like the rate limiter.
 */
export function createHoldCap(perDay: number): HoldCap {
  const created = new Map<string, number[]>();
  return {
    reserve(address, now) {
      const client = clientKey(address);
      const recent = (created.get(client) ?? []).filter((t) => t > now - DAY_MS && t <= now);
      if (recent.length >= perDay) {
        created.set(client, recent);
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(((recent[0] as number) + DAY_MS - now) / 1000)) };
      }
      recent.push(now);
      created.delete(client);
      if (created.size >= MAX_TRACKED_ADDRESSES) created.delete(created.keys().next().value as string);
      created.set(client, recent);
      return {
        ok: true,
        release() {
          const list = created.get(client);
          const i = list?.lastIndexOf(now) ?? -1;
          if (list && i >= 0) list.splice(i, 1);
        },
      };
    },
  };
}
