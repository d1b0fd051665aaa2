/**
 * Time and network are injected (DESIGN §3: pure core, I/O at the edge). Pure code takes
 * a `now` (epoch milliseconds or a Clock); only edges call `systemClock`.
 */
export interface Clock {
  /** Current time in epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock stuck at one instant, for tests and `--now`. */
export function fixedClock(at: number | string | Date): Clock {
  const ms = typeof at === 'number' ? at : new Date(at).getTime();
  if (!Number.isFinite(ms)) throw new RangeError(`not a valid instant: ${String(at)}`);
  return { now: () => ms };
}

/** RFC 3339 UTC timestamp with second precision and `Z`, the form VRP's `dateTime` pattern pins. */
export function toUtcSecond(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The `fetch` signature vrpkit accepts everywhere a caller may inject its own. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
