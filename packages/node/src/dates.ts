/**
 * Calendar arithmetic on `YYYY-MM-DD` strings. A stay is a set of nights, each named by the
 * date it starts on; all arithmetic runs in UTC day numbers so no host clock or DST shift
 * can move a night.
 */

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Day number (days since 1970-01-01) of a real calendar date, or null for anything else (2026-02-30 included). */
export function dayNumber(date: string): number | null {
  const m = DATE_RE.exec(date);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  // Days in the month from the day before the 1st of the next one (UTC, so no DST shifts).
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  const ms = Date.UTC(y, mo - 1, d);
  // Date.UTC maps years 0–99 to 1900–1999; a VRP date is a four-digit year, so keep them apart.
  return y < 100 ? null : ms / DAY_MS;
}

export function fromDayNumber(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
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

const dateFormats = new Map<string, Intl.DateTimeFormat>();

/** Today's date in an IANA time zone (the property's local calendar day). */
export function localDate(ms: number, timeZone: string): string {
  // Formatters are costly to build (~100 µs) and immutable: one per zone.
  let f = dateFormats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dateFormats.set(timeZone, f);
  }
  return f.format(ms);
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
