/** How `vrp verify` shows an online verification: the human summary, or `--json` that survives a hostile payload. */
import { FACT_NAMES, type StayOfferVerification } from '@vrpkit/agent';
import { base64urlDecode, sha256Hex, visibleEscapes } from '@vrpkit/core';
import type { OfferRequestArgs } from '@vrpkit/protocol';
import { printJson } from '../../io.js';

/** Minor units rendered with the currency's usual decimals (signed value kept verbatim beside it). */
function money(amount: number, currency: string, minorUnit: boolean): string {
  if (!minorUnit) return `${amount} ${currency}`;
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return `${amount} ${currency} (minor units)`;
  }
  return `${(amount / 10 ** digits).toFixed(digits)} ${currency} (${amount} minor units)`;
}

/** Why an offer is not safe to quote: the status and code, the failed conditions, a verified negative. */
function notSafeLines(r: StayOfferVerification): string[] {
  const lines = [`NOT SAFE TO QUOTE — status ${r.status}${r.code ? ` (${r.code})` : ''}: ${visibleEscapes(r.reason)}`];
  if (r.failures.length > 0) lines.push(`  failed conditions: ${r.failures.join(', ')}`);
  if (r.safe_to_cite_verified_unavailable) {
    const why = r.offer?.availability.reason;
    lines.push(`  the host-signed offer says available: false${why ? ` (reason: ${visibleEscapes(why)})` : ''} — a verified negative`);
  }
  return lines;
}

/** The human summary: verdict and why, the quote when safe, each fact's three-state value. */
export function renderSummary(r: StayOfferVerification, args: OfferRequestArgs): string {
  const lines: string[] = [];
  lines.push(`${r.domain}: ${args.check_in} → ${args.check_out}, ${args.guests} guest${args.guests === 1 ? '' : 's'}`);
  if (r.safe_to_quote && r.quote) {
    lines.push('SAFE TO QUOTE as the official direct offer');
    lines.push(`  say:         "${visibleEscapes(r.quote.phrase)}"`);
    lines.push(`  total:       ${money(r.quote.total, r.quote.currency, r.quote.minor_unit)} — signed, exact`);
    lines.push(`  book at:     ${visibleEscapes(r.quote.direct_booking_url)}`);
    lines.push(`  valid until: ${r.offer?.valid_until}`);
    if (r.quote.refund_schedule === null) lines.push('  refund terms: not stated in the signed offer (unknown)');
    else if (r.quote.refund_schedule.length === 0) lines.push('  refund terms: [] — no refund at any time');
    else {
      lines.push('  refund terms (verbatim rows):');
      for (const row of r.quote.refund_schedule)
        lines.push(`    hours_before_checkin ${row.hours_before_checkin} → refund_percent ${row.refund_percent}`);
    }
  } else lines.push(...notSafeLines(r));
  lines.push('facts (Core §9):');
  for (const name of FACT_NAMES) {
    const f = r.facts[name];
    lines.push(`  ${name.padEnd(29)} ${visibleEscapes(f.value).padEnd(9)} ${f.class ? `${f.class}, from ${f.read_from}` : '-'}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `--json` of an online verification. A signed payload nested deeper than the JSON serialiser's
 * stack (~5,000 levels) still verifies; its copies in the result (`offer`, `verification.payload`,
 * `verification.header`) are then printed as the SHA-256 of the signed JWS segment they were
 * decoded from — the verdict is printed, the hostile content is not.
 */
export function printVerification(r: StayOfferVerification, jws: string | null): void {
  try {
    printJson(r);
    return;
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
  }
  const [header, payload] = (jws ?? '').split('.');
  const printable = <T>(value: T, segment: string | undefined): T | { omitted: 'not_serialisable'; sha256: string | null } => {
    try {
      JSON.stringify(value);
      return value;
    } catch {
      const bytes = segment ? base64urlDecode(segment) : null;
      return { omitted: 'not_serialisable', sha256: bytes ? sha256Hex(bytes) : null };
    }
  };
  printJson({
    ...r,
    offer: printable(r.offer, payload),
    verification: r.verification && {
      ...r.verification,
      header: printable(r.verification.header, header),
      payload: printable(r.verification.payload, payload),
    },
  });
}
