/** What `vrp node serve` (and `vrp demo`) print while a node serves: how to reach it, and one line per request or booking. */
import type { BookingLogEntry, RequestLogEntry, ServedNode } from '@vrpkit/node';
import { printEvent } from '../../io.js';

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
