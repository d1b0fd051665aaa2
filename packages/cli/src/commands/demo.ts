import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { isVrpError } from '@vrpkit/core';
import { addDays, initNode, listBookings, localDate, serveNode } from '@vrpkit/node';
import { AGENT_CARD_PATH, DISCOVERY_PATH, JWKS_PATH, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import type { Command } from 'commander';
import { reportError } from '../io.js';
import { runDemoBooking } from './demo-booking.js';
import { port, reachHints, requestLogger, serveUntilSignal } from './node.js';
import { bookingLine } from './node-bookings.js';

const DEMO_DOMAIN = 'villa-demo.example';

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
      'run the gated booking scenario on recorded model responses against a fresh demo node (docs/booking.md), then exit',
    )
    .option('--booking-dir <dir>', 'data directory of the booking scenario (recreated on every run)', '.vrp-demo-booking')
    .option('--yes', 'with --booking: approve the booking as the person would')
    .action(async (o: { dir: string; port?: number; quiet?: boolean; booking?: boolean; bookingDir: string; yes?: boolean }) => {
      if (o.booking) {
        await demoBooking(o.bookingDir, o.yes === true);
        return;
      }
      try {
        const dataDir = resolve(o.dir);
        if (!existsSync(join(dataDir, 'node.json'))) {
          const r = await initNode({ domain: DEMO_DOMAIN, dataDir });
          process.stdout.write(`created a sample node for ${r.canonical_domain} in ${o.dir}/ (signing key ${r.kid})\n`);
        }
        // The demo keeps its port across runs, so the commands it printed last time still work.
        const portFile = join(dataDir, 'demo-port');
        const remembered = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : 0;
        const options = { dataDir, dev: true, ...(o.quiet ? {} : { log: requestLogger(false) }) };
        const served = await serveNode({ ...options, port: o.port ?? remembered }).catch((e: unknown) => {
          if (o.port !== undefined || !remembered || !isVrpError(e) || e.code !== 'listen_failed') throw e;
          process.stderr.write(`port ${remembered} of the last run is taken; listening on another one\n`);
          return serveNode({ ...options, port: 0 });
        });
        writeFileSync(portFile, `${served.port}\n`);
        // Listen for Ctrl-C before saying it stops the node.
        const stopped = serveUntilSignal(served);
        const { connectTo, curl } = reachHints(served);
        const ca = relative(process.cwd(), served.caFile!) || served.caFile!;
        // Pick the first stay the sample calendar can actually sell, so the commands show a quoteable offer.
        const today = localDate(served.service.now(), served.service.property().time_zone);
        let stay = { check_in: addDays(today, 30), check_out: addDays(today, 33) };
        for (let d = 30; d < 120; d++) {
          const candidate = { check_in: addDays(today, d), check_out: addDays(today, d + 3) };
          const r = await served.service.getOffer({ ...candidate, guests: 2 });
          if (r.ok && r.envelope.offer.agent_permission.may_quote_as_official_direct_offer) {
            stay = candidate;
            break;
          }
        }
        const q = `check_in=${stay.check_in}&check_out=${stay.check_out}&guests=2`;
        const origin = served.origin;
        process.stdout.write(
          [
            '',
            `vrpkit demo node: ${origin}  (listening on ${served.address}:${served.port}, dev CA ${ca})`,
            '',
            'Documents and surfaces (all on the canonical origin):',
            `  discovery   ${origin}${DISCOVERY_PATH}`,
            `  JWKS        ${origin}${JWKS_PATH}`,
            `  offers      ${origin}${OFFER_ENDPOINT_PATH}?${q}`,
            `  MCP         ${origin}${MCP_ENDPOINT_PATH}`,
            `  A2A card    ${origin}${AGENT_CARD_PATH}`,
            `  WebMCP page ${origin}/`,
            `  booking     ${origin}/book?checkIn=${stay.check_in}&checkOut=${stay.check_out}&guests=2`,
            '',
            'Fetch a signed offer:',
            `  ${curl(`${OFFER_ENDPOINT_PATH}?${q}`).replace(served.caFile!, ca)}`,
            '',
            'Fetch and verify it (signature, freshness, safe-to-quote):',
            `  npm run vrp -- verify ${origin} --check-in ${stay.check_in} --check-out ${stay.check_out} --guests 2 --connect-to ${connectTo} --cacert ${ca}`,
            '',
            'Ctrl-C stops the node.',
            '',
          ].join('\n'),
        );
        await stopped;
      } catch (e) {
        process.exitCode = reportError(e, false);
      }
    });
}

async function demoBooking(dir: string, yes: boolean): Promise<void> {
  try {
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const bookingId = await runDemoBooking({ dir, yes, out });
    if (bookingId) {
      out('');
      out(`The host holds ${bookingId}: npm run vrp -- node bookings list --data-dir ${dir}`);
      for (const b of await listBookings({ dataDir: resolve(dir) })) process.stdout.write(bookingLine(b));
      out(`Confirm or decline it: npm run vrp -- node bookings confirm|decline ${bookingId} --data-dir ${dir}`);
    }
  } catch (e) {
    process.exitCode = reportError(e, false);
  }
}
