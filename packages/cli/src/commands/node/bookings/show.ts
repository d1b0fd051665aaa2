import { showBooking } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';
import { bookingDetails, bookingJson } from './view.js';

/** `vrp node bookings show ID`: one booking request with the guest's contact details. */
export function registerShow(bookings: Command): void {
  nodeOptions(
    bookings.command('show').description('one booking request with the guest’s contact details').argument('<id>', 'the booking id (br_…)'),
  ).action((id: string, o: NodeOptions) =>
    run(o.json, async () => {
      const b = await showBooking({ ...storeOptions(o), id });
      if (o.json) printJson({ booking: bookingJson(b) });
      else process.stdout.write(bookingDetails(b));
    }),
  );
}
