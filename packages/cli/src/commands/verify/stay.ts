/** The stay `vrp verify` and `vrp conformance` ask a node about, and what `vrp verify` exits with for the verdict. */
import { checkOfferRequest } from '@vrpkit/agent';
import type { OfferRequestArgs } from '@vrpkit/protocol';

/** Exit codes of `vrp verify`: safe to quote (Core VRP v0.1 §7) / verified but not quoteable / anything else (fail closed, §8). */
export const EXIT_SAFE = 0;
export const EXIT_NOT_QUOTEABLE = 1;
export const EXIT_UNVERIFIED = 2;

/** 0 when safe; 1 only for a fresh verified offer that fails the gate (e.g. a signed negative); 2 for unknown, invalid, unverifiable, expired. */
export function exitCodeFor(status: string, safe: boolean): number {
  if (safe) return EXIT_SAFE;
  return status === 'verified' ? EXIT_NOT_QUOTEABLE : EXIT_UNVERIFIED;
}

/** The stay options of `vrp verify` and `vrp conformance`, as typed on the command line. */
export interface StayOptions {
  checkIn?: string;
  checkOut?: string;
  guests?: string;
}

/**
 * The offer request the stay options name: the protocol's one request parser (Core VRP v0.1 §4)
 * on the strings as typed — the form of an HTTP query — so `vrp` refuses exactly what a node
 * refuses, with the same code (`2026-02-30` is `invalid_date`). Throws `AgentUsageError` (exit 64).
 */
export function stayRequest(o: StayOptions): OfferRequestArgs {
  const query = new URLSearchParams();
  for (const [key, value] of [
    ['check_in', o.checkIn],
    ['check_out', o.checkOut],
    ['guests', o.guests],
  ] as const) {
    if (value !== undefined) query.set(key, value);
  }
  return checkOfferRequest(query);
}
