/**
 * Serve a node over https (`vrp node serve`, and the programmatic server every test uses).
 * The public origin is always `https://{canonical_domain}`; the listening address and port are
 * deployment detail that never appears in a document.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { serve } from '@hono/node-server';
import { isVrpError } from '@vrpkit/core';
import type { NodeStoreOptions } from './admin/store.js';
import { nodePaths, storeTargetFor } from './datadir.js';
import { NodeError } from './errors.js';
import { createNodeApp, type RequestLogEntry } from './http/app.js';
import type { OfferService } from './service.js';
import { createOfferService } from './service.js';
import { NodeStore } from './store/store.js';
import { ensureDevTls } from './tls.js';

/** `clock` is the node's clock, injected in tests; TLS validity follows the real clock. */
export interface ServeNodeOptions extends NodeStoreOptions {
  /** 0 = ephemeral. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Use (and create once) the dev CA and server certificate under `<dataDir>/tls/`. */
  dev?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  /**
   * Most simultaneous connections one client address may hold (default
   * `DEFAULT_MAX_CONNECTIONS_PER_CLIENT`); a connection past it is closed as it is accepted,
   * before the TLS handshake.
   */
  maxConnectionsPerClient?: number;
  log?: (entry: RequestLogEntry) => void;
  /** Internal failures while serving; default: `error[code]: message` on stderr. */
  onError?: (error: unknown) => void;
  /** `--offer-cache-max-age`: seconds a signed offer is reused (0 = sign every offer; default 60). */
  offerCacheMaxAgeSeconds?: number;
}

/**
 * Default per-client connection cap: far above what one agent or browser opens (browsers use
 * six per origin, the benchmarks 32), far below what exhausts memory (each TLS connection holds
 * its own buffers; thousands from one address are an attack, not a client).
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 64;

/**
 * Time and size limits on every connection, tighter than Node's defaults (60 s for headers,
 * 300 s for a request, 120 s for a TLS handshake): a request to a node is a short GET or a
 * small JSON POST, so a slow sender is holding a connection, not sending a request.
 */
export const SERVER_LIMITS = {
  /** A TLS handshake must finish within this. */
  handshakeTimeout: 10_000,
  /** The request headers must arrive within this. */
  headersTimeout: 10_000,
  /** The whole request (headers and body) must arrive within this. */
  requestTimeout: 30_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeout: 5_000,
  /** Largest request head (request line and headers) in bytes: Node's default, stated. */
  maxHeaderSize: 16 * 1024,
} as const;

/**
 * Close a connection at accept when its client address already holds `max` open ones. Runs
 * before the TLS listener, so a refused connection costs no handshake and reaches no handler.
 */
function capConnectionsPerClient(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.prependListener('connection', (socket: Socket) => {
    const client = socket.remoteAddress ?? '';
    const held = open.get(client) ?? 0;
    if (held >= max) {
      socket.destroy();
      return;
    }
    open.set(client, held + 1);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else open.delete(client);
    });
  });
}

function reportInternalError(e: unknown): void {
  const code = isVrpError(e) ? e.code : 'internal_error';
  process.stderr.write(`error[${code}]: ${e instanceof Error ? e.message : String(e)}\n`);
}

export interface ServedNode {
  origin: string;
  canonicalDomain: string;
  address: string;
  port: number;
  caFile?: string;
  caPem?: string;
  service: OfferService;
  close(): Promise<void>;
}

/** The TLS certificate and key a node serves with (the host's own, or the dev CA's under `<dataDir>/tls/`). */
export function loadServeTls(
  o: Pick<ServeNodeOptions, 'dataDir' | 'dev' | 'tlsCert' | 'tlsKey'>,
  domain: string,
): Promise<{ certPem: string; keyPem: string; caFile?: string; caPem?: string }> {
  if (o.tlsCert || o.tlsKey) {
    if (!o.tlsCert || !o.tlsKey) throw new NodeError('tls_incomplete', '--tls-cert and --tls-key go together');
    try {
      return Promise.resolve({ certPem: readFileSync(o.tlsCert, 'utf8'), keyPem: readFileSync(o.tlsKey, 'utf8') });
    } catch (cause) {
      throw new NodeError('tls_unreadable', `cannot read the TLS certificate or key: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  }
  if (o.dev) return ensureDevTls(nodePaths(o.dataDir).tls, domain);
  throw new NodeError('tls_required', 'a node serves https only: pass --tls-cert and --tls-key, or --dev for a local dev CA');
}

export async function serveNode(o: ServeNodeOptions): Promise<ServedNode> {
  const maxPerClient = o.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT;
  if (!Number.isInteger(maxPerClient) || maxPerClient < 1)
    throw new NodeError('invalid_connection_cap', 'the per-client connection cap is a positive integer');
  const store = await NodeStore.open(storeTargetFor(o.dataDir, o.databaseUrl));
  try {
    const service = await createOfferService({
      store,
      keysDir: nodePaths(o.dataDir).keys,
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.offerCacheMaxAgeSeconds !== undefined ? { offerCacheMaxAgeSeconds: o.offerCacheMaxAgeSeconds } : {}),
    });
    const tls = await loadServeTls(o, service.canonicalDomain);
    const app = createNodeApp(service, { onError: o.onError ?? reportInternalError, ...(o.log ? { log: o.log } : {}) });
    const server = serve({
      fetch: app.fetch,
      port: o.port ?? 0,
      hostname: o.host ?? '127.0.0.1',
      createServer,
      serverOptions: {
        key: tls.keyPem,
        cert: tls.certPem,
        handshakeTimeout: SERVER_LIMITS.handshakeTimeout,
        maxHeaderSize: SERVER_LIMITS.maxHeaderSize,
      },
    }) as Server;
    server.headersTimeout = SERVER_LIMITS.headersTimeout;
    server.requestTimeout = SERVER_LIMITS.requestTimeout;
    server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeout;
    capConnectionsPerClient(server, maxPerClient);
    await new Promise<void>((resolveListen, reject) => {
      server.once('listening', resolveListen);
      server.once('error', (e: NodeJS.ErrnoException) => reject(new NodeError('listen_failed', `cannot listen: ${e.code ?? e.message}`)));
    });
    const addr = server.address() as AddressInfo;
    let closed: Promise<void> | undefined;
    return {
      origin: service.origin,
      canonicalDomain: service.canonicalDomain,
      address: addr.address,
      port: addr.port,
      ...(tls.caFile ? { caFile: tls.caFile, caPem: tls.caPem } : {}),
      service,
      close() {
        closed ??= new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }).then(() => store.close());
        return closed;
      },
    };
  } catch (e) {
    await store.close().catch(() => {});
    throw e;
  }
}
