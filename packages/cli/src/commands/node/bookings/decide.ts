import { decideBooking } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';
import { bookingJson, bookingLine } from './view.js';

/**
 * `vrp node bookings confirm|decline ID`: the host's decision on a pending hold (the console's is
 * the same operation). A decline takes `--reason`, which the guest is mailed and a UCP session's
 * answer carries.
 */
export function registerDecide(bookings: Command, verb: string, decision: 'confirmed' | 'declined', help: string): void {
  const c = bookings.command(verb).description(help).argument('<id>', 'the booking id (br_…)');
  if (decision === 'declined') c.requiredOption('--reason <text>', 'why: mailed to the guest, and the UCP session’s message');
  nodeOptions(c).action((id: string, o: NodeOptions & { reason?: string }) =>
    run(o.json, async () => {
      const b = await decideBooking({ ...storeOptions(o), id, decision, ...(o.reason !== undefined ? { reason: o.reason } : {}) });
      if (o.json) printJson({ booking: bookingJson(b) });
      else process.stdout.write(bookingLine(b));
    }),
  );
}
