/**
 * The calendar's word on a stay (Core VRP v0.1 §7): available and priced, or a signed-negative
 * reason, on a calendar whose freshness is part of the answer; the host's nearest open windows
 * for a stay that cannot be had as asked; and the day-by-day calendar of the property page.
 * Pure over one store state: nothing here signs.
 */
import type { ParsedOfferRequest } from '@vrpkit/protocol';
import { blockedNights, type CalendarFreshnessAt, calendarFreshness, hostAlternatives, type UnavailableReason } from '../availability.js';
import { addDays, dayNumber, localDate, nightsOf } from '../dates.js';
import { OfferRequestError } from '../errors.js';
import { type HostAlternatives, isQuoteable, type OfferFacts } from '../offer.js';
import { rateForNight } from '../pricing.js';
import type { OfferState } from './state.js';
import type { CalendarDay } from './types.js';

/** How far ahead `host_alternatives.next_available` looks. */
const ALTERNATIVES_SEARCH_DAYS = 60;
/** Longest range a page calendar may ask for. */
export const MAX_CALENDAR_DAYS = 400;

/** One stay judged at one instant from one store state: what an offer for it would sign. */
export interface StayJudgement {
  request: ParsedOfferRequest;
  /** The instant judged at (epoch ms) and the property's local date then. */
  t: number;
  today: string;
  outcome: OfferFacts['outcome'];
  freshness: CalendarFreshnessAt;
  /** `agent_permission.may_quote_as_official_direct_offer` as the offer would sign it. */
  mayQuote: boolean;
}

/** Core VRP v0.1 §7: each reason is a signed negative; guest count and stay length first, then the calendar. */
function unavailableReason(
  r: ParsedOfferRequest,
  s: OfferState,
  nights: string[],
  freshness: CalendarFreshnessAt,
): UnavailableReason | null {
  const { p } = s;
  if (r.guests > p.max_guests) return 'exceeds_max_guests';
  if (r.nights < p.min_nights) return 'below_minimum_stay';
  if (r.nights > p.max_nights) return 'above_maximum_stay';
  if (blockedNights(s.blocks, nights).size > 0) return 'not_available';
  if (!freshness.value.safe) return 'calendar_stale';
  return null;
}

/** The stay `r` (a request the parser accepted, inside the stay window) at `t` from the store state `s`. */
export function judgeStay(r: ParsedOfferRequest, t: number, s: OfferState, today: string): StayJudgement {
  const freshness = s.freshness(t);
  const nights = nightsOf(r.check_in, r.check_out);
  const reason = unavailableReason(r, s, nights, freshness);
  const outcome: OfferFacts['outcome'] = reason ? { available: false, reason } : { available: true, price: s.template.priceStay(nights) };
  const quoteable = isQuoteable(outcome, freshness);
  const mayQuote = s.template.agentPermission[quoteable ? 1 : 0].value.may_quote_as_official_direct_offer;
  return { request: r, t, today, outcome, freshness, mayQuote };
}

/**
 * The envelope's `host_alternatives` for a judged stay: the host's own nearest open windows, for
 * a stay refused on its dates or length and only on a safe calendar (otherwise the windows are unknown too).
 */
export function alternativesFor(j: StayJudgement, s: OfferState): HostAlternatives | undefined {
  if (j.outcome.available) return undefined;
  const { reason } = j.outcome;
  if (reason !== 'not_available' && reason !== 'below_minimum_stay' && reason !== 'above_maximum_stay') return undefined;
  const { p } = s;
  const rules = { minNights: p.min_nights, maxNights: p.max_nights, lastCheckIn: addDays(j.today, p.booking_horizon_days) };
  const alt = hostAlternatives(s.blocks, j.request.check_in, j.request.nights, rules, ALTERNATIVES_SEARCH_DAYS);
  if (!j.freshness.value.safe || (!alt.shorten_to && !alt.next_available)) return undefined;
  return { note: "The host's own nearest open windows for this property.", ...alt };
}

/** Day-by-day availability and nightly rate from `from` for `days` days, at `t` (fail closed: on an unsafe calendar no night is open). */
export function calendarDays(s: OfferState, from: string, days: number, t: number): CalendarDay[] {
  if (dayNumber(from) === null) throw new OfferRequestError('invalid_date', { what: 'from' });
  if (!Number.isInteger(days) || days < 1 || days > MAX_CALENDAR_DAYS)
    throw new OfferRequestError('invalid_range', { what: 'days', rule: `an integer from 1 to ${MAX_CALENDAR_DAYS}` });
  const { p, feeds, blocks } = s;
  const dates = nightsOf(from, addDays(from, days));
  const blocked = blockedNights(blocks, dates);
  const today = localDate(t, p.time_zone);
  const lastCheckIn = addDays(today, p.booking_horizon_days);
  const safe = calendarFreshness(feeds, t, p.calendar_max_age_minutes).safe;
  return dates.map((date) => {
    const available = safe && date >= today && date <= lastCheckIn && !blocked.has(date);
    return { date, available, nightly_rate: available ? rateForNight(p.rates, date).nightly_rate : null };
  });
}
