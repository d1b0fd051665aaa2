/**
 * Start the host console beside a serving node (`vrp node serve --console`): its own listener
 * (listen.ts), its app (app.ts) over the node's store, readiness probe and offer service, its
 * changes made by the CLI's operations (ports.ts `cliActions`), and the URL it was reached at
 * recorded for `vrp node console enroll`.
 */
import { X509Certificate } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Drain } from '@vrpkit/core';
import type { AcmeStatus } from '../acme.js';
import type { NodeStoreOptions } from '../admin/store.js';
import { NodeError } from '../errors.js';
import type { ReadinessReport } from '../health.js';
import type { FeedFetchOptions } from '../ical.js';
import type { NodePublisher } from '../service/index.js';
import type { NodeStore } from '../store/store.js';
import type { Activity } from './activity.js';
import { type ConsoleMount, createConsoleApp } from './app.js';
import type { CertificateView, ConsoleActionEntry } from './context.js';
import { type ConsoleListenOptions, consoleHosts, consoleOrigin, consoleScheme, recordConsoleOrigin } from './listen.js';
import { ConsoleCredentials } from './passkeys.js';
import { type ConsoleActions, cliActions } from './ports.js';

export interface ConsoleParts {
  node: NodeStoreOptions & { feeds?: FeedFetchOptions };
  store: NodeStore;
  publisher: NodePublisher;
  readiness: () => Promise<ReadinessReport>;
  activity: Activity;
  /** The node's certificate, for a console on a public address. */
  tls: { certPem: string; keyPem: string } | null;
  /** Called after the console decided a booking: the booking upkeep's `wake`, so the guest's notice (the webhook event) leaves at once. */
  onBookingDecided?: () => void;
  /** With ACME: the certificate's expiry and renewals now (the served pair changes as it renews). */
  acmeStatus?: () => AcmeStatus;
  onError: (e: unknown) => void;
  onAction?: (entry: ConsoleActionEntry) => void;
  /** The serving node's background calendar sync, when it runs one (`--sync-interval`): the feeds' next sync times. */
  nextSync?: (feed: string) => number | undefined;
  /** The node's listener limits (serve.ts `listenWithLimits`), passed in so the console is limited alike. */
  listen: (server: Server, o: { maxPerClient: number; failed: (e: NodeJS.ErrnoException) => Error }) => Promise<Drain>;
  maxConnectionsPerClient: number;
}

/** What the console's app is made of (a mounted console has no listener of its own). */
export type ConsoleAppParts = Omit<ConsoleParts, 'listen' | 'maxConnectionsPerClient'>;

export interface ServedConsole {
  origin: string;
  address: string;
  port: number;
  drain: Drain;
}

/** `actions` whose booking decisions also call `wake` (the CLI's process has no upkeep to wake; the serving node has). */
function withBookingWake(actions: ConsoleActions, wake: (() => void) | undefined): ConsoleActions {
  if (!wake) return actions;
  return {
    ...actions,
    decideBooking: async (id, decision, reason) => {
      const decided = await actions.decideBooking(id, decision, reason);
      wake();
      return decided;
    },
  };
}

/** The served certificate's expiry (ACME's status when it renews it), or null behind a proxy. */
function certificateView(parts: Pick<ConsoleParts, 'tls' | 'acmeStatus'>): () => CertificateView | null {
  const { acmeStatus, tls } = parts;
  if (acmeStatus)
    return () => {
      const s = acmeStatus();
      return { not_after: s.not_after, acme: s };
    };
  if (!tls) return () => null;
  const notAfter = new Date(new X509Certificate(tls.certPem).validTo).toISOString();
  return () => ({ not_after: notAfter, acme: null });
}

/** How a console listens, whatever it serves: its certificate (an https console), the name that certificate is for, the server limits. */
export interface ConsoleListenerParts {
  /** The certificate an https console serves (required on a public address). */
  tls: { certPem: string; keyPem: string } | null;
  /** The name `tls` is for: the console answers it on https. */
  tlsName?: string;
  /** The listener limits (serve.ts `listenWithLimits`). */
  listen: (server: Server, o: { maxPerClient: number; failed: (e: NodeJS.ErrnoException) => Error }) => Promise<Drain>;
  maxConnectionsPerClient: number;
}

/**
 * A console's listener (listen.ts rules: loopback or private by default, public only when asked
 * and over TLS): `makeApp` gets the scheme and the Host names the console answers, filled once
 * the port is known (a request before that finds none and is refused: fail closed).
 */
export async function listenConsole(
  o: ConsoleListenOptions,
  parts: ConsoleListenerParts,
  makeApp: (scheme: 'http' | 'https', hosts: Set<string>) => { fetch: (req: Request) => Response | Promise<Response> },
): Promise<ServedConsole> {
  const host = o.host ?? '127.0.0.1';
  const scheme = consoleScheme(host, { ...(o.public ? { public: true } : {}), tls: parts.tls !== null });
  const tlsDomain = scheme === 'https' ? parts.tlsName : undefined;
  const hosts = new Set<string>();
  const app = makeApp(scheme, hosts);
  const server = serve({
    fetch: app.fetch,
    port: o.port ?? 0,
    hostname: host,
    ...(scheme === 'https' && parts.tls
      ? { createServer: createHttpsServer, serverOptions: { key: parts.tls.keyPem, cert: parts.tls.certPem } }
      : { createServer: createHttpServer }),
  }) as Server | HttpServer;
  const drain = await parts.listen(server as Server, {
    maxPerClient: parts.maxConnectionsPerClient,
    failed: (e) => new NodeError('listen_failed', { address: `${host}:${o.port ?? 0}`, reason: e.code ?? e.message }),
  });
  const { port, address } = server.address() as AddressInfo;
  const names = { ...(o.names ? { names: o.names } : {}), ...(tlsDomain ? { tlsDomain } : {}) };
  for (const h of consoleHosts(scheme, host, port, names)) hosts.add(h);
  return { origin: consoleOrigin(scheme, host, port, names), address, port, drain };
}

/** The host console's app over the node's parts, answering `hosts` on `scheme` (at `proxied.base` behind the proxy). */
function hostConsole(parts: ConsoleAppParts, scheme: 'http' | 'https', hosts: Set<string>, proxied?: ConsoleMount) {
  return createConsoleApp({
    credentials: new ConsoleCredentials(parts.node.dataDir),
    scheme,
    hosts,
    reads: parts.store,
    certificate: certificateView(parts),
    actions: withBookingWake(cliActions(parts.node), parts.onBookingDecided),
    readiness: parts.readiness,
    activity: parts.activity,
    publisher: parts.publisher,
    now: () => parts.publisher.now(),
    onError: parts.onError,
    ...(parts.onAction ? { onAction: parts.onAction } : {}),
    ...(parts.nextSync ? { nextSync: parts.nextSync } : {}),
    ...(proxied ? { proxied } : {}),
  });
}

export async function startConsole(o: ConsoleListenOptions, parts: ConsoleParts): Promise<ServedConsole> {
  const served = await listenConsole(o, { ...parts, tlsName: parts.publisher.canonicalDomain }, (scheme, hosts) =>
    hostConsole(parts, scheme, hosts),
  );
  recordConsoleOrigin(parts.node.dataDir, served.origin);
  return served;
}

/** The host console at `base` behind the node's reverse proxy (`--console-path`): what serve.ts routes there, and its origin. */
export interface MountedConsole {
  base: string;
  origin: string;
  fetch: (req: Request) => Response | Promise<Response>;
}

/**
 * The console mounted at `base` for the proxy that serves `https://{canonical domain}`: it answers
 * that name only (as the proxy's `X-Forwarded-Host`), on https (the proxy terminates TLS, so the
 * cookies are `Secure` and the passkeys' origin is `https://{domain}`); serve.ts hands it the
 * trusted proxy's requests under `base`, with `base` taken off.
 */
export function mountConsole(base: string, parts: ConsoleAppParts): MountedConsole {
  const domain = parts.publisher.canonicalDomain;
  const app = hostConsole(parts, 'https', consoleHosts('https', domain, 443, {}), { base });
  const origin = `https://${domain}${base}`;
  recordConsoleOrigin(parts.node.dataDir, origin);
  return { base, origin, fetch: (req) => app.fetch(req) };
}
