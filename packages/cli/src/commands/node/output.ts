/** What `vrp node serve` (and `vrp demo`) print while a node serves: how to reach it, and one line per request or booking. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { chromiumExecutable, chromiumUnavailable } from '@vrpkit/agent';
import { isVrpError } from '@vrpkit/core';
import { addDays, type BookingLogEntry, localDate, offerFor, type RequestLogEntry, type ServedNode } from '@vrpkit/node';
import { printEvent } from '../../io.js';

/** Where a dev node keeps the port it listened on, in its data directory. */
const DEV_PORT_FILE = 'dev-port';

/**
 * Listen on `port` if one was given, else on the port of the last run (else any free one), and
 * remember it: a dev node (`vrp demo`, `vrp node serve --dev`) keeps its port across restarts,
 * so the commands it printed last time still work (issue 36: the README's commands dialled a
 * port the next start no longer used).
 */
export async function onRememberedPort<T extends { port: number }>(
  dataDir: string,
  port: number | undefined,
  listen: (port: number) => Promise<T>,
): Promise<T> {
  const file = join(dataDir, DEV_PORT_FILE);
  const remembered = existsSync(file) ? Number(readFileSync(file, 'utf8')) : 0;
  const served = await listen(port ?? remembered).catch((e: unknown) => {
    if (port !== undefined || !remembered || !isVrpError(e) || e.code !== 'listen_failed') throw e;
    process.stderr.write(`port ${remembered} of the last run is taken; listening on another one\n`);
    return listen(0);
  });
  writeFileSync(file, `${served.port}\n`);
  return served;
}

/** The first stay the node's calendar can actually sell, so the printed commands show a quoteable offer. */
export async function quoteableStay(served: Pick<ServedNode, 'service'>): Promise<{ check_in: string; check_out: string }> {
  const today = localDate(served.service.now(), served.service.property().time_zone);
  for (let d = 30; d < 120; d++) {
    const candidate = { check_in: addDays(today, d), check_out: addDays(today, d + 3) };
    const r = await offerFor(served.service, { ...candidate, guests: 2 }, { fresh: true });
    if (r.ok && r.envelope.offer.agent_permission.may_quote_as_official_direct_offer) return candidate;
  }
  return { check_in: addDays(today, 30), check_out: addDays(today, 33) };
}

/**
 * Ready-to-paste `vrp verify` and `vrp conformance` command lines for a node on a loopback port
 * with its dev CA (the CA's path relative to the folder the command is typed in).
 */
export function vrpCommands(
  s: Pick<ServedNode, 'canonicalDomain' | 'origin' | 'address' | 'port' | 'caFile'>,
  stay: { check_in: string; check_out: string },
): { verify: string; conformance: string } {
  const { connectTo } = reachHints(s);
  const ca = s.caFile ? ` --cacert ${relative(process.cwd(), s.caFile) || s.caFile}` : '';
  // The WebMCP surface is judged in Chromium: on a machine without it the check would say
  // "unknown" and not conform, so the printed command checks the surfaces this machine can judge.
  const surfaces = chromiumUnavailable(chromiumExecutable()) === null ? '' : ' --surfaces mcp,a2a';
  return {
    verify: `npm run -s vrp -- verify ${s.origin} --check-in ${stay.check_in} --check-out ${stay.check_out} --guests 2 --connect-to ${connectTo}${ca}`,
    conformance: `npm run -s vrp -- conformance ${s.origin} --connect-to ${connectTo}${ca}${surfaces}`,
  };
}

/** How a client reaches a node served on a loopback port: curl's --connect-to plus --cacert. */
export function reachHints(s: Pick<ServedNode, 'canonicalDomain' | 'address' | 'port' | 'caFile'>) {
  const connectTo = `${s.canonicalDomain}:443:${s.address}:${s.port}`;
  const curl = (path: string) =>
    `curl --connect-to ${connectTo}${s.caFile ? ` --cacert ${s.caFile}` : ''} 'https://${s.canonicalDomain}${path}'`;
  return { connectTo, curl };
}

/** Request log sink: JSON lines on stdout with --json, a short line on stderr otherwise. Never the raw query (a digest only). */
export function requestLogger(json: boolean): (e: RequestLogEntry) => void {
  return json
    ? (e) => printEvent({ ...e })
    : (e) => process.stderr.write(`${e.method} ${e.path}${e.query_sha256 ? `?#${e.query_sha256}` : ''} ${e.status} ${e.latency_ms}ms\n`);
}

/** One line per booking decision: `--json` as an event, else on stderr; ids and digests only. */
export function bookingLogger(json: boolean): (e: BookingLogEntry) => void {
  return json
    ? (e) => printEvent({ ...e })
    : (e) =>
        process.stderr.write(
          `booking ${e.outcome} ${e.booking_id ?? '-'}${e.offer_jws_sha256 ? ` offer#${e.offer_jws_sha256.slice(0, 16)}` : ''}\n`,
        );
}
