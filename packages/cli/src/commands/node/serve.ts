/**
 * `vrp node serve`: serve the node over https on its canonical origin, in one process or as
 * `--workers` processes on one port, until SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import {
  DEFAULT_BOOKING_HOLDS_PER_DAY,
  DEFAULT_BOOKING_RATE_LIMIT,
  DEFAULT_GUEST_DATA_DAYS,
  DEFAULT_HOLD_HOURS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
  DEFAULT_SYNC_INTERVAL_MS,
  isServeWorker,
  MAX_HOLD_HOURS,
  MAX_OFFER_CACHE_MAX_AGE_SECONDS,
  MAX_SERVE_WORKERS,
  runServeWorker,
  type ServedCluster,
  type ServedNode,
  type ServeNodeOptions,
  serveNode,
  serveNodeCluster,
} from '@vrpkit/node';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CliError } from '../../errors.js';
import { printEvent, run, serveUntilSignal } from '../../io.js';
import { port, positiveInt, shutdownGraceOption } from '../../options.js';
import { CONSOLE_DEFAULTS, type ConsoleCommandOptions, consoleListen, consoleListenOptions } from '../console-options.js';
import { type GuestMailCommandOptions, guestMail, guestMailOptions } from '../guest-mail-options.js';
import { type NodeOptions, nodeOptions, storeOptions, workerCount } from './options.js';
import { bookingLogger, onRememberedPort, quoteableStay, reachHints, requestLogger, vrpCommands } from './output.js';

interface ServeOptions extends NodeOptions, ConsoleCommandOptions, GuestMailCommandOptions {
  /** Absent: 0 (any free port), or with --dev the port of the last run. */
  port?: number;
  host: string;
  tlsCert?: string;
  tlsKey?: string;
  dev?: boolean;
  behindProxy?: boolean;
  consolePath?: string;
  trustedProxy?: string[];
  acme?: boolean;
  acmeEmail?: string;
  acmeDirectory?: string;
  acmeHttpPort: number;
  acmeCa?: string;
  workers: number;
  maxConnectionsPerClient: number;
  offerCacheMaxAge: number;
  syncInterval: number;
  holdHours: number;
  bookingRateLimit: number;
  bookingHoldsPerDay: number;
  bookingWebhook?: string;
  bookingWebhookCa?: string;
  hostEmail?: string;
  guestDataDays: number;
  shutdownGrace?: number;
}

/** A count where 0 means "no cap". */
function countOrZero(v: string): number {
  if (!/^(?:0|[1-9]\d{0,6})$/.test(v)) throw new InvalidArgumentError('a whole number (0 = no cap)');
  return Number(v);
}

/** A `--sync-interval` value in ms: `0` (off) or a whole number with its unit, `90s`, `15m`, `1h` (a bare number could be either). */
function syncInterval(v: string): number {
  const m = /^(?:0|([1-9]\d{0,5})(s|m|h))$/.exec(v);
  if (!m) throw new InvalidArgumentError('a duration with its unit such as 90s, 15m or 1h, or 0 for no background sync');
  return m[1] ? Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 's' | 'm' | 'h'] : 0;
}

/** A `--hold-hours` value: whole hours from 1 to MAX_HOLD_HOURS. */
function holdHours(v: string): number {
  if (!/^[1-9]\d{0,3}$/.test(v) || Number(v) > MAX_HOLD_HOURS) throw new InvalidArgumentError(`whole hours from 1 to ${MAX_HOLD_HOURS}`);
  return Number(v);
}

/** `--offer-cache-max-age`: 0 (no reuse) or a positive number of seconds up to the node's maximum. */
function offerCacheMaxAge(v: string): number {
  const n = v === '0' ? 0 : positiveInt(v);
  if (n > MAX_OFFER_CACHE_MAX_AGE_SECONDS) throw new InvalidArgumentError(`at most ${MAX_OFFER_CACHE_MAX_AGE_SECONDS} seconds`);
  return n;
}

/** Where the node listens and how its certificate is had: files, the dev CA, ACME, or a TLS-terminating proxy in front. */
function listenOptions(c: Command): Command {
  return c
    .option('--port <port>', 'port to listen on (0 = ephemeral; default 0, with --dev the port of the last run)', port)
    .option(
      '--host <addr>',
      'address to listen on: 127.0.0.1 is this machine only; a public address (or 0.0.0.0) to be reached directly, a private one behind a proxy',
      '127.0.0.1',
    )
    .option('--tls-cert <file>', 'TLS certificate chain (PEM) for the domain')
    .option('--tls-key <file>', 'TLS private key (PEM)')
    .option('--dev', 'use a local dev CA and certificate, created once under <data-dir>/tls/')
    .option(
      '--acme',
      'obtain and renew the certificate for DOMAIN from an ACME CA (HTTP-01 on --acme-http-port), stored in <data-dir>/tls/acme/',
    )
    .option('--acme-email <email>', 'with --acme: contact address for the ACME account')
    .option('--acme-directory <url>', 'with --acme: the CA directory URL (default: Let’s Encrypt production)')
    .option('--acme-http-port <port>', 'with --acme: port of the HTTP-01 listener (the CA connects to port 80)', port, 80)
    .option('--acme-ca <file>', 'with --acme: extra trusted CA (PEM) for the directory’s https, e.g. a private ACME CA')
    .option('--behind-proxy', 'serve plain http on a loopback or private --host to a reverse proxy that terminates TLS for https://DOMAIN')
    .option(
      '--trusted-proxy <cidr>',
      'with --behind-proxy: an address or CIDR block of the proxy; X-Forwarded-Proto/Host from anyone else are ignored (repeatable)',
      (v: string, prev: string[] = []) => [...prev, v],
    );
}

/** How much the node does at once: processes, background sync, connections, offer reuse. */
function capacityOptions(c: Command): Command {
  return c
    .option(
      '--workers <n>',
      `processes serving the node on the one port (node:cluster), e.g. one per core; 1 to ${MAX_SERVE_WORKERS}`,
      workerCount,
      1,
    )
    .addOption(
      new Option(
        '--sync-interval <duration>',
        'sync the calendar feeds in the background this often (90s, 15m, 1h; jittered, failed feeds retried sooner); 0 = never (sync with cron)',
      )
        .argParser(syncInterval)
        .default(DEFAULT_SYNC_INTERVAL_MS, '15m'),
    )
    .option(
      '--max-connections-per-client <n>',
      'most simultaneous connections one client address may hold (per worker); more are closed at accept',
      positiveInt,
      DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    )
    .option(
      '--offer-cache-max-age <seconds>',
      `reuse a signed offer for up to this many seconds while nothing that could change it has changed (0 = sign every offer); 0 to ${MAX_OFFER_CACHE_MAX_AGE_SECONDS}`,
      offerCacheMaxAge,
      DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
    )
    .addOption(shutdownGraceOption());
}

/** The booking-request desk: how long a hold lasts, how many a client may make, who is told. */
function bookingOptions(c: Command): Command {
  return c
    .option(
      '--hold-hours <hours>',
      `how long a pending booking request holds the dates before they are free again (1 to ${MAX_HOLD_HOURS})`,
      holdHours,
      DEFAULT_HOLD_HOURS,
    )
    .option(
      '--booking-rate-limit <n>',
      'booking requests per minute one client address may make (per worker); more are answered 429',
      positiveInt,
      DEFAULT_BOOKING_RATE_LIMIT,
    )
    .option(
      '--booking-holds-per-day <n>',
      'holds one client address may create in a rolling 24 hours (per worker; 0 = no cap); more are answered 429',
      countOrZero,
      DEFAULT_BOOKING_HOLDS_PER_DAY,
    )
    .option(
      '--booking-webhook <url>',
      'https URL that receives a JSON event per booking change (ids, status, digests; never guest details)',
    )
    .option('--booking-webhook-ca <file>', 'with --booking-webhook: extra trusted CA certificate (PEM) for its https')
    .option(
      '--guest-data-days <n>',
      'erase guest names, emails, phones and parties this many days after check-out (the rows stay for the counts)',
      positiveInt,
      DEFAULT_GUEST_DATA_DAYS,
    )
    .option('--host-email <address>', 'with --smtp-url: mail each confirmed reservation to this address (besides --booking-webhook)');
}

/** The host console: off unless `--console`; an admin listener of its own, loopback by default. */
function consoleOptions(c: Command): Command {
  return consoleListenOptions(c, 'host console (inbox, calendar, keys and health, activity)', 'the node’s TLS certificate').option(
    '--console-path <path>',
    'serve the host console at this path (e.g. /console) on the node’s listener instead, for the reverse proxy only (needs --behind-proxy)',
  );
}

/** `--console …` as serve options (one process only: the console keeps its sessions in memory). */
function consoleServeOptions(o: ServeOptions): Pick<ServeNodeOptions, 'console'> {
  if (!o.console && o.consolePath === undefined) return {};
  if (o.workers > 1) throw new CliError('conflicting_options', { one: o.console ? '--console' : '--console-path', other: '--workers N' });
  // The console is at one place: at the path behind the proxy, or on a listener of its own (the node refuses the rest: `consolePath`).
  const listener =
    o.consolePath === undefined
      ? consoleListen(o)
      : {
          path: o.consolePath,
          ...(o.consoleHost !== CONSOLE_DEFAULTS.host || o.consolePort !== CONSOLE_DEFAULTS.port || o.consolePublic || o.consoleName
            ? consoleListen(o)
            : {}),
        };
  return {
    console: {
      ...listener,
      onAction: (e) => (o.json ? printEvent({ ...e }) : process.stderr.write(`console ${e.action} ${e.target ?? '-'} ${e.outcome}\n`)),
    },
  };
}

/** The serve options the command line names (everything but the logs, which each serving process adds). */
function serveOptions(o: ServeOptions): ServeNodeOptions {
  if (o.acme && !o.acmeEmail) throw new CliError('acme_email_required');
  return {
    ...storeOptions(o),
    port: o.port ?? 0,
    host: o.host,
    maxConnectionsPerClient: o.maxConnectionsPerClient,
    offerCacheMaxAgeSeconds: o.offerCacheMaxAge,
    syncIntervalMs: o.syncInterval,
    holdHours: o.holdHours,
    bookingRateLimit: o.bookingRateLimit,
    bookingHoldsPerDay: o.bookingHoldsPerDay,
    guestDataDays: o.guestDataDays,
    ...(o.shutdownGrace !== undefined ? { shutdownGraceSeconds: o.shutdownGrace } : {}),
    ...guestMail(o),
    // --host-email without --smtp-url is refused by the node (`host_email_needs_smtp`).
    ...(o.hostEmail ? { hostEmail: o.hostEmail } : {}),
    ...(o.bookingWebhook
      ? { bookingWebhook: { url: o.bookingWebhook, ...(o.bookingWebhookCa ? { ca: [readFileSync(o.bookingWebhookCa, 'utf8')] } : {}) } }
      : {}),
    ...consoleServeOptions(o),
    ...(o.dev ? { dev: true } : {}),
    ...(o.tlsCert ? { tlsCert: o.tlsCert } : {}),
    ...(o.tlsKey ? { tlsKey: o.tlsKey } : {}),
    ...(o.behindProxy ? { behindProxy: { trustedProxies: o.trustedProxy ?? [] } } : {}),
    ...(o.acme && o.acmeEmail
      ? {
          acme: {
            email: o.acmeEmail,
            httpPort: o.acmeHttpPort,
            ...(o.acmeDirectory ? { directoryUrl: o.acmeDirectory } : {}),
            ...(o.acmeCa ? { directoryCa: readFileSync(o.acmeCa, 'utf8') } : {}),
          },
        }
      : {}),
  };
}

/** Where the host console is, when it is served. */
const consoleLine = (served: ServedNode | ServedCluster, o: ServeOptions) =>
  'console' in served && served.console
    ? `host console: ${served.console.origin} (enroll a passkey with: vrp node console enroll --data-dir ${o.dataDir})\n`
    : '';

/** The banner: a `listening` event with --json, else the origin and how to reach it (with --dev, ready-to-paste `vrp` commands). */
async function announce(served: ServedNode | ServedCluster, o: ServeOptions): Promise<void> {
  if (o.json) {
    printEvent({
      event: 'listening',
      origin: served.origin,
      address: served.address,
      port: served.port,
      ca: served.caFile ?? null,
      ...(o.behindProxy ? { scheme: 'http' } : {}),
      ...('workerPids' in served ? { workers: served.workerPids.length, worker_pids: served.workerPids } : {}),
      ...('console' in served && served.console ? { console: served.console.origin } : {}),
    });
  } else if (o.behindProxy) {
    process.stdout.write(
      `serving ${served.origin} as plain http on ${served.address}:${served.port} for the proxy that terminates TLS\n` +
        consoleLine(served, o) +
        'Ctrl-C stops the node.\n',
    );
  } else {
    const hints = reachHints(served);
    // A dev node on this machine: the commands that verify its offers and check it, as `npm start` prints them.
    const commands = o.dev && 'service' in served ? vrpCommands(served, await quoteableStay(served)) : undefined;
    process.stdout.write(
      `serving ${served.origin} on ${served.address}:${served.port}${o.workers > 1 ? ` with ${o.workers} workers` : ''}\n` +
        `reach it with: --connect-to ${hints.connectTo}${served.caFile ? ` --cacert ${served.caFile}` : ''}\n` +
        `  ${hints.curl('/.well-known/vacation-rental.json')}\n` +
        (commands ? `verify an offer:\n  ${commands.verify}\ncheck it (conformance):\n  ${commands.conformance}\n` : '') +
        consoleLine(served, o) +
        'Ctrl-C stops the node.\n',
    );
  }
}

async function serve(o: ServeOptions): Promise<void> {
  const options = serveOptions(o);
  const logged = { ...options, log: requestLogger(!!o.json), bookingLog: bookingLogger(!!o.json) };
  // A forked worker (same argv) serves and reports to the primary, which prints the banner once.
  if (isServeWorker()) return runServeWorker(() => serveNode(logged));
  const listen = (port: number): Promise<ServedNode | ServedCluster> =>
    o.workers > 1 ? serveNodeCluster({ ...options, port }, o.workers) : serveNode({ ...logged, port });
  // A dev node keeps its port across restarts (unless --port says otherwise), so the commands it printed keep working.
  const served = o.dev && !o.behindProxy ? await onRememberedPort(o.dataDir, o.port, listen) : await listen(options.port ?? 0);
  // Listen for Ctrl-C before the banner says it stops the node. A cluster also ends when one of
  // its workers dies (it has already stopped the others).
  const stopped = 'stopped' in served ? Promise.race([serveUntilSignal(served), served.stopped]) : serveUntilSignal(served);
  await announce(served, o);
  const signal = await stopped;
  if (o.json) printEvent({ event: 'stopped', origin: served.origin, reason: signal ?? 'worker_exited' });
  else process.stderr.write(`stopped ${served.origin}${signal ? ` (${signal})` : ''}\n`);
}

/** `vrp node serve`. */
export function registerServe(node: Command): void {
  const serveCommand = node
    .command('serve')
    .description('serve the node over https (public origin https://DOMAIN; the port is deployment detail)');
  nodeOptions(consoleOptions(guestMailOptions(bookingOptions(capacityOptions(listenOptions(serveCommand))))), {
    json: 'stdout is JSON lines only: {"event":"listening",…} first, one per request, {"event":"stopped",…} last; each has a ts',
  }).action((o: ServeOptions) => run(o.json, () => serve(o)));
}
