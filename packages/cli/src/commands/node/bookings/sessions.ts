import { listUcpSessions } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';
import { sessionJson, sessionLine } from './view.js';

/** `vrp node bookings sessions`: UCP booking sessions, oldest first. */
export function registerSessions(bookings: Command): void {
  nodeOptions(
    bookings
      .command('sessions')
      .description('UCP booking sessions, oldest first (a session holds no night until its guest confirms)')
      .option('--status <status>', 'only this status: incomplete, requires_escalation, ready_for_complete, completed or canceled'),
  ).action((o: NodeOptions & { status?: string }) =>
    run(o.json, async () => {
      const list = await listUcpSessions({ ...storeOptions(o), ...(o.status ? { status: o.status } : {}) });
      if (o.json) printJson({ sessions: list.map(sessionJson) });
      else if (list.length === 0) process.stdout.write('no UCP sessions\n');
      else for (const s of list) process.stdout.write(sessionLine(s));
    }),
  );
}
