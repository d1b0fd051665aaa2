import { readFileSync } from 'node:fs';
import {
  addCalendarBlock,
  addCalendarFeed,
  BACKUP_PASSPHRASE_ENV,
  type BookingLogEntry,
  backupNode,
  DATABASE_URL_ENV,
  DEFAULT_BOOKING_HOLDS_PER_DAY,
  DEFAULT_BOOKING_RATE_LIMIT,
  DEFAULT_HOLD_HOURS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
  DEFAULT_SYNC_INTERVAL_MS,
  initNode,
  isServeWorker,
  listCalendar,
  listKeys,
  MAX_HOLD_HOURS,
  MAX_OFFER_CACHE_MAX_AGE_SECONDS,
  MAX_PUBLISH_AHEAD_SECONDS,
  MAX_SERVE_WORKERS,
  NodeError,
  type NodeStoreOptions,
  type RequestLogEntry,
  removeCalendarBlock,
  removeCalendarFeed,
  restoreNode,
  revokeKey,
  rotateKey,
  runServeWorker,
  type ServedNode,
  serveNode,
  serveNodeCluster,
  syncCalendar,
  updateProperty,
} from '@vrpkit/node';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { EXIT_USAGE, printJson, reportError } from '../io.js';
import { registerNodeBookingCommands } from './node-bookings.js';

export interface Common {
  dataDir: string;
  json?: boolean;
  databaseUrl?: string;
}

export function positiveInt(v: string): number {
  if (!/^[1-9]\d{0,6}$/.test(v)) throw new InvalidArgumentError('must be a positive integer');
  return Number(v);
}

/** A count where 0 means "no cap". */
function countOrZero(v: string): number {
  if (!/^(?:0|[1-9]\d{0,6})$/.test(v)) throw new InvalidArgumentError('a whole number (0 = no cap)');
  return Number(v);
}

export function workerCount(v: string): number {
  const n = positiveInt(v);
  if (n > MAX_SERVE_WORKERS) throw new InvalidArgumentError(`at most ${MAX_SERVE_WORKERS} workers`);
  return n;
}

function publishAhead(v: string): number {
  if (!/^\d{1,6}$/.test(v) || Number(v) > MAX_PUBLISH_AHEAD_SECONDS)
    throw new InvalidArgumentError(`a whole number of seconds from 0 to ${MAX_PUBLISH_AHEAD_SECONDS}`);
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

/** A `--port` value: 0 (ephemeral) to 65535. */
export function port(v: string): number {
  const n = Number(v);
  if (!/^\d{1,5}$/.test(v) || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

/** Run an action; a thrown error becomes `error[code]: message` (or `{"error":…}` with --json) and exit 1. */
export async function run(json: boolean | undefined, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    process.exitCode = reportError(e, !!json);
  }
}

/**
 * The options every `vrp node` subcommand shares, declared once: which node (`--data-dir`,
 * `--database-url`) and `--json`. `help` overrides a description where a command means more.
 */
export function nodeCommand(c: Command, help: { dataDir?: string; json?: string } = {}): Command {
  return c
    .requiredOption('--data-dir <dir>', help.dataDir ?? 'node data directory')
    .option(
      '--database-url <url>',
      `PostgreSQL store URL (postgres://…[?schema=name]); default: ${DATABASE_URL_ENV} or the SQLite file in the data directory`,
    )
    .option('--json', help.json ?? 'print JSON');
}

/** The node a command's parsed options name, as every admin operation takes it. */
export function storeOptions(o: Common): NodeStoreOptions {
  return { dataDir: o.dataDir, ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}) };
}

/** The backup passphrase: the file's content without its final newline, else the environment variable, else empty (refused). */
function backupPassphrase(file: string | undefined): string {
  if (file === undefined) return process.env[BACKUP_PASSPHRASE_ENV] ?? '';
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (cause) {
    throw new NodeError(
      'passphrase_unreadable',
      `cannot read the passphrase file ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}

/** How a client reaches a node served on a loopback port: curl's --connect-to plus --cacert. */
export function reachHints(s: Pick<ServedNode, 'canonicalDomain' | 'address' | 'port' | 'caFile'>) {
  const connectTo = `${s.canonicalDomain}:443:${s.address}:${s.port}`;
  const curl = (path: string) =>
    `curl --connect-to ${connectTo}${s.caFile ? ` --cacert ${s.caFile}` : ''} 'https://${s.canonicalDomain}${path}'`;
  return { connectTo, curl };
}

/** Serve until SIGINT/SIGTERM, then close cleanly; resolves with the signal that stopped it. */
export async function serveUntilSignal(served: Pick<ServedNode, 'close'>): Promise<NodeJS.Signals> {
  return new Promise<NodeJS.Signals>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void served.close().then(() => resolve(signal));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** One `--json` event line on stdout, stamped with the time it happened (`ts`, RFC 3339 UTC). */
function printEvent({ event, ...fields }: { event: string; [field: string]: unknown }): void {
  process.stdout.write(`${JSON.stringify({ event, ts: new Date().toISOString(), ...fields })}\n`);
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

/** `--offer-cache-max-age`: 0 (no reuse) or a positive number of seconds up to the node's maximum. */
function offerCacheMaxAge(v: string): number {
  const n = v === '0' ? 0 : positiveInt(v);
  if (n > MAX_OFFER_CACHE_MAX_AGE_SECONDS) throw new InvalidArgumentError(`at most ${MAX_OFFER_CACHE_MAX_AGE_SECONDS} seconds`);
  return n;
}

/** `vrp node …` — create, serve and operate a VRP node. */
export function registerNodeCommands(program: Command): void {
  const node = program.command('node').description('run a VRP node: discovery, JWKS and signed verified stay offers for your property');

  nodeCommand(
    node
      .command('init')
      .description('create a node data directory: store, property, first Ed25519 signing key')
      .requiredOption('--domain <domain>', 'the canonical domain (lowercase, no scheme or port), e.g. villa.example')
      .option('--property <file>', 'property description, JSON or YAML (see packages/node/examples/property.example.yaml)')
      .addOption(
        new Option('--sample', 'publish a sample property instead (Visby, SEK prices): for trying vrpkit, not for a real domain').conflicts(
          'property',
        ),
      ),
    { dataDir: 'data directory to create (must not exist or be empty)', json: 'print the result as JSON' },
  ).action((o: Common & { domain: string; property?: string; sample?: boolean }, cmd: Command) => {
    // A node signs its property under the host's domain: which property is never a default.
    if (!o.property && !o.sample)
      cmd.error('error[property_required]: pass --property FILE with your property, or --sample for a sample property', {
        exitCode: EXIT_USAGE,
        code: 'property_required',
      });
    return run(o.json, async () => {
      const r = await initNode({
        ...storeOptions(o),
        domain: o.domain,
        ...(o.property ? { propertyFile: o.property } : {}),
      });
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `initialized ${r.canonical_domain} in ${r.data_dir} (property ${r.property_id}, signing key ${r.kid}, ${r.store} store)\n`,
        );
    });
  });

  nodeCommand(
    node
      .command('serve')
      .description('serve the node over https (public origin https://DOMAIN; the port is deployment detail)')
      .option('--port <port>', 'port to listen on (0 = ephemeral)', port, 0)
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
      .option(
        '--behind-proxy',
        'serve plain http on a loopback or private --host to a reverse proxy that terminates TLS for https://DOMAIN',
      )
      .option(
        '--trusted-proxy <cidr>',
        'with --behind-proxy: an address or CIDR block of the proxy; X-Forwarded-Proto/Host from anyone else are ignored (repeatable)',
        (v: string, prev: string[] = []) => [...prev, v],
      )
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
      .option('--booking-webhook-ca <file>', 'with --booking-webhook: extra trusted CA certificate (PEM) for its https'),
    { json: 'stdout is JSON lines only: {"event":"listening",…} first, one per request, {"event":"stopped",…} last; each has a ts' },
  ).action(
    (
      o: Common & {
        port: number;
        host: string;
        tlsCert?: string;
        tlsKey?: string;
        dev?: boolean;
        behindProxy?: boolean;
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
      },
    ) =>
      run(o.json, async () => {
        if (o.acme && !o.acmeEmail)
          throw new NodeError('acme_email_required', '--acme needs --acme-email: the CA sends expiry and policy mail there');
        const options = {
          ...storeOptions(o),
          port: o.port,
          host: o.host,
          maxConnectionsPerClient: o.maxConnectionsPerClient,
          offerCacheMaxAgeSeconds: o.offerCacheMaxAge,
          syncIntervalMs: o.syncInterval,
          holdHours: o.holdHours,
          bookingRateLimit: o.bookingRateLimit,
          bookingHoldsPerDay: o.bookingHoldsPerDay,
          ...(o.bookingWebhook
            ? {
                bookingWebhook: {
                  url: o.bookingWebhook,
                  ...(o.bookingWebhookCa ? { ca: [readFileSync(o.bookingWebhookCa, 'utf8')] } : {}),
                },
              }
            : {}),
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
        // A forked worker (same argv) serves and reports to the primary, which prints the banner once.
        if (isServeWorker())
          return runServeWorker(() => serveNode({ ...options, log: requestLogger(!!o.json), bookingLog: bookingLogger(!!o.json) }));
        const served =
          o.workers > 1
            ? await serveNodeCluster(options, o.workers)
            : await serveNode({ ...options, log: requestLogger(!!o.json), bookingLog: bookingLogger(!!o.json) });
        const hints = reachHints(served);
        if (o.json) {
          printEvent({
            event: 'listening',
            origin: served.origin,
            address: served.address,
            port: served.port,
            ca: served.caFile ?? null,
            ...(o.behindProxy ? { scheme: 'http' } : {}),
            ...('workerPids' in served ? { workers: served.workerPids.length, worker_pids: served.workerPids } : {}),
          });
        } else if (o.behindProxy) {
          process.stdout.write(
            `serving ${served.origin} as plain http on ${served.address}:${served.port} for the proxy that terminates TLS\n` +
              'Ctrl-C stops the node.\n',
          );
        } else {
          process.stdout.write(
            `serving ${served.origin} on ${served.address}:${served.port}${o.workers > 1 ? ` with ${o.workers} workers` : ''}\n` +
              `reach it with: --connect-to ${hints.connectTo}${served.caFile ? ` --cacert ${served.caFile}` : ''}\n` +
              `  ${hints.curl('/.well-known/vacation-rental.json')}\n` +
              'Ctrl-C stops the node.\n',
          );
        }
        // A cluster also ends when one of its workers dies (it has already stopped the others).
        const signal = await ('stopped' in served ? Promise.race([serveUntilSignal(served), served.stopped]) : serveUntilSignal(served));
        if (o.json) printEvent({ event: 'stopped', origin: served.origin, reason: signal ?? 'worker_exited' });
        else process.stderr.write(`stopped ${served.origin}${signal ? ` (${signal})` : ''}\n`);
      }),
  );

  nodeCommand(
    node
      .command('backup')
      .description(
        'write one encrypted file with an online snapshot of the SQLite store and the keys (a PostgreSQL store: keys only, use pg_dump)',
      )
      .requiredOption('--out <file>', 'the backup file to write (mode 0600)')
      .option('--passphrase-file <file>', `file holding the passphrase (default: ${BACKUP_PASSPHRASE_ENV})`),
  ).action((o: Common & { out: string; passphraseFile?: string }) =>
    run(o.json, async () => {
      const r = await backupNode({ ...storeOptions(o), out: o.out, passphrase: backupPassphrase(o.passphraseFile) });
      if (o.json) printJson(r);
      else process.stdout.write(`backed up ${r.canonical_domain} to ${r.out} (${r.files.length} files)${r.note ? `; ${r.note}` : ''}\n`);
    }),
  );
  nodeCommand(
    node
      .command('restore')
      .description('restore a backup into a new data directory (checked and decrypted before anything is written)')
      .requiredOption('--in <file>', 'the backup file')
      .option('--passphrase-file <file>', `file holding the passphrase (default: ${BACKUP_PASSPHRASE_ENV})`),
    { dataDir: 'data directory to create (must not exist or be empty)' },
  ).action((o: Common & { in: string; passphraseFile?: string }) =>
    run(o.json, async () => {
      const r = restoreNode({ dataDir: o.dataDir, in: o.in, passphrase: backupPassphrase(o.passphraseFile) });
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `restored ${r.canonical_domain} (backup of ${r.created_at}) into ${r.data_dir}${r.note ? `; ${r.note}` : ''}\n`,
        );
    }),
  );

  const property = node.command('property').description('the property description: rates, fees, rules');
  nodeCommand(
    property
      .command('update')
      .description('replace the property description of an existing node (validated first, one transaction)')
      .requiredOption('--file <file>', 'property description, JSON or YAML'),
  ).action((o: Common & { file: string }) =>
    run(o.json, async () => {
      const r = await updateProperty({ ...storeOptions(o), propertyFile: o.file });
      if (o.json) printJson(r);
      else process.stdout.write(`updated ${r.property_id} on ${r.canonical_domain}; the next offer uses it\n`);
    }),
  );

  const keys = node.command('keys').description('the signing key ring: list, rotate, revoke (Core §3.1)');
  nodeCommand(keys.command('list').description('list keys with status and whether the JWKS serves them now')).action((o: Common) =>
    run(o.json, async () => {
      const list = await listKeys(storeOptions(o));
      if (o.json) printJson({ keys: list });
      else
        for (const k of list)
          process.stdout.write(
            `${k.kid}  ${k.status}${k.status === 'pending' ? ` (signs from ${k.activates_at})` : ''}${k.published ? '  published' : ''}${k.retain_until ? `  retained until ${k.retain_until}` : ''}\n`,
          );
    }),
  );
  nodeCommand(
    keys
      .command('rotate')
      .description('publish a new key and sign with it; the old key stays published until its offers expire')
      .option(
        '--publish-ahead <seconds>',
        `publish the new key now but sign with it only after SECONDS (0 to ${MAX_PUBLISH_AHEAD_SECONDS}), so agents' JWKS caches hold it before its first offer`,
        publishAhead,
        0,
      ),
  ).action((o: Common & { publishAhead: number }) =>
    run(o.json, async () => {
      const r = await rotateKey({ ...storeOptions(o), publishAheadSeconds: o.publishAhead });
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `${o.publishAhead > 0 ? `published key ${r.kid}; it signs from ${r.activates_at}` : `active key ${r.kid}`}${r.retired.length ? `; retired ${r.retired.join(', ')} (published until ${r.retain_until})` : ''}\n`,
        );
    }),
  );
  nodeCommand(
    keys
      .command('revoke')
      .description('remove a key from the JWKS at once (compromise): every offer it signed stops verifying')
      .argument('<kid>', 'the key id'),
  ).action((kid: string, o: Common) =>
    run(o.json, async () => {
      const r = await revokeKey({ ...storeOptions(o), kid });
      if (o.json) printJson(r);
      else process.stdout.write(`revoked ${r.kid}${r.new_active_kid ? `; new active key ${r.new_active_kid}` : ''}\n`);
    }),
  );

  const cal = node.command('calendar').description('availability: iCal feed imports and blocked dates');
  nodeCommand(
    cal
      .command('add-feed')
      .description('add an iCal (.ics) feed from an https URL or a file; `calendar sync` imports it')
      .requiredOption('--name <name>', 'a short name for the feed, e.g. airbnb')
      .option('--url <url>', 'https URL of the feed')
      .option('--file <file>', 'path of an .ics file (stored as an absolute path; it must exist)'),
  ).action((o: Common & { name: string; url?: string; file?: string }) =>
    run(o.json, async () => {
      const feed = await addCalendarFeed({
        ...storeOptions(o),
        name: o.name,
        ...(o.url ? { url: o.url } : {}),
        ...(o.file ? { file: o.file } : {}),
      });
      if (o.json) printJson({ added: o.name, ...(feed.file ? { file: feed.file } : {}) });
      else process.stdout.write(`added feed ${o.name}${feed.file ? ` (${feed.file})` : ''}; run \`vrp node calendar sync\` to import it\n`);
    }),
  );
  nodeCommand(
    cal
      .command('sync')
      .description('import every feed; a failed feed marks the calendar unsafe (offers become non-quoteable)')
      .option('--ca <file>', 'extra trusted CA certificate (PEM) for https feeds')
      .option('--timeout <ms>', 'per-feed deadline in milliseconds', positiveInt, 10_000),
  ).action((o: Common & { ca?: string; timeout: number }) =>
    run(o.json, async () => {
      const results = await syncCalendar({
        ...storeOptions(o),
        timeoutMs: o.timeout,
        ...(o.ca ? { ca: [readFileSync(o.ca, 'utf8')] } : {}),
      });
      if (o.json) printJson({ feeds: results });
      else
        for (const r of results)
          process.stdout.write(
            r.ok ? `${r.name}: ok, ${r.ranges} blocked ranges\n` : `${r.name}: FAILED error[${r.error?.code}]: ${r.error?.message}\n`,
          );
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    }),
  );
  nodeCommand(
    cal
      .command('block')
      .description('block nights [from, to) (a host block or a booking taken elsewhere)')
      .requiredOption('--from <date>', 'first blocked night YYYY-MM-DD')
      .requiredOption('--to <date>', 'first free night after the block (like a check-out date)')
      .option('--booking', 'record it as a booking rather than a host block')
      .option('--note <text>', 'a note for the host'),
  ).action((o: Common & { from: string; to: string; booking?: boolean; note?: string }) =>
    run(o.json, async () => {
      const b = await addCalendarBlock({
        ...storeOptions(o),
        from: o.from,
        to: o.to,
        kind: o.booking ? 'booking' : 'block',
        ...(o.note ? { note: o.note } : {}),
      });
      if (o.json) printJson(b);
      else process.stdout.write(`blocked ${b.start_date} → ${b.end_date} (${b.kind} ${b.id})\n`);
    }),
  );
  nodeCommand(
    cal.command('unblock').description('remove a host block or booking by id (see `calendar list`)').argument('<id>', 'the block id'),
  ).action((id: string, o: Common) =>
    run(o.json, async () => {
      await removeCalendarBlock({ ...storeOptions(o), id });
      if (o.json) printJson({ removed: id });
      else process.stdout.write(`removed block ${id}\n`);
    }),
  );
  nodeCommand(
    cal.command('remove-feed').description('remove a calendar feed and every range it imported').argument('<name>', 'the feed name'),
  ).action((name: string, o: Common) =>
    run(o.json, async () => {
      await removeCalendarFeed({ ...storeOptions(o), name });
      if (o.json) printJson({ removed: name });
      else process.stdout.write(`removed feed ${name} and its imported ranges\n`);
    }),
  );
  nodeCommand(cal.command('list').description('feeds with their last sync, and every blocked range')).action((o: Common) =>
    run(o.json, async () => {
      const r = await listCalendar(storeOptions(o));
      if (o.json) printJson(r);
      else {
        for (const f of r.feeds)
          process.stdout.write(
            `feed ${f.name}: ${f.url ?? f.file}  last success ${f.last_success_at ?? 'never'}${f.last_error ? `  last error ${f.last_error}` : ''}\n`,
          );
        for (const b of r.blocks)
          process.stdout.write(
            `${b.id}  ${b.start_date} → ${b.end_date}  ${b.kind}${b.feed_name ? ` (${b.feed_name})` : ''}${b.note ? `  ${b.note}` : ''}\n`,
          );
      }
    }),
  );
  registerNodeBookingCommands(node);
}
