/**
 * A verdict on one rule (pass, fail, or unknown with the reason: fail closed, unknown is never a
 * pass) and what the Core and tool-surface rules share to reach one.
 */
import { asRecord, canonicalJson } from '@vrpkit/core';
import type { RuleId } from './rules.js';

export type CheckStatus = 'pass' | 'fail' | 'unknown';

export interface Verdict {
  status: CheckStatus;
  detail: string;
}

export const pass = (detail: string): Verdict => ({ status: 'pass', detail });
export const fail = (detail: string): Verdict => ({ status: 'fail', detail });
export const unknown = (detail: string): Verdict => ({ status: 'unknown', detail });
/** A rule that only restates a failure of `rule`: unknown, so a broken node is flagged under the one rule it breaks. */
export const see = (rule: RuleId): Verdict => unknown(`not judged apart from ${rule}, which this depends on`);

/** Core VRP v0.1 §4: the three arguments of every offer request. */
export const REQUIRED_ARGS = ['check_in', 'check_out', 'guests'] as const;

/**
 * Two offers for the same arguments are "the same signed envelope" (§10.3) when their signed
 * payloads agree on everything but what identifies one issuance: the time stamps
 * (`generated_at`, `valid_until`, every `checked_at`) and the offer id (a node signs a fresh
 * offer per call; Core VRP v0.1 §6). The id is also removed wherever it is embedded, e.g. the booking URL.
 */
export function comparableOffer(payload: unknown): string {
  const offerId = asRecord(asRecord(payload)?.booking)?.offer_id;
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (typeof v === 'string') return typeof offerId === 'string' && offerId ? v.split(offerId).join('<offer_id>') : v;
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !['generated_at', 'valid_until', 'checked_at', 'offer_id'].includes(k))
        .map(([k, x]) => [k, strip(x)]),
    );
  };
  return canonicalJson(strip(payload));
}
