import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_SYNC_INTERVAL_MS, isServeWorker, readPropertyFile } from '@vrpkit/node';
import {
  DEFAULT_PLATFORM_KEEP_ALIVE_MS,
  DEFAULT_PLATFORM_MAX_CONNECTIONS,
  DEFAULT_PLATFORM_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_SYNC_CONCURRENCY,
  DEFAULT_SYNC_LEASE_MS,
  DEFAULT_SYNC_PER_HOST,
  DEFAULT_TENANT_CACHE_SIZE,
  DEFAULT_TLS_CONTEXT_CACHE_SIZE,
  generateMasterKeyText,
  importTenants,
  loadMasterKey,
  MASTER_KEY_ENV,
  MIN_SYNC_LEASE_MS,
  PLATFORM_DATABASE_URL_ENV,
  PlatformError,
  type PlatformLogEntry,
  PlatformStore,
  parseAdminListen,
  runPlatformWorker,
  type SyncLogEntry,
  SyncMetrics,
  servePlatform,
  servePlatformCluster,
  startAdminListener,
  startSyncWorker,
  syncLagSeconds,
  type TenantStatus,
} from '@vrpkit/platform';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { printJson, reportError, run, terminalSafe } from '../io.js';
import { port, serveUntilSignal, workerCount } from './node.js';

interface Common {
  databaseUrl?: string;
  masterKeyFile?: string;
  json?: boolean;
}

/**
 * The tenant a feed command is about: `DOMAIN` as its argument, like every other `tenants`
 * command, or `--domain DOMAIN` — both feed commands accept both, so neither shape is a trap.
 */
function feedTenant(command: string, positional: string | undefined, option: string | undefined): string {
  if (positional !== undefined && option !== undefined && positional !== option)
    throw new PlatformError('usage', `two different tenants given: ${positional} and --domain ${option}`);
  const domain = positional ?? option;
  if (domain === undefined) throw new PlatformError('usage', `give the tenant: vrp platform tenants ${command} DOMAIN …`);
  return domain;
}

/** The options every `vrp platform` command shares: which database, which master key, `--json`. */
function platformCommand(c: Command, o: { masterKey?: boolean } = {}): Command {
  c.option('--database-url <url>', `platform database: postgres://…[?schema=name] or sqlite:PATH (default: ${PLATFORM_DATABASE_URL_ENV})`);
  if (o.masterKey)
    c.option('--master-key-file <file>', `file holding the 256-bit master key that seals tenant keys (default: ${MASTER_KEY_ENV})`);
  return c.option('--json', 'print JSON');
}

/** Open the platform database for one command and close it afterwards, whatever happened. */
async function withStore<T>(o: Common, fn: (store: PlatformStore) => Promise<T>): Promise<T> {
  const store = await PlatformStore.open(o.databaseUrl);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function positiveInt(v: string): number {
  if (!/^[1-9]\d{0,6}$/.test(v)) throw new InvalidArgumentError('must be a positive integer');
  return Number(v);
}

/** An `--older-than` age in ms: a whole number with its unit (s, m, h, d). */
function age(v: string): number {
  const m = /^([1-9]\d{0,5}|0)(s|m|h|d)$/.exec(v);
  if (!m) throw new InvalidArgumentError('an age with its unit such as 90d, 12h, 30m or 45s');
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

/** A positive duration in ms (`--interval`, `--lease`): a whole number with its unit. */
function duration(v: string): number {
  const ms = age(v);
  if (ms === 0) throw new InvalidArgumentError('a positive duration with its unit such as 60s, 15m or 1h');
  return ms;
}

/** A `--keep-alive` duration: 1 s to 1 hour. */
function keepAlive(v: string): number {
  const ms = duration(v);
  if (ms < 1000 || ms > 3_600_000) throw new InvalidArgumentError('from 1s to 1h');
  return ms;
}

/** `--admin-listen`: an address outside loopback and private networks is a usage error (exit 64) before anything starts. */
function adminListen(v: string): { host: string; port: number } {
  try {
    return parseAdminListen(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

/** A `--lease` duration: at least MIN_SYNC_LEASE_MS, checked before anything is opened. */
function lease(v: string): number {
  const ms = duration(v);
  if (ms < MIN_SYNC_LEASE_MS) throw new InvalidArgumentError(`at least ${MIN_SYNC_LEASE_MS / 1000}s`);
  return ms;
}

/** One `--json` event line on stdout, stamped with the time it happened. */
function printEvent({ event, ...fields }: { event: string; [field: string]: unknown }): void {
  process.stdout.write(`${JSON.stringify({ event, ts: new Date().toISOString(), ...fields })}\n`);
}

/** Request log sink: JSON lines on stdout with --json, a short line on stderr otherwise (query digests only, never raw input). */
function platformLogger(json: boolean): (e: PlatformLogEntry) => void {
  if (json) return (e) => printEvent({ ...e });
  return (e) =>
    process.stderr.write(
      e.event === 'request'
        ? `${e.tenant} ${e.method} ${terminalSafe(e.path)}${e.query_sha256 ? `?#${e.query_sha256}` : ''} ${e.status} ${e.latency_ms}ms\n`
        : `misdirected (${e.reason}) 421\n`,
    );
}

/** Sync log sink: every feed as a JSON line on stdout with --json (a feed URL as its origin and a digest), else failures only on stderr. */
function syncLogger(json: boolean): (e: SyncLogEntry) => void {
  if (json) return (e) => printEvent({ ...e });
  return (e) => {
    if (e.outcome === 'failed')
      process.stderr.write(`error[${e.error?.code}]: ${e.tenant} feed ${e.feed}: ${terminalSafe(e.error?.message ?? '')}\n`);
  };
}

/** `vrp platform …` — one deployment serving many host domains, each a full VRP node. */
export function registerPlatformCommands(program: Command): void {
  const platform = program
    .command('platform')
    .description('platform mode: serve many host domains, each its own VRP node, from PostgreSQL (or SQLite)');

  platformCommand(
    platform
      .command('init')
      .description("create the platform's tables (versioned migrations) and record which master key seals tenant keys")
      .option('--operator-domain <domain>', "the platform's own domain, serving the operator's MCP surface"),
    { masterKey: true },
  ).action((o: Common & { operatorDomain?: string }) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const r = await withStore(o, (s) => s.init(master, o.operatorDomain ?? null));
      if (o.json) printJson({ ...r, master_key_id: master.id });
      else process.stdout.write(`${r.created ? 'initialized' : 'already initialized'}: platform (master key ${master.id})\n`);
    }),
  );

  const masterKey = platform.command('master-key').description('the master key that seals every tenant private key');
  masterKey
    .command('generate')
    .description('write a fresh random master key to a new file (mode 0600)')
    .requiredOption('--out <file>', 'file to create (never overwritten)')
    .option('--json', 'print JSON')
    .action((o: { out: string; json?: boolean }) =>
      run(o.json, async () => {
        if (existsSync(o.out)) throw new PlatformError('file_exists', `${o.out} already exists`);
        writeFileSync(o.out, generateMasterKeyText(), { mode: 0o600, flag: 'wx' });
        const id = loadMasterKey(o.out).id;
        if (o.json) printJson({ file: o.out, master_key_id: id });
        else process.stdout.write(`wrote master key ${id} to ${o.out}\n`);
      }),
    );
  platformCommand(
    masterKey
      .command('rotate')
      .description('re-seal every tenant private key under a new master key (resumable; serve with both keys meanwhile)')
      .requiredOption('--new-master-key-file <file>', 'file holding the new master key'),
    { masterKey: true },
  ).action((o: Common & { newMasterKeyFile: string }) =>
    run(o.json, async () => {
      const from = loadMasterKey(o.masterKeyFile);
      const to = loadMasterKey(o.newMasterKeyFile);
      const r = await withStore(o, (s) => s.rotateMasterKey(from, to, (n) => process.stderr.write(`re-sealed ${n} keys\n`)));
      if (o.json) printJson({ ...r, master_key_id: to.id });
      else process.stdout.write(`re-sealed ${r.resealed} keys under master key ${to.id}\n`);
    }),
  );

  platformCommand(
    platform
      .command('serve')
      .description('serve every enabled tenant over https: certificate by SNI, tenant by Host (421 for any other host)')
      .option('--port <port>', 'port to listen on (0 = ephemeral)', port, 0)
      .option('--host <addr>', 'address to listen on', '127.0.0.1')
      .addOption(
        new Option('--tls-dir <dir>', 'certificates: DOMAIN.pem + DOMAIN.key, or _wildcard.PARENT.pem + .key; re-read when they change'),
      )
      .addOption(new Option('--dev <dir>', 'issue a certificate per tenant from the local dev CA in DIR (ca.pem)').conflicts('tlsDir'))
      .option('--previous-master-key-file <file>', 'the previous master key, while `master-key rotate` runs')
      .option('--tenant-cache <n>', 'most tenants held loaded in this process', positiveInt, DEFAULT_TENANT_CACHE_SIZE)
      .option(
        '--tls-context-cache <n>',
        'most TLS contexts held (about 30 KB each; an evicted name rebuilds its own at its next handshake)',
        positiveInt,
        DEFAULT_TLS_CONTEXT_CACHE_SIZE,
      )
      .addOption(
        new Option('--keep-alive <duration>', "how long an idle connection is kept open (e.g. 65s; above a load balancer's idle timeout)")
          .argParser(keepAlive)
          .default(DEFAULT_PLATFORM_KEEP_ALIVE_MS, '65s'),
      )
      .option(
        '--max-connections-per-client <n>',
        'most open connections from one client address (closed at accept past it)',
        positiveInt,
        DEFAULT_PLATFORM_MAX_CONNECTIONS_PER_CLIENT,
      )
      .option('--max-connections <n>', 'most open connections in all, per process', positiveInt, DEFAULT_PLATFORM_MAX_CONNECTIONS)
      .option(
        '--admin-listen <host:port>',
        'serve /metrics (Prometheus), /healthz and /readyz over plain http on this loopback or private address',
        adminListen,
      )
      .option('--workers <n>', 'processes serving on the one port (node:cluster; one per core signs on every core)', workerCount, 1),
    { masterKey: true },
  ).action(
    (
      o: Common & {
        port: number;
        host: string;
        tlsDir?: string;
        dev?: string;
        previousMasterKeyFile?: string;
        tenantCache: number;
        tlsContextCache: number;
        keepAlive: number;
        maxConnectionsPerClient: number;
        maxConnections: number;
        adminListen?: { host: string; port: number };
        workers: number;
      },
    ) =>
      run(o.json, async () => {
        if (!o.tlsDir && !o.dev)
          throw new PlatformError('tls_required', 'pass --tls-dir DIR with certificates, or --dev DIR for a local dev CA');
        const masterKeys = [loadMasterKey(o.masterKeyFile), ...(o.previousMasterKeyFile ? [loadMasterKey(o.previousMasterKeyFile)] : [])];
        const store = await PlatformStore.open(o.databaseUrl);
        try {
          const options = {
            store,
            masterKeys,
            tls: o.tlsDir ? ({ kind: 'dir', dir: o.tlsDir } as const) : ({ kind: 'dev', dir: o.dev! } as const),
            host: o.host,
            port: o.port,
            tenantCacheSize: o.tenantCache,
            tlsContextCacheSize: o.tlsContextCache,
            keepAliveMs: o.keepAlive,
            maxConnectionsPerClient: o.maxConnectionsPerClient,
            maxConnections: o.maxConnections,
            log: platformLogger(!!o.json),
          };
          // A forked worker (same argv) serves and reports to the primary, which prints the banner and serves the admin listener.
          if (isServeWorker()) return await runPlatformWorker(options);
          const served =
            o.workers > 1
              ? await servePlatformCluster({ ...options, ...(o.adminListen ? { adminListen: o.adminListen } : {}) }, o.workers)
              : await servePlatform({ ...options, ...(o.adminListen ? { adminListen: o.adminListen } : {}) });
          if (o.json)
            printEvent({
              event: 'listening',
              address: served.address,
              port: served.port,
              ca: served.caFile ?? null,
              admin_port: served.admin?.port ?? null,
              pid: process.pid,
              ...('workerPids' in served ? { workers: served.workerPids.length, worker_pids: served.workerPids } : {}),
            });
          else
            process.stdout.write(
              `serving every tenant on ${served.address}:${served.port}${o.workers > 1 ? ` with ${o.workers} workers` : ''}\nCtrl-C stops the platform.\n`,
            );
          // A cluster also ends when one of its workers dies (it has already stopped the others).
          const signal = await ('stopped' in served ? Promise.race([serveUntilSignal(served), served.stopped]) : serveUntilSignal(served));
          if (o.json) printEvent({ event: 'stopped', reason: signal ?? 'worker_exited' });
        } finally {
          await store.close();
        }
      }),
  );

  platformCommand(
    platform
      .command('sync-worker')
      .description(
        "import the tenants' iCal feeds; run any number of workers on any number of machines (feeds are leased from the database, " +
          "none is fetched twice at once, a killed worker's feeds are taken over when its leases expire)",
      )
      .addOption(
        new Option('--interval <duration>', 'time between successful syncs of a feed; a failed feed is retried sooner, backing off')
          .argParser(duration)
          .default(DEFAULT_SYNC_INTERVAL_MS, '15m'),
      )
      .option('--concurrency <n>', 'feeds in flight at once in this worker', positiveInt, DEFAULT_SYNC_CONCURRENCY)
      .option(
        '--per-host <n>',
        'fetches in flight at once per feed host, in this worker (not across workers: W workers make at most W × N)',
        positiveInt,
        DEFAULT_SYNC_PER_HOST,
      )
      .addOption(
        new Option('--lease <duration>', 'how long a claim holds a feed, at least 2s (a fetch gets at most half of it, 10 s at most)')
          .argParser(lease)
          .default(DEFAULT_SYNC_LEASE_MS, '60s'),
      )
      .option('--once', 'sync the feeds due now, then exit (status 1 if any failed)')
      .option('--feed-ca <file>', 'extra trusted CA certificate (PEM) for https feeds, beside the system roots')
      .option(
        '--allow-private-feeds',
        "also fetch feeds from loopback, private and link-local addresses (refused by default: a tenant's feed URL must not reach your network)",
      )
      .option(
        '--admin-listen <host:port>',
        'serve /metrics (Prometheus) and /healthz over plain http on this loopback or private address',
        adminListen,
      ),
  ).action(
    (
      o: Common & {
        interval: number;
        concurrency: number;
        perHost: number;
        lease: number;
        once?: boolean;
        feedCa?: string;
        allowPrivateFeeds?: boolean;
        adminListen?: { host: string; port: number };
      },
    ) =>
      run(o.json, async () => {
        const ca = o.feedCa ? [readFileSync(o.feedCa, 'utf8')] : undefined;
        const store = await PlatformStore.open(o.databaseUrl);
        try {
          const metrics = new SyncMetrics(() => syncLagSeconds(store));
          const worker = startSyncWorker({
            store,
            intervalMs: o.interval,
            concurrency: o.concurrency,
            perHost: o.perHost,
            leaseMs: o.lease,
            once: !!o.once,
            ...(ca ? { ca } : {}),
            allowPrivateFeeds: !!o.allowPrivateFeeds,
            metrics,
            log: syncLogger(!!o.json),
            onError: (e) => reportError(e, !!o.json),
          });
          const stop = () => void worker.stop();
          process.once('SIGINT', stop).once('SIGTERM', stop);
          try {
            const admin = o.adminListen
              ? await startAdminListener(o.adminListen, metrics.registry, () => store.info().then(() => true))
              : undefined;
            if (o.json)
              printEvent({
                event: 'started',
                owner: worker.owner,
                admin_port: admin?.port ?? null,
                pid: process.pid,
                allow_private_feeds: !!o.allowPrivateFeeds,
              });
            // Said once, at start: the feed address policy is off for this worker.
            if (o.allowPrivateFeeds)
              process.stderr.write(
                'warning: --allow-private-feeds: feeds may be fetched from loopback, private and link-local addresses\n',
              );
            const totals = await worker.done.finally(() => admin?.close());
            if (o.json) printEvent({ event: 'stopped', ...totals });
            else process.stdout.write(`synced ${totals.ok} feeds, ${totals.failed} failed\n`);
            if (o.once && totals.failed > 0) process.exitCode = 1;
          } finally {
            await worker.stop();
            process.off('SIGINT', stop).off('SIGTERM', stop);
          }
        } finally {
          await store.close();
        }
      }),
  );

  const keys = platform.command('keys').description("tenants' Ed25519 signing keys (Core VRP v0.1 §3.1)");
  platformCommand(
    keys
      .command('rotate')
      .description('rotate the key of every tenant whose key is older than AGE; safe while serving and from several machines at once')
      .requiredOption('--older-than <age>', 'a key age with its unit: 90d, 12h, 30m or 45s', age)
      .option('--batch <n>', 'tenants per transaction', positiveInt, 100),
    { masterKey: true },
  ).action((o: Common & { olderThan: number; batch: number }) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const r = await withStore(o, (s) =>
        s.rotateKeysOlderThan(master, s.clock.now() - o.olderThan, o.batch, (n) => process.stderr.write(`rotated ${n}\n`)),
      );
      if (o.json) printJson({ rotated: r.rotated.length, domains: r.rotated });
      else process.stdout.write(`rotated ${r.rotated.length} tenant keys\n`);
    }),
  );
  platformCommand(
    keys
      .command('revoke')
      .description(
        'revoke a tenant key at once (a revoked signing key is replaced first); every process stops publishing it at its next request',
      )
      .argument('<domain>')
      .argument('<kid>'),
    { masterKey: true },
  ).action((domain: string, kid: string, o: Common) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const r = await withStore(o, (s) => s.revokeTenantKey(master, domain, kid));
      if (o.json) printJson(r);
      else process.stdout.write(`revoked ${r.kid}${r.new_active_kid ? `; ${r.new_active_kid} signs now` : ''}\n`);
    }),
  );

  const tenants = platform.command('tenants').description('the host domains this platform serves');

  platformCommand(
    tenants
      .command('add')
      .description('add a tenant: its canonical domain, property and first Ed25519 signing key (sealed)')
      .requiredOption('--domain <domain>', 'the tenant canonical domain, e.g. villa.example')
      .requiredOption('--property <file>', 'property description, JSON or YAML'),
    { masterKey: true },
  ).action((o: Common & { domain: string; property: string }) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const property = readPropertyFile(o.property);
      await withStore(o, (s) => s.addTenants(master, [{ domain: o.domain, property }]));
      if (o.json) printJson({ domain: o.domain, property_id: property.property_id });
      else process.stdout.write(`added ${o.domain} (property ${property.property_id})\n`);
    }),
  );

  platformCommand(
    tenants
      .command('import')
      .description('add a tenant per property file in DIR (DOMAIN.yaml|.yml|.json); idempotent; bad files are reported, the rest import')
      .argument('<dir>', 'folder of property files'),
    { masterKey: true },
  ).action((dir: string, o: Common) =>
    run(o.json, async () => {
      const master = loadMasterKey(o.masterKeyFile);
      const r = await withStore(o, (s) => importTenants(s, master, dir, (p) => process.stderr.write(`imported ${p.done}/${p.total}\n`)));
      if (o.json) printJson(r);
      else {
        // File names and property fields are the importer's input: shown terminal-safe.
        for (const f of r.failed) process.stderr.write(`${terminalSafe(`${f.file}: ${f.field}: ${f.reason}`)}\n`);
        process.stdout.write(
          `${r.imported} imported, ${r.already_present} already present, ${r.failed.length} failed (of ${r.files} files)\n`,
        );
      }
      if (r.failed.length > 0) process.exitCode = 2;
    }),
  );

  platformCommand(
    tenants.command('list').description('list tenants').option('--status <status>', 'only active or disabled tenants'),
  ).action((o: Common & { status?: string }) =>
    run(o.json, async () => {
      if (o.status !== undefined && o.status !== 'active' && o.status !== 'disabled')
        throw new PlatformError('invalid_status', '--status is active or disabled');
      const list = await withStore(o, (s) => s.listTenants(o.status ? { status: o.status as TenantStatus } : {}));
      if (o.json) printJson(list);
      else for (const t of list) process.stdout.write(`${t.domain}\t${t.status}\t${terminalSafe(t.property_id)}\n`);
    }),
  );

  platformCommand(
    tenants
      .command('show')
      .description("a tenant's status, property, key ring and calendar feeds with their sync state (public data only; feed URLs redacted)")
      .argument('<domain>'),
  ).action((domain: string, o: Common) =>
    run(o.json, async () => {
      const t = await withStore(o, (s) => s.showTenant(domain));
      if (o.json) printJson(t);
      else {
        // The property's name is the tenant's text (controls and bidi overrides included): shown terminal-safe.
        process.stdout.write(
          `${t.domain} ${t.status} property ${terminalSafe(t.property_id)} (${terminalSafe(t.name)}) revision ${t.revision}\n`,
        );
        for (const k of t.keys) process.stdout.write(`  key ${k.kid} ${k.status} created ${k.created_at}\n`);
        for (const f of t.feeds)
          process.stdout.write(
            `  feed ${f.name} ${f.state} ${f.url}\n    last success ${f.last_success_at ?? 'never'}` +
              `${f.stale_at ? ` (stale from ${f.stale_at})` : ''}, last error ${f.last_error_code ?? 'none'}` +
              `${f.failures > 0 ? ` (${f.failures} in a row)` : ''}, next due ${f.next_due_at}\n`,
          );
      }
    }),
  );

  for (const [name, status, verb] of [
    ['disable', 'disabled', 'disabled'],
    ['enable', 'active', 'enabled'],
  ] as const) {
    platformCommand(
      tenants
        .command(name)
        .description(name === 'disable' ? 'stop serving a tenant (every process, from its next request)' : 'serve a disabled tenant again')
        .argument('<domain>'),
    ).action((domain: string, o: Common) =>
      run(o.json, async () => {
        await withStore(o, (s) => s.setTenantStatus(domain, status));
        if (o.json) printJson({ domain, status });
        else process.stdout.write(`${verb} ${domain}\n`);
      }),
    );
  }

  platformCommand(
    tenants
      .command('add-feed')
      .description('add an iCal feed (https URL) to a tenant; its offers are non-quoteable until a sync worker imports it')
      .argument('[domain]', 'the tenant canonical domain (or --domain)')
      .option('--domain <domain>', 'the tenant canonical domain (or as the argument)')
      .requiredOption('--name <name>', 'feed name: 1–63 letters, digits, . _ -')
      .requiredOption('--url <url>', 'https URL of the .ics export (its path or query may hold a secret token; neither is ever logged)'),
  ).action((arg: string | undefined, o: Common & { domain?: string; name: string; url: string }) =>
    run(o.json, async () => {
      const domain = feedTenant('add-feed', arg, o.domain);
      await withStore(o, (s) => s.addTenantFeeds([{ domain, name: o.name, url: o.url }]));
      if (o.json) printJson({ domain, feed: o.name });
      else process.stdout.write(`added feed ${o.name} to ${domain}\n`);
    }),
  );

  platformCommand(
    tenants
      .command('remove-feed')
      .description("remove a tenant's iCal feed and the blocks it imported; its freshness no longer counts for the tenant's offers")
      .argument('[domain]', 'the tenant canonical domain (or --domain)')
      .option('--domain <domain>', 'the tenant canonical domain (or as the argument)')
      .requiredOption('--feed <name-or-url>', "the feed's name, or its URL"),
  ).action((arg: string | undefined, o: Common & { domain?: string; feed: string }) =>
    run(o.json, async () => {
      const domain = feedTenant('remove-feed', arg, o.domain);
      const r = await withStore(o, (s) => s.removeTenantFeed(domain, o.feed));
      if (o.json) printJson({ domain, feed: r.name, removed: true });
      else process.stdout.write(`removed feed ${r.name} from ${domain}\n`);
    }),
  );

  platformCommand(tenants.command('remove').description('delete a tenant and its keys, feeds and calendar').argument('<domain>')).action(
    (domain: string, o: Common) =>
      run(o.json, async () => {
        await withStore(o, (s) => s.removeTenant(domain));
        if (o.json) printJson({ domain, removed: true });
        else process.stdout.write(`removed ${domain}\n`);
      }),
  );
}
