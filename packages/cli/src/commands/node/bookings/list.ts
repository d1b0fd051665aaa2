import { listInbox } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';
import { bookingJson, bookingLine, sessionJson, sessionLine } from './view.js';

/** `vrp node bookings list`: the UCP sessions and the booking requests (reservations), each by status, oldest first. */
export function registerList(bookings: Command): void {
  nodeOptions(
    bookings
      .command('list')
      .description('UCP sessions and booking requests by status, oldest first (expired holds are marked expired first)')
      .option(
        '--status <status>',
        'only this status: a session’s (incomplete, requires_escalation, ready_for_complete, completed, canceled) or a booking’s (pending, confirmed, declined, expired)',
      ),
  ).action((o: NodeOptions & { status?: string }) =>
    run(o.json, async () => {
      const { sessions, bookings: list } = await listInbox({ ...storeOptions(o), ...(o.status ? { status: o.status } : {}) });
      if (o.json) {
        printJson({ sessions: sessions.map(sessionJson), bookings: list.map(bookingJson) });
        return;
      }
      if (sessions.length === 0 && list.length === 0) process.stdout.write('no UCP sessions or booking requests\n');
      const byStatus = <T extends { status: string }>(title: string, rows: T[], line: (r: T) => string) => {
        for (const status of [...new Set(rows.map((r) => r.status))].sort()) {
          process.stdout.write(`${title} ${status}:\n`);
          for (const r of rows.filter((x) => x.status === status)) process.stdout.write(`  ${line(r)}`);
        }
      };
      byStatus('UCP sessions', sessions, sessionLine);
      byStatus('booking requests', list, bookingLine);
    }),
  );
}
