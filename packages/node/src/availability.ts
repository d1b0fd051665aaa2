/**
 * Availability: blocked nights (host blocks, bookings, iCal imports) and the freshness of the
 * imported calendars. Pure functions over rows the store returns.
 */

import { toUtcSecond } from '@vrpkit/core';
import type { AltWindow, CalendarFreshness } from '@vrpkit/protocol';
import { addDays, dayNumber, fromDayNumber } from './dates.js';
import type { BlockedRange, CalendarFeed } from './store/store.js';

/** Signed-negative reasons (Core VRP v0.1 §7: an explicit `available: false` with a reason). */
export type UnavailableReason = 'not_available' | 'below_minimum_stay' | 'above_maximum_stay' | 'exceeds_max_guests' | 'calendar_stale';

/** The set of blocked nights among `nights`. */
export function blockedNights(blocks: BlockedRange[], nights: string[]): Set<string> {
  const out = new Set<string>();
  for (const n of nights) if (blocks.some((b) => b.start_date <= n && n < b.end_date)) out.add(n);
  return out;
}

/**
 * `availability.calendar_freshness`: a feed whose last sync failed is an error source, a feed
 * with no success within `maxAgeMinutes` is a stale source; either makes the calendar unsafe,
 * and an unsafe calendar never yields a quoteable offer (fail closed).
 */
export function calendarFreshness(feeds: CalendarFeed[], now: number, maxAgeMinutes: number): CalendarFreshness & { safe: boolean } {
  const cutoff = new Date(now - maxAgeMinutes * 60_000).toISOString();
  const error_sources = feeds.filter((f) => f.last_error !== null).map((f) => f.name);
  const stale_sources = feeds.filter((f) => f.last_success_at === null || f.last_success_at < cutoff).map((f) => f.name);
  const latest = feeds.reduce<string | null>((m, f) => (f.last_success_at && (!m || f.last_success_at > m) ? f.last_success_at : m), null);
  const safe = error_sources.length === 0 && stale_sources.length === 0;
  return {
    checked_at: toUtcSecond(now),
    max_age_minutes: maxAgeMinutes,
    active_import_count: feeds.length,
    checked_sources: feeds.map((f) => f.name),
    stale_sources,
    error_sources,
    latest_synced_at: latest ? toUtcSecond(Date.parse(latest)) : null,
    safe,
    reason: safe ? null : error_sources.length > 0 ? 'calendar_feed_failed' : 'calendar_feed_stale',
  };
}

/**
 * The first instant after `now` at which `calendarFreshness` changes by time alone: a feed that
 * is fresh at `now` turns stale once `maxAgeMinutes` have passed since its last success.
 * `Infinity` when no feed will (none, or all already stale); only a store write changes them then.
 */
export function calendarFreshnessChangesAt(feeds: CalendarFeed[], now: number, maxAgeMinutes: number): number {
  let at = Number.POSITIVE_INFINITY;
  for (const f of feeds) {
    if (f.last_success_at === null) continue;
    // Stale once last_success_at < now - maxAge, i.e. from last_success_at + maxAge + 1 ms on.
    const staleFrom = Date.parse(f.last_success_at) + maxAgeMinutes * 60_000 + 1;
    if (staleFrom > now && staleFrom < at) at = staleFrom;
  }
  return at;
}

/** `calendarFreshness` at one instant with its JSON text (the offer payload's `calendar_freshness`), and when it next changes by time alone. */
export interface CalendarFreshnessAt {
  value: CalendarFreshness & { safe: boolean };
  json: string;
  /** `calendarFreshnessChangesAt` for the same instant. */
  changesAt: number;
}

/**
 * `calendarFreshness` of one store snapshot's feeds, computed once and kept while its answer
 * cannot differ: within the same second (`checked_at` is whole seconds) and before the instant
 * `calendarFreshnessChangesAt` names (a fresh feed turning stale). Exact, not approximate: every
 * offer signed from the snapshot reads the same value the function would compute. Only a store
 * write changes the feeds, and that is another snapshot (another memo). In a later second before
 * that instant only `checked_at` differs: the rest (and its text) is kept and `checked_at` alone
 * written again, so a snapshot asked once a second or less (a platform tenant's) does not compute
 * it all anew each time.
 */
export function calendarFreshnessMemo(feeds: CalendarFeed[], maxAgeMinutes: number): (now: number) => CalendarFreshnessAt {
  let last: CalendarFreshnessAt | undefined;
  /** `last`'s members after `checked_at`, and their JSON text after its comma. */
  let rest: { value: Omit<CalendarFreshnessAt['value'], 'checked_at'>; json: string } | undefined;
  let from = Number.NaN;
  let second = Number.NaN;
  let until = Number.NaN;
  return (now) => {
    // NaN bounds compare false: the first call computes. A clock that steps back recomputes too.
    if (last && now >= from && now < until) {
      if (Math.floor(now / 1000) === second) return last;
    } else {
      const { checked_at: _, ...value } = calendarFreshness(feeds, now, maxAgeMinutes);
      rest = { value, json: JSON.stringify(value).slice(1) };
      from = now;
      until = calendarFreshnessChangesAt(feeds, now, maxAgeMinutes);
    }
    second = Math.floor(now / 1000);
    const checked_at = toUtcSecond(now);
    // `checked_at` first, as `calendarFreshness` writes it.
    last = { value: { checked_at, ...rest!.value }, json: `{"checked_at":"${checked_at}",${rest!.json}`, changesAt: until };
    return last;
  };
}

export interface StayRules {
  minNights: number;
  maxNights: number;
  /** Last allowed check-in date (today + booking horizon). */
  lastCheckIn: string;
}

function window(checkIn: string, nights: number): AltWindow {
  return { check_in: checkIn, check_out: addDays(checkIn, nights), nights };
}

/**
 * The host's own nearest bookable windows for a stay that cannot be had as asked (envelope
 * `host_alternatives`): `shorten_to` keeps the check-in and trims the stay to what is free;
 * `next_available` is the first later start (within `searchDays`) with a free window of the
 * requested length, clamped to the stay rules.
 */
export function hostAlternatives(
  blocks: BlockedRange[],
  checkIn: string,
  requestedNights: number,
  rules: StayRules,
  searchDays: number,
): { shorten_to: AltWindow | null; next_available: AltWindow | null } {
  const start = dayNumber(checkIn)!;
  const windowEnd = fromDayNumber(start + searchDays + Math.max(requestedNights, rules.minNights) + 1);
  const near = blocks.filter((b) => b.start_date < windowEnd && b.end_date > checkIn);
  const free = (d: number) => {
    const date = fromDayNumber(d);
    return !near.some((b) => b.start_date <= date && date < b.end_date);
  };
  let run = 0;
  while (run < requestedNights && free(start + run)) run++;
  const shortenNights = Math.min(run, rules.maxNights);
  const shorten_to = shortenNights >= rules.minNights && shortenNights < requestedNights ? window(checkIn, shortenNights) : null;

  const want = Math.min(Math.max(requestedNights, rules.minNights), rules.maxNights);
  const last = Math.min(start + searchDays, dayNumber(rules.lastCheckIn)!);
  let next_available: AltWindow | null = null;
  // The requested start itself counts when the stay only failed on its length.
  for (let d = want === requestedNights ? start + 1 : start; d <= last && !next_available; d++) {
    let ok = true;
    for (let i = 0; i < want && ok; i++) ok = free(d + i);
    if (ok) next_available = window(fromDayNumber(d), want);
  }
  return { shorten_to, next_available };
}
