/**
 * Serve a node over https (`vrp node serve`, and the programmatic server every test uses).
 * The public origin is always `https://{canonical_domain}`; the listening address and port are
 * deployment detail that never appears in a document.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { isVrpError } from '@vrpkit/core';
import { nodePaths, storeTargetFor } from './datadir.js';
import { NodeError } from './errors.js';
import { createNodeApp, type RequestLogEntry } from './http/app.js';
import type { OfferService } from './service.js';
import { createOfferService } from './service.js';
import { NodeStore } from './store/store.js';
import { ensureDevTls } from './tls.js';

export interface ServeNodeOptions {
  dataDir: string;
  /** 0 = ephemeral. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Use (and create once) the dev CA and server certificate under `<dataDir>/tls/`. */
  dev?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  /** The node's clock (epoch ms); injected in tests. TLS validity follows the real clock. */
  now?: () => number;
  databaseUrl?: string;
  log?: (entry: RequestLogEntry) => void;
  /** Internal failures while serving; default: `error[code]: message` on stderr. */
  onError?: (error: unknown) => void;
  /** `--offer-cache-max-age`: seconds a signed offer is reused (0 = sign every offer; default 60). */
  offerCacheMaxAgeSeconds?: number;
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
  const store = await NodeStore.open(storeTargetFor(o.dataDir, o.databaseUrl));
  try {
    const service = await createOfferService({
      store,
      keysDir: nodePaths(o.dataDir).keys,
      ...(o.now ? { now: o.now } : {}),
      ...(o.offerCacheMaxAgeSeconds !== undefined ? { offerCacheMaxAgeSeconds: o.offerCacheMaxAgeSeconds } : {}),
    });
    const tls = await loadServeTls(o, service.canonicalDomain);
    const app = createNodeApp(service, { onError: o.onError ?? reportInternalError, ...(o.log ? { log: o.log } : {}) });
    const server = serve({
      fetch: app.fetch,
      port: o.port ?? 0,
      hostname: o.host ?? '127.0.0.1',
      createServer,
      serverOptions: { key: tls.keyPem, cert: tls.certPem },
    });
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
          (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        }).then(() => store.close());
        return closed;
      },
    };
  } catch (e) {
    await store.close().catch(() => {});
    throw e;
  }
}
