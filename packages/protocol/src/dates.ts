/**
 * Core VRP v0.1 §4 dates: `YYYY-MM-DD`, a real proleptic-Gregorian calendar date. Integer
 * arithmetic on the characters, never `Date.parse` (which rolls `2026-02-30` over to March 2).
 */

/** Days since 1970-01-01 of a civil date (H. Hinnant's `days_from_civil`). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const ZERO = 48;

/** The value of the ASCII digit at `i`, or -1 (only ASCII digits make a date). */
function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - ZERO;
  return c >= 0 && c <= 9 ? c : -1;
}

/**
 * Day number (days since 1970-01-01) of a real calendar date, or null for anything else (2026-02-30 included).
 * Integer arithmetic on the characters: the offer path calls this a dozen times per request,
 * and the regex plus two `Date` objects it replaced were ~1 µs each (same accepted set and
 * values: `YYYY-MM-DD`, ASCII digits, Gregorian leap years, four-digit years from 0100).
 */
export function dayNumber(date: string): number | null {
  if (date.length !== 10 || date.charCodeAt(4) !== 45 || date.charCodeAt(7) !== 45) return null;
  const y0 = digit(date, 0);
  const y1 = digit(date, 1);
  const y2 = digit(date, 2);
  const y3 = digit(date, 3);
  const m0 = digit(date, 5);
  const m1 = digit(date, 6);
  const d0 = digit(date, 8);
  const d1 = digit(date, 9);
  if ((y0 | y1 | y2 | y3 | m0 | m1 | d0 | d1) < 0) return null;
  const y = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
  const mo = m0 * 10 + m1;
  const d = d0 * 10 + d1;
  // Date.UTC maps years 0–99 to 1900–1999; a VRP date is a four-digit year, so keep them apart.
  if (y < 100 || mo < 1 || mo > 12 || d < 1) return null;
  if (d > (mo === 2 && isLeap(y) ? 29 : MONTH_DAYS[mo - 1]!)) return null;
  return daysFromCivil(y, mo, d);
}

/** Whether `value` is a Core VRP v0.1 §4 date: a string `YYYY-MM-DD` naming a real calendar day. */
export function isCalendarDate(value: unknown): value is string {
  return typeof value === 'string' && dayNumber(value) !== null;
}

/**
 * The official schemas' `dateTime`: an RFC 3339 instant in UTC, written with `Z` (whole or
 * fractional seconds). Stricter than `Date.parse`, which also takes "2026-06-02" or "June 2, 2026":
 * every signed time is read one way only (`IsoDateTimeSchema`, the offer verifier, the receipt verifier).
 */
export const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Epoch milliseconds of an RFC 3339 UTC instant (`DATE_TIME_PATTERN`), or NaN for anything else. */
export function dateTimeMs(value: unknown): number {
  return typeof value === 'string' && DATE_TIME_PATTERN.test(value) ? Date.parse(value) : Number.NaN;
}
