/**
 * The check-in instant of a stay as RFC 3339 with the property's UTC offset (the cancellation-policy
 * extension's `anchor`: "an RFC 3339 instant and MUST include Z or a numeric UTC offset"). The offset is
 * the IANA zone's at that local time, read through `Intl` (no hand-kept zone table).
 */

/** Minutes east of UTC of `timeZone` at the instant `ms`. */
function offsetMinutes(timeZone: string, ms: number): number | undefined {
  try {
    const part = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(ms)
      .find((p) => p.type === 'timeZoneName')?.value;
    if (part === 'GMT') return 0;
    const m = /^GMT([+-])(\d{2}):(\d{2})$/.exec(part ?? '');
    return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : undefined;
  } catch {
    return undefined;
  }
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * `date` (YYYY-MM-DD) at `time` (HH:MM, or the start of the day when null) in `timeZone`, as
 * `YYYY-MM-DDTHH:MM:00±hh:mm`; undefined when the zone or the time is not usable.
 */
export function checkInInstant(date: string, time: string | null, timeZone: string): string | undefined {
  const t = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(time ?? '00:00');
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!t || !d) return undefined;
  const wall = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), Number(t[1]), Number(t[2]));
  // The offset in force at that wall-clock time: read at the first guess, then once more at the corrected instant.
  const first = offsetMinutes(timeZone, wall);
  if (first === undefined) return undefined;
  const offset = offsetMinutes(timeZone, wall - first * 60_000);
  if (offset === undefined) return undefined;
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${date}T${t[1]}:${t[2]}:00${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
