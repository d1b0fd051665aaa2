import { readFileSync } from 'node:fs';
import {
  addCalendarBlock,
  addCalendarFeed,
  DATABASE_URL_ENV,
  DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
  initNode,
  isServeWorker,
  listCalendar,
  listKeys,
  MAX_OFFER_CACHE_MAX_AGE_SECONDS,
  MAX_SERVE_WORKERS,
  type RequestLogEntry,
  removeCalendarBlock,
  removeCalendarFeed,
  revokeKey,
  rotateKey,
  runServeWorker,
  type ServedNode,
  serveNode,
  serveNodeCluster,
  syncCalendar,
  updateProperty,
} from '@vrpkit/node';
import { type Command, InvalidArgumentError } from 'commander';
import { printJson, reportError } from '../io.js';

interface Common {
  dataDir: string;
  json?: boolean;
  databaseUrl?: string;
}

function positiveInt(v: string): number {
  if (!/^[1-9]\d{0,6}$/.test(v)) throw new InvalidArgumentError('must be a positive integer');
  return Number(v);
}

function workerCount(v: string): number {
  const n = positiveInt(v);
  if (n > MAX_SERVE_WORKERS) throw new InvalidArgumentError(`at most ${MAX_SERVE_WORKERS} workers`);
  return n;
}

function port(v: string): number {
  const n = Number(v);
  if (!/^\d{1,5}$/.test(v) || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

/** Run an action; a thrown error becomes `error[code]: message` (or `{"error":…}` with --json) and exit 1. */
async function run(json: boolean | undefined, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    process.exitCode = reportError(e, !!json);
  }
}

const dbOption = (c: Command) =>
  c.option(
    '--database-url <url>',
    `PostgreSQL store URL (postgres://…[?schema=name]); default: ${DATABASE_URL_ENV} or the SQLite file in the data directory`,
  );

/** How a client reaches a node served on a loopback port: curl's --connect-to plus --cacert. */
export function reachHints(s: Pick<ServedNode, 'canonicalDomain' | 'address' | 'port' | 'caFile'>) {
  const connectTo = `${s.canonicalDomain}:443:${s.address}:${s.port}`;
  const curl = (path: string) =>
    `curl --connect-to ${connectTo}${s.caFile ? ` --cacert ${s.caFile}` : ''} 'https://${s.canonicalDomain}${path}'`;
  return { connectTo, curl };
}

/** Serve until SIGINT/SIGTERM, then close cleanly. */
export async function serveUntilSignal(served: Pick<ServedNode, 'close'>): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void served.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** Request log sink: JSON lines on stdout with --json, a short line on stderr otherwise. Never the raw query (a digest only). */
export function requestLogger(json: boolean): (e: RequestLogEntry) => void {
  return json
    ? (e) => process.stdout.write(`${JSON.stringify(e)}\n`)
    : (e) => process.stderr.write(`${e.method} ${e.path}${e.query_sha256 ? `?#${e.query_sha256}` : ''} ${e.status} ${e.latency_ms}ms\n`);
}

/** `--offer-cache-max-age`: 0 (no reuse) or a positive number of seconds up to the node's maximum. */
function offerCacheMaxAge(v: string): number {
  const n = v === '0' ? 0 : positiveInt(v);
  if (n > MAX_OFFER_CACHE_MAX_AGE_SECONDS) throw new InvalidArgumentError(`at most ${MAX_OFFER_CACHE_MAX_AGE_SECONDS} seconds`);
  return n;
}

type ServeFlags = Common & {
  port: number;
  host: string;
  tlsCert?: string;
  tlsKey?: string;
  dev?: boolean;
  workers: number;
  offerCacheMaxAge: number;
};

/** `vrp node …` — create, serve and operate a VRP node. */
export function registerNodeCommands(program: Command): void {
  const node = program.command('node').description('run a VRP node: discovery, JWKS and signed verified stay offers for your property');

  dbOption(
    node
      .command('init')
      .description('create a node data directory: store, property, first Ed25519 signing key')
      .requiredOption('--domain <domain>', 'the canonical domain (lowercase, no scheme or port), e.g. villa.example')
      .requiredOption('--data-dir <dir>', 'data directory to create (must not exist or be empty)')
      .option(
        '--property <file>',
        'property description, JSON or YAML (see packages/node/examples/property.example.yaml); default: a sample property',
      )
      .option('--json', 'print the result as JSON'),
  ).action((o: Common & { domain: string; property?: string }) =>
    run(o.json, async () => {
      const r = await initNode({
        domain: o.domain,
        dataDir: o.dataDir,
        ...(o.property ? { propertyFile: o.property } : {}),
        ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
      });
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `initialized ${r.canonical_domain} in ${r.data_dir} (property ${r.property_id}, signing key ${r.kid}, ${r.store} store)\n`,
        );
    }),
  );

  dbOption(
    node
      .command('serve')
      .description('serve the node over https (public origin https://DOMAIN; the port is deployment detail)')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .option('--port <port>', 'port to listen on (0 = ephemeral)', port, 0)
      .option('--host <addr>', 'address to listen on', '127.0.0.1')
      .option('--tls-cert <file>', 'TLS certificate chain (PEM) for the domain')
      .option('--tls-key <file>', 'TLS private key (PEM)')
      .option('--dev', 'use a local dev CA and certificate, created once under <data-dir>/tls/')
      .option('--json', 'first stdout line is {"event":"listening",…}; then one JSON line per request')
      .option(
        '--workers <n>',
        `processes serving the node on the one port (node:cluster), e.g. one per core; 1 to ${MAX_SERVE_WORKERS}`,
        workerCount,
        1,
      )
      .option(
        '--offer-cache-max-age <seconds>',
        `reuse a signed offer for up to this many seconds while nothing that could change it has changed (0 = sign every offer); 0 to ${MAX_OFFER_CACHE_MAX_AGE_SECONDS}`,
        offerCacheMaxAge,
        DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
      ),
  ).action((o: ServeFlags) =>
    run(o.json, async () => {
      const options = {
        dataDir: o.dataDir,
        port: o.port,
        host: o.host,
        ...(o.dev ? { dev: true } : {}),
        ...(o.tlsCert ? { tlsCert: o.tlsCert } : {}),
        ...(o.tlsKey ? { tlsKey: o.tlsKey } : {}),
        ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
        offerCacheMaxAgeSeconds: o.offerCacheMaxAge,
      };
      // A forked worker (same argv) serves and reports to the primary, which prints the banner once.
      if (isServeWorker()) return runServeWorker(() => serveNode({ ...options, log: requestLogger(!!o.json) }));
      const served =
        o.workers > 1 ? await serveNodeCluster(options, o.workers) : await serveNode({ ...options, log: requestLogger(!!o.json) });
      const hints = reachHints(served);
      if (o.json) {
        process.stdout.write(
          `${JSON.stringify({
            event: 'listening',
            origin: served.origin,
            address: served.address,
            port: served.port,
            ca: served.caFile ?? null,
            ...('workerPids' in served ? { workers: served.workerPids.length, worker_pids: served.workerPids } : {}),
          })}\n`,
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
      await ('stopped' in served ? Promise.race([serveUntilSignal(served), served.stopped]) : serveUntilSignal(served));
    }),
  );

  const property = node.command('property').description('the property description: rates, fees, rules');
  dbOption(
    property
      .command('update')
      .description('replace the property description of an existing node (validated first, one transaction)')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .requiredOption('--file <file>', 'property description, JSON or YAML')
      .option('--json', 'print JSON'),
  ).action((o: Common & { file: string }) =>
    run(o.json, async () => {
      const r = await updateProperty({
        dataDir: o.dataDir,
        propertyFile: o.file,
        ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
      });
      if (o.json) printJson(r);
      else process.stdout.write(`updated ${r.property_id} on ${r.canonical_domain}; the next offer uses it\n`);
    }),
  );

  const keys = node.command('keys').description('the signing key ring: list, rotate, revoke (Core §3.1)');
  dbOption(
    keys
      .command('list')
      .description('list keys with status and whether the JWKS serves them now')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .option('--json', 'print JSON'),
  ).action((o: Common) =>
    run(o.json, async () => {
      const list = await listKeys({ dataDir: o.dataDir, ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}) });
      if (o.json) printJson({ keys: list });
      else
        for (const k of list)
          process.stdout.write(
            `${k.kid}  ${k.status}${k.published ? '  published' : ''}${k.retain_until ? `  retained until ${k.retain_until}` : ''}\n`,
          );
    }),
  );
  dbOption(
    keys
      .command('rotate')
      .description('publish a new key and sign with it; the old key stays published until its offers expire')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .option('--json', 'print JSON'),
  ).action((o: Common) =>
    run(o.json, async () => {
      const r = await rotateKey({ dataDir: o.dataDir, ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}) });
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `active key ${r.kid}${r.retired.length ? `; retired ${r.retired.join(', ')} (published until ${r.retain_until})` : ''}\n`,
        );
    }),
  );
  dbOption(
    keys
      .command('revoke')
      .description('remove a key from the JWKS at once (compromise): every offer it signed stops verifying')
      .argument('<kid>', 'the key id')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .option('--json', 'print JSON'),
  ).action((kid: string, o: Common) =>
    run(o.json, async () => {
      const r = await revokeKey({ dataDir: o.dataDir, kid, ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}) });
      if (o.json) printJson(r);
      else process.stdout.write(`revoked ${r.kid}${r.new_active_kid ? `; new active key ${r.new_active_kid}` : ''}\n`);
    }),
  );

  const cal = node.command('calendar').description('availability: iCal feed imports and blocked dates');
  dbOption(
    cal
      .command('add-feed')
      .description('add an iCal (.ics) feed from an https URL or a file; `calendar sync` imports it')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .requiredOption('--name <name>', 'a short name for the feed, e.g. airbnb')
      .option('--url <url>', 'https URL of the feed')
      .option('--file <file>', 'path of an .ics file')
      .option('--json', 'print JSON'),
  ).action((o: Common & { name: string; url?: string; file?: string }) =>
    run(o.json, async () => {
      await addCalendarFeed({
        dataDir: o.dataDir,
        name: o.name,
        ...(o.url ? { url: o.url } : {}),
        ...(o.file ? { file: o.file } : {}),
        ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
      });
      if (o.json) printJson({ added: o.name });
      else process.stdout.write(`added feed ${o.name}; run \`vrp node calendar sync\` to import it\n`);
    }),
  );
  dbOption(
    cal
      .command('sync')
      .description('import every feed; a failed feed marks the calendar unsafe (offers become non-quoteable)')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .option('--ca <file>', 'extra trusted CA certificate (PEM) for https feeds')
      .option('--timeout <ms>', 'per-feed deadline in milliseconds', positiveInt, 10_000)
      .option('--json', 'print JSON'),
  ).action((o: Common & { ca?: string; timeout: number }) =>
    run(o.json, async () => {
      const results = await syncCalendar({
        dataDir: o.dataDir,
        timeoutMs: o.timeout,
        ...(o.ca ? { ca: [readFileSync(o.ca, 'utf8')] } : {}),
        ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
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
  dbOption(
    cal
      .command('block')
      .description('block nights [from, to) (a host block or a booking taken elsewhere)')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .requiredOption('--from <date>', 'first blocked night YYYY-MM-DD')
      .requiredOption('--to <date>', 'first free night after the block (like a check-out date)')
      .option('--booking', 'record it as a booking rather than a host block')
      .option('--note <text>', 'a note for the host')
      .option('--json', 'print JSON'),
  ).action((o: Common & { from: string; to: string; booking?: boolean; note?: string }) =>
    run(o.json, async () => {
      const b = await addCalendarBlock({
        dataDir: o.dataDir,
        from: o.from,
        to: o.to,
        kind: o.booking ? 'booking' : 'block',
        ...(o.note ? { note: o.note } : {}),
        ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
      });
      if (o.json) printJson(b);
      else process.stdout.write(`blocked ${b.start_date} → ${b.end_date} (${b.kind} ${b.id})\n`);
    }),
  );
  dbOption(
    cal
      .command('unblock')
      .description('remove a host block or booking by id (see `calendar list`)')
      .argument('<id>', 'the block id')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .option('--json', 'print JSON'),
  ).action((id: string, o: Common) =>
    run(o.json, async () => {
      await removeCalendarBlock({ dataDir: o.dataDir, id, ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}) });
      if (o.json) printJson({ removed: id });
      else process.stdout.write(`removed block ${id}\n`);
    }),
  );
  dbOption(
    cal
      .command('remove-feed')
      .description('remove a calendar feed and every range it imported')
      .argument('<name>', 'the feed name')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .option('--json', 'print JSON'),
  ).action((name: string, o: Common) =>
    run(o.json, async () => {
      await removeCalendarFeed({ dataDir: o.dataDir, name, ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}) });
      if (o.json) printJson({ removed: name });
      else process.stdout.write(`removed feed ${name} and its imported ranges\n`);
    }),
  );
  dbOption(
    cal
      .command('list')
      .description('feeds with their last sync, and every blocked range')
      .requiredOption('--data-dir <dir>', 'node data directory')
      .option('--json', 'print JSON'),
  ).action((o: Common) =>
    run(o.json, async () => {
      const r = await listCalendar({ dataDir: o.dataDir, ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}) });
      if (o.json) printJson(r);
      else {
        for (const f of r.feeds)
          process.stdout.write(
            `feed ${f.name}: ${f.url ?? f.file}  last success ${f.last_success_at ?? 'never'}${f.last_error ? `  last error ${f.last_error}` : ''}\n`,
          );
        for (const b of r.blocks)
          process.stdout.write(`${b.id}  ${b.start_date} → ${b.end_date}  ${b.kind}${b.feed_name ? ` (${b.feed_name})` : ''}\n`);
      }
    }),
  );
}
