/**
 * `vrp platform serve`: every enabled tenant over https, the certificate by SNI and the tenant by
 * Host, in one process or as `--workers` processes on one port, until SIGINT/SIGTERM.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { visibleEscapes } from '@vrpkit/core';
import { isServeWorker } from '@vrpkit/node';
import {
  DEFAULT_PLATFORM_KEEP_ALIVE_MS,
  DEFAULT_PLATFORM_MAX_CONNECTIONS,
  DEFAULT_PLATFORM_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_TENANT_CACHE_SIZE,
  DEFAULT_TLS_CONTEXT_CACHE_SIZE,
  loadMasterKey,
  type MasterKey,
  type PlatformLogEntry,
  type PlatformStore,
  runPlatformWorker,
  type ServePlatformOptions,
  servePlatform,
  servePlatformCluster,
} from '@vrpkit/platform';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CliError, usage } from '../../errors.js';
import { printEvent, run, serveUntilSignal } from '../../io.js';
import { port, positiveInt, shutdownGraceOption } from '../../options.js';
import { type ConsoleCommandOptions, consoleListen, consoleListenOptions } from '../console-options.js';
import { type GuestMailCommandOptions, guestMail, guestMailOptions } from '../guest-mail-options.js';
import { workerCount } from '../node/options.js';
import { adminListen, duration, type PlatformOptions, platformOptions, withStore } from './options.js';

interface ServeOptions extends PlatformOptions, ConsoleCommandOptions, GuestMailCommandOptions {
  consoleTlsCert?: string;
  consoleTlsKey?: string;
  port: number;
  host: string;
  tlsDir?: string;
  dev?: string;
  previousMasterKeyFile?: string;
  tenantCache: number;
  tlsContextCache: number;
  keepAlive: number;
  shutdownGrace?: number;
  maxConnectionsPerClient: number;
  maxConnections: number;
  adminListen?: { host: string; port: number };
  workers: number;
}

/** A `--keep-alive` duration: 1 s to 1 hour. */
function keepAlive(v: string): number {
  const ms = duration(v);
  if (ms < 1000 || ms > 3_600_000) throw new InvalidArgumentError('from 1s to 1h');
  return ms;
}

/** Request log sink: JSON lines on stdout with --json, a short line on stderr otherwise (query digests only, never raw input). */
function platformLogger(json: boolean): (e: PlatformLogEntry) => void {
  if (json) return (e) => printEvent({ ...e });
  return (e) =>
    process.stderr.write(
      e.event === 'request'
        ? `${e.tenant} ${e.method} ${visibleEscapes(e.path)}${e.query_sha256 ? `?#${e.query_sha256}` : ''} ${e.status} ${e.latency_ms}ms\n`
        : `misdirected (${e.reason}) 421\n`,
    );
}

function serveCommandOptions(c: Command): Command {
  return c
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
    .option('--workers <n>', 'processes serving on the one port (node:cluster; one per core signs on every core)', workerCount, 1)
    .addOption(shutdownGraceOption());
}

/** The operator console: off unless `--console`; a listener of its own, loopback by default. */
function consoleOptions(c: Command): Command {
  return consoleListenOptions(c, 'operator console (tenants, fleet health)', '--console-tls-cert and --console-tls-key')
    .option(
      '--console-tls-cert <file>',
      'with --console: PEM certificate the console serves over https (its first DNS name is the console’s)',
    )
    .option('--console-tls-key <file>', 'with --console: PEM private key of --console-tls-cert');
}

/** `--console …` as serve options (one process only: the console keeps its sessions in memory). */
function platformConsole(o: ServeOptions): Pick<ServePlatformOptions, 'console'> {
  if (!o.console) return {};
  if (o.workers > 1) throw new CliError('conflicting_options', { one: '--console', other: '--workers N' });
  if (!o.consoleTlsCert !== !o.consoleTlsKey) throw usage('give both --console-tls-cert and --console-tls-key, or neither');
  const tls = o.consoleTlsCert && o.consoleTlsKey ? consoleCertificate(o.consoleTlsCert, o.consoleTlsKey) : undefined;
  return {
    console: {
      ...consoleListen(o),
      ...(tls ? { tls } : {}),
      onAction: (e) => (o.json ? printEvent({ ...e }) : process.stderr.write(`console ${e.action} ${e.target ?? '-'} ${e.outcome}\n`)),
    },
  };
}

/** The console's certificate files, and the name it is for (its first DNS subject alternative name). */
function consoleCertificate(certFile: string, keyFile: string): { certPem: string; keyPem: string; name: string } {
  const certPem = readFileSync(certFile, 'utf8');
  const name = /DNS:([^,\s]+)/.exec(new X509Certificate(certPem).subjectAltName ?? '')?.[1];
  if (!name) throw usage('--console-tls-cert names no DNS name (subject alternative name) for the console');
  return { certPem, keyPem: readFileSync(keyFile, 'utf8'), name };
}

/** The serve options the command line names, on an open store. */
function serveOptions(o: ServeOptions, store: PlatformStore, masterKeys: MasterKey[]): Omit<ServePlatformOptions, 'adminListen'> {
  return {
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
    ...(o.shutdownGrace !== undefined ? { shutdownGraceSeconds: o.shutdownGrace } : {}),
    ...guestMail(o),
    log: platformLogger(!!o.json),
  };
}

async function serve(o: ServeOptions, store: PlatformStore, masterKeys: MasterKey[]): Promise<void> {
  const options = serveOptions(o, store, masterKeys);
  // A forked worker (same argv) serves and reports to the primary, which prints the banner and serves the admin listener.
  if (isServeWorker()) return runPlatformWorker(options);
  const admin = { ...(o.adminListen ? { adminListen: o.adminListen } : {}), ...platformConsole(o) };
  const served =
    o.workers > 1 ? await servePlatformCluster({ ...options, ...admin }, o.workers) : await servePlatform({ ...options, ...admin });
  if (o.json)
    printEvent({
      event: 'listening',
      address: served.address,
      port: served.port,
      ca: served.caFile ?? null,
      admin_port: served.admin?.port ?? null,
      ...('console' in served && served.console ? { console: served.console.origin } : {}),
      pid: process.pid,
      ...('workerPids' in served ? { workers: served.workerPids.length, worker_pids: served.workerPids } : {}),
    });
  else
    process.stdout.write(
      `serving every tenant on ${served.address}:${served.port}${o.workers > 1 ? ` with ${o.workers} workers` : ''}\n${
        'console' in served && served.console
          ? `operator console: ${served.console.origin} (enroll a passkey with: vrp platform console enroll --role operator)\n`
          : ''
      }Ctrl-C stops the platform.\n`,
    );
  // A cluster also ends when one of its workers dies (it has already stopped the others).
  const signal = await ('stopped' in served ? Promise.race([serveUntilSignal(served), served.stopped]) : serveUntilSignal(served));
  if (o.json) printEvent({ event: 'stopped', reason: signal ?? 'worker_exited' });
}

/** `vrp platform serve`. */
export function registerServe(platform: Command): void {
  const serveCommand = platform
    .command('serve')
    .description('serve every enabled tenant over https: certificate by SNI, tenant by Host (421 for any other host)');
  platformOptions(consoleOptions(guestMailOptions(serveCommandOptions(serveCommand))), { masterKey: true }).action((o: ServeOptions) =>
    run(o.json, async () => {
      if (!o.tlsDir && !o.dev) throw new CliError('tls_required');
      const masterKeys = [loadMasterKey(o.masterKeyFile), ...(o.previousMasterKeyFile ? [loadMasterKey(o.previousMasterKeyFile)] : [])];
      await withStore(o, (store) => serve(o, store, masterKeys));
    }),
  );
}
