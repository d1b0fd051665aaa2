import { resolve } from 'node:path';
import { listBookings } from '@vrpkit/node';
import type { Command } from 'commander';
import { run } from '../../io.js';
import { port } from '../../options.js';
import { bookingLine } from '../node/bookings/view.js';
import { runDemoBooking } from './booking.js';
import { runDemoNode } from './node.js';

interface DemoOptions {
  dir: string;
  port?: number;
  quiet?: boolean;
  booking?: boolean;
  bookingDir: string;
  yes?: boolean;
}

/** `vrp demo --booking`: the gated booking scenario over UCP, then where the host sees the booking it made. */
async function demoBooking(dir: string, yes: boolean): Promise<void> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const bookingId = await runDemoBooking({ dir, yes, out });
  if (!bookingId) return;
  out('');
  out(`The host holds ${bookingId} (the completed UCP session's booking): npm run vrp -- node bookings list --data-dir ${dir}`);
  for (const b of await listBookings({ dataDir: resolve(dir) })) process.stdout.write(bookingLine(b));
  out(`Confirm it: npm run vrp -- node bookings confirm ${bookingId} --data-dir ${dir}`);
  out(`or decline it with a reason for the guest: npm run vrp -- node bookings decline ${bookingId} --reason TEXT --data-dir ${dir}`);
}

/** `vrp demo` — what `npm start` runs: a sample node under .vrp-demo/, served in dev mode until Ctrl-C. */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('run a sample VRP node (created on first run under .vrp-demo/) in dev mode, with ready-to-paste commands')
    .option('--dir <dir>', 'demo data directory', '.vrp-demo')
    .option('--port <port>', 'port to listen on (default: the port of the last run, else an ephemeral one; 0 = ephemeral)', port)
    .option('--quiet', 'do not log requests')
    .option(
      '--booking',
      'run the gated booking scenario over UCP booking sessions on recorded model responses against a fresh demo node (docs/booking.md), then exit',
    )
    .option('--booking-dir <dir>', 'data directory of the booking scenario (recreated on every run)', '.vrp-demo-booking')
    .option('--yes', 'with --booking: approve the booking as the person would, and confirm it as the guest with the mailed code')
    .action((o: DemoOptions) => run(false, () => (o.booking ? demoBooking(o.bookingDir, o.yes === true) : runDemoNode(o))));
}
