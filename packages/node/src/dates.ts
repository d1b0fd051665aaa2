/**
 * Calendar arithmetic on `YYYY-MM-DD` strings. A stay is a set of nights, each named by the
 * date it starts on; all arithmetic runs in UTC day numbers so no host clock or DST shift
 * can move a night.
 */

import { dayNumber } from '@vrpkit/protocol';

export { dayNumber };

const DAY_MS = 86_400_000;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
/** Day numbers of 0100-01-01 and 9999-12-31: the four-digit years the fast path below formats. */
const FIRST_FAST_DAY = -682_968;
const LAST_FAST_DAY = 2_932_896;

/** `YYYY-MM-DD` of a day number (H. Hinnant's `civil_from_days`; outside years 0100–9999 the `Date` form, as before). */
export function fromDayNumber(day: number): string {
  if (!Number.isInteger(day) || day < FIRST_FAST_DAY || day > LAST_FAST_DAY) return new Date(day * DAY_MS).toISOString().slice(0, 10);
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y < 1000 ? `0${y}` : y}-${pad2(m)}-${pad2(d)}`;
}

export function addDays(date: string, days: number): string {
  const d = dayNumber(date);
  if (d === null) throw new RangeError(`not a date: ${date}`);
  return fromDayNumber(d + days);
}

export function weekdayOf(date: string): Weekday {
  const d = dayNumber(date);
  if (d === null) throw new RangeError(`not a date: ${date}`);
  // 1970-01-01 was a Thursday.
  return WEEKDAYS[(((d + 4) % 7) + 7) % 7]!;
}

/** The nights of a stay: every date from check-in (inclusive) to check-out (exclusive). */
export function nightsOf(checkIn: string, checkOut: string): string[] {
  const a = dayNumber(checkIn);
  const b = dayNumber(checkOut);
  if (a === null || b === null) throw new RangeError('not a date');
  const nights: string[] = [];
  for (let d = a; d < b; d++) nights.push(fromDayNumber(d));
  return nights;
}

/** Per zone: its formatter and the last second it formatted. */
const localDates = new Map<string, { format: Intl.DateTimeFormat; second: number; date: string }>();

/** Today's date in an IANA time zone (the property's local calendar day). */
export function localDate(ms: number, timeZone: string): string {
  // Formatters are costly to build (~100 µs) and immutable: one per zone.
  let z = localDates.get(timeZone);
  if (!z) {
    const format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    z = { format, second: Number.NaN, date: '' };
    localDates.set(timeZone, z);
  }
  // Formatting still costs ~1 µs per offer; every request in the same second shares the answer.
  // Exact, not approximate: UTC offsets are whole seconds, so a local date never changes inside one.
  const second = Math.floor(ms / 1000);
  if (z.second !== second) {
    z.date = z.format.format(ms);
    z.second = second;
  }
  return z.date;
}

export function isTimeZone(tz: string): boolean {
  if (knownTimeZones.has(tz)) return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
  } catch {
    return false;
  }
  knownTimeZones.add(tz);
  return true;
}

/**
 * Time zones found valid (a formatter costs about 0.2 ms to make, and a platform validates one
 * per tenant it loads). Only valid names are kept: there are a few hundred, whatever the input.
 */
const knownTimeZones = new Set<string>();
