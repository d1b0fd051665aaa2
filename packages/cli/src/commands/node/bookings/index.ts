/**
 * `vrp node bookings list|show|confirm|decline`: the booking requests a node took (the vrpkit
 * booking-request extension) and the host's decision on each pending hold. Confirming keeps the
 * dates blocked; declining frees them; a hold nobody decides expires after `--hold-hours`.
 */
import type { Command } from 'commander';
import { registerDecide } from './decide.js';
import { registerList } from './list.js';
import { registerSessions } from './sessions.js';
import { registerShow } from './show.js';

export function registerBookingsCommands(node: Command): void {
  const bookings = node.command('bookings').description('booking requests taken by the node: list, show, confirm, decline; UCP sessions');
  registerList(bookings);
  registerShow(bookings);
  registerSessions(bookings);
  registerDecide(bookings, 'confirm', 'confirmed', 'confirm a pending hold: the dates stay booked');
  registerDecide(bookings, 'decline', 'declined', 'decline a pending hold: the dates are free again at once');
}
