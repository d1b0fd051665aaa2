import { listBookings } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';
import { bookingJson, bookingLine } from './view.js';

/** `vrp node bookings list`: booking requests, oldest first. */
export function registerList(bookings: Command): void {
  nodeOptions(
    bookings
      .command('list')
      .description('booking requests, oldest first (expired holds are marked expired first)')
      .option('--status <status>', 'only this status: pending, confirmed, declined or expired'),
  ).action((o: NodeOptions & { status?: string }) =>
    run(o.json, async () => {
      const list = await listBookings({ ...storeOptions(o), ...(o.status ? { status: o.status } : {}) });
      if (o.json) printJson({ bookings: list.map(bookingJson) });
      else if (list.length === 0) process.stdout.write('no booking requests\n');
      else for (const b of list) process.stdout.write(bookingLine(b));
    }),
  );
}
