/**
 * Time and network are injected: pure code takes an instant, only edges read a clock.
 *
 * One naming rule keeps the two apart everywhere in vrpkit: `now: number` is an instant
 * (epoch milliseconds) that a pure function evaluates against; `clock: Clock` is the source
 * an edge (a server, a cache, a store, a CLI command) reads instants from, once per operation.
 */
export interface Clock {
  /** Current time in epoch milliseconds. */
  now(): number;
}

/** The wall clock. `now` does not use `this`, so `systemClock.now` may be passed around alone. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock stuck at one instant, for tests and `--now`. Throws `RangeError` for an invalid instant. */
export function fixedClock(at: number | string | Date): Clock {
  const ms = typeof at === 'number' ? at : new Date(at).getTime();
  if (!Number.isFinite(ms)) throw new RangeError(`not a valid instant: ${String(at)}`);
  return { now: () => ms };
}

/** The last two seconds formatted: an offer formats `now` several times and its `valid_until` once. */
const utcSeconds: [number, string][] = [
  [Number.NaN, ''],
  [Number.NaN, ''],
];

/** RFC 3339 UTC timestamp with second precision and `Z`, the form VRP's `dateTime` pattern pins. */
export function toUtcSecond(ms: number): string {
  const second = Math.floor(ms / 1000);
  for (const [s, text] of utcSeconds) if (s === second) return text;
  const text = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
  utcSeconds.pop();
  utcSeconds.unshift([second, text]);
  return text;
}

/** The `fetch` signature vrpkit accepts everywhere a caller may inject its own. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
