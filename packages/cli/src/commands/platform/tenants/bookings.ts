/**
 * `vrp platform tenants bookings DOMAIN` and `confirm-booking|decline-booking DOMAIN ID`: the holds a
 * tenant's guests made through its UCP sessions and the operator's decision on each pending one, as
 * `vrp node bookings list|confirm|decline` on a node. Confirming keeps the nights booked; declining
 * (with `--reason`) frees them and cancels the hold's UCP session with that reason; a hold nobody
 * decides expires after its hold time.
 */
import { decideTenantBooking, listTenantBookings } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { bookingJson, bookingLine } from '../../node/bookings/view.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

export function registerBookings(tenants: Command): void {
  platformOptions(
    tenants
      .command('bookings')
      .description("a tenant's booking holds, oldest first (lapsed holds are marked expired first)")
      .argument('<domain>')
      .option('--status <status>', 'only this status: pending, confirmed, declined or expired'),
  ).action((domain: string, o: PlatformOptions & { status?: string }) =>
    run(o.json, async () => {
      const list = await withStore(o, (s) => listTenantBookings(s, domain, o.status));
      if (o.json) printJson({ bookings: list.map(bookingJson) });
      else if (list.length === 0) process.stdout.write('no booking requests\n');
      else for (const b of list) process.stdout.write(bookingLine(b));
    }),
  );
  decide(tenants, 'confirm-booking', 'confirmed', "confirm a tenant's pending hold: the nights stay booked");
  decide(tenants, 'decline-booking', 'declined', "decline a tenant's pending hold: the nights are free again at once");
}

function decide(tenants: Command, verb: string, decision: 'confirmed' | 'declined', help: string): void {
  const c = tenants.command(verb).description(help).argument('<domain>').argument('<id>', 'the booking id (br_…)');
  if (decision === 'declined') c.requiredOption('--reason <text>', 'why: the message of the UCP session that made the hold');
  platformOptions(c).action((domain: string, id: string, o: PlatformOptions & { reason?: string }) =>
    run(o.json, async () => {
      const b = await withStore(o, (s) =>
        decideTenantBooking(s, { domain, id, decision, ...(o.reason !== undefined ? { reason: o.reason } : {}) }),
      );
      if (o.json) printJson({ booking: bookingJson(b) });
      else process.stdout.write(bookingLine(b));
    }),
  );
}
