import { type Clock, fixedClock, systemClock, toUtcSecond } from '@vrpkit/core';
import { describe, expect, it } from 'vitest';

describe('Clock', () => {
  it('fixedClock reads the same instant from a number, an RFC 3339 string or a Date', () => {
    const at = Date.UTC(2026, 10, 30, 12, 0, 0);
    for (const c of [fixedClock(at), fixedClock('2026-11-30T12:00:00Z'), fixedClock(new Date(at))]) expect(c.now()).toBe(at);
  });

  it('fixedClock refuses an instant that is not one', () => {
    expect(() => fixedClock('2026-13-01T00:00:00Z')).toThrow(RangeError);
    expect(() => fixedClock(Number.NaN)).toThrow(RangeError);
  });

  it('systemClock.now may be detached from its object (callers pass it as a function)', () => {
    const now = systemClock.now;
    const before = Date.now();
    const read = now();
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThanOrEqual(Date.now());
  });

  it('any object with now() is a Clock, so a test can move time forward', () => {
    let t = 1_000;
    const clock: Clock = { now: () => t };
    t += 500;
    expect(clock.now()).toBe(1_500);
  });

  it('toUtcSecond truncates to the second and ends in Z', () => {
    expect(toUtcSecond(Date.UTC(2026, 0, 2, 3, 4, 5, 999))).toBe('2026-01-02T03:04:05Z');
  });

  it('toUtcSecond answers every instant right, however the recently formatted seconds interleave', () => {
    const base = Date.UTC(2026, 5, 30, 23, 59, 58);
    // Three seconds in turn (more than it keeps), repeats, sub-second and negative instants, a leap day.
    const instants = [0, 1000, 2000, 0, 1999, 1000, 2500, 0, -1, 86_400_000 * 365, 0].map((d) => base + d);
    instants.push(-1, -1000, -1001, Date.UTC(2028, 1, 29, 12, 0, 0, 1));
    for (const ms of instants) {
      expect(toUtcSecond(ms), String(ms)).toBe(new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z'));
    }
  });
});
