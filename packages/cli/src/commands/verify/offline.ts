/** `vrp verify offer --envelope FILE --jwks FILE`: a saved envelope verified offline (discovery is not checked). */
import { quoteChecks, verifyOffer } from '@vrpkit/agent';
import { systemClock } from '@vrpkit/core';
import { printJson } from '../../io.js';
import { readJsonOptionFile } from '../../options.js';
import { exitCodeFor } from './stay.js';

export interface OfflineOptions {
  envelope: string;
  jwks: string;
  now?: string;
  json?: boolean;
}

export function verifyOfflineOffer(o: OfflineOptions): number {
  const envelope = readJsonOptionFile(o.envelope, 'envelope');
  const jwks = readJsonOptionFile(o.jwks, 'JWKS');
  const v = verifyOffer({ envelope, jwks, now: o.now ?? systemClock.now() });
  const gate = quoteChecks(v);
  if (o.json)
    printJson({
      status: v.status,
      code: v.code,
      fresh: v.fresh,
      payload_matches_offer: v.payloadMatchesOffer,
      safe_to_quote: gate.ok,
      failures: gate.failures,
    });
  else {
    process.stdout.write(
      `${gate.ok ? 'SAFE TO QUOTE (offline checks; discovery not checked)' : `NOT SAFE TO QUOTE — ${v.status}${v.code ? ` (${v.code})` : ''}: ${v.reason}`}\n`,
    );
    if (!gate.ok) process.stdout.write(`  failed conditions: ${gate.failures.join(', ')}\n`);
  }
  return exitCodeFor(v.status, gate.ok);
}
