/**
 * `vrp node bookings list|show|confirm|decline`: the booking requests a node took (the vrpkit
 * booking-request extension) and the host's decision on each pending hold. Confirming keeps the
 * dates blocked; declining frees them; a hold nobody decides expires after `--hold-hours`.
 */
import { type BookingRequestRecord, decideBooking, listBookings, showBooking } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, terminalSafe } from '../io.js';
import { type Common, nodeCommand, run, storeOptions } from './node.js';

/** One line per booking: the id, the stay, the total and the status (no guest details in a list). */
export function bookingLine(b: BookingRequestRecord): string {
  const until = b.status === 'pending' ? `  holds until ${b.hold_expires_at}` : '';
  const line = `${b.booking_id}  ${b.check_in} → ${b.check_out}  ${b.guests} guests  ${b.total} ${b.currency} (minor units)  ${b.status}${until}`;
  return `${terminalSafe(line)}\n`;
}

/** The host's full view of one booking, guest contact included. */
function details(b: BookingRequestRecord): string {
  const lines = [
    `booking request ${b.booking_id}: ${b.status}`,
    `stay            ${b.check_in} → ${b.check_out}, ${b.guests} guests`,
    `total           ${b.total} ${b.currency} (minor units)`,
    `guest           ${terminalSafe(b.guest_name)} <${terminalSafe(b.guest_email)}>${b.guest_phone ? `, ${terminalSafe(b.guest_phone)}` : ''}`,
    `requested       ${b.created_at}`,
    `hold expires    ${b.hold_expires_at}`,
    `offer sha-256   ${b.offer_jws_sha256}`,
  ];
  return `${lines.map(terminalSafe).join('\n')}\n`;
}

/** A booking as `--json` prints it (the idempotency and request digests are internal bookkeeping). */
function asJson(b: BookingRequestRecord) {
  const { request_sha256: _digest, idempotency_key: _key, ...rest } = b;
  return { ...rest, guests: Number(b.guests), total: Number(b.total) };
}

export function registerNodeBookingCommands(node: Command): void {
  const bookings = node.command('bookings').description('booking requests taken by the node: list, show, confirm, decline');
  nodeCommand(
    bookings
      .command('list')
      .description('booking requests, oldest first (expired holds are marked expired first)')
      .option('--status <status>', 'only this status: pending, confirmed, declined or expired'),
  ).action((o: Common & { status?: string }) =>
    run(o.json, async () => {
      const list = await listBookings({ ...storeOptions(o), ...(o.status ? { status: o.status } : {}) });
      if (o.json) printJson({ bookings: list.map(asJson) });
      else if (list.length === 0) process.stdout.write('no booking requests\n');
      else for (const b of list) process.stdout.write(bookingLine(b));
    }),
  );
  nodeCommand(
    bookings.command('show').description('one booking request with the guest’s contact details').argument('<id>', 'the booking id (br_…)'),
  ).action((id: string, o: Common) =>
    run(o.json, async () => {
      const b = await showBooking({ ...storeOptions(o), id });
      if (o.json) printJson({ booking: asJson(b) });
      else process.stdout.write(details(b));
    }),
  );
  for (const [verb, decision, help] of [
    ['confirm', 'confirmed', 'confirm a pending hold: the dates stay booked'],
    ['decline', 'declined', 'decline a pending hold: the dates are free again at once'],
  ] as const) {
    nodeCommand(bookings.command(verb).description(help).argument('<id>', 'the booking id (br_…)')).action((id: string, o: Common) =>
      run(o.json, async () => {
        const b = await decideBooking({ ...storeOptions(o), id, decision });
        if (o.json) printJson({ booking: asJson(b) });
        else process.stdout.write(bookingLine(b));
      }),
    );
  }
}
