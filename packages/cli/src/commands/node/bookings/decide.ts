import { decideBooking } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';
import { bookingJson, bookingLine } from './view.js';

/** `vrp node bookings confirm|decline ID`: the host's decision on a pending hold. */
export function registerDecide(bookings: Command, verb: string, decision: 'confirmed' | 'declined', help: string): void {
  nodeOptions(bookings.command(verb).description(help).argument('<id>', 'the booking id (br_…)')).action((id: string, o: NodeOptions) =>
    run(o.json, async () => {
      const b = await decideBooking({ ...storeOptions(o), id, decision });
      if (o.json) printJson({ booking: bookingJson(b) });
      else process.stdout.write(bookingLine(b));
    }),
  );
}
