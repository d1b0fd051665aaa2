/**
 * `vrp platform serve --workers N`: N processes serve every tenant on one port (node:cluster,
 * through the node's own `forkServeWorkers`), so offers are signed on every core.
 *
 * Nothing is shared in memory: each worker confirms its tenant's state on every request (the
 * head row, read again once anything was written; on PostgreSQL the watch), so a disable, a key
 * rotation or a revocation made by any process reaches every worker as it reaches one process. The primary opens the database first (the migrations run
 * once, not racing in N workers), creates the dev CA before forking, and alone serves the admin
 * listener: its `/metrics` is the sum of every worker's counters (prom-client's cluster
 * aggregation), with the database-wide gauges taken once.
 */
import { checkWorkers, ensureDevCa, forkServeWorkers, runServeWorker, type ServeWorkers } from '@vrpkit/node';
import { AggregatorRegistry } from 'prom-client';
import { DEV_CA_NAME } from './certificates.js';
import { type AdminListener, startAdminListener } from './metrics.js';
import { checkServingKeys, type ServePlatformOptions, servePlatform } from './serve.js';

export interface ServedPlatformCluster extends ServeWorkers {
  caFile?: string;
  caPem?: string;
  admin?: { address: string; port: number };
}

/** In a forked worker: serve, and answer the primary's metrics scrapes with this worker's registry. */
export function runPlatformWorker(o: Omit<ServePlatformOptions, 'adminListen'>): Promise<void> {
  return runServeWorker(async () => {
    const served = await servePlatform(o);
    // Constructing one installs prom-client's worker-side IPC listener; the registry is what it reports.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([served.metrics.registry]);
    return served;
  });
}

/**
 * In the primary: check the master key against the database, create the dev CA (`--dev`), fork
 * `workers` workers (each runs `runPlatformWorker` with the same options) and, with
 * `adminListen`, serve the aggregated metrics and the probes.
 */
export async function servePlatformCluster(
  o: Pick<ServePlatformOptions, 'store' | 'masterKeys' | 'tls' | 'adminListen'>,
  workers: number,
): Promise<ServedPlatformCluster> {
  checkWorkers(workers);
  const { master_key_id } = await checkServingKeys(o.store, o.masterKeys);
  const dev = o.tls.kind === 'dev' ? await ensureDevCa(o.tls.dir, DEV_CA_NAME) : undefined;
  let admin: AdminListener | undefined;
  const { adminListen } = o;
  const served = await forkServeWorkers(workers, 'platform', async (stops) => {
    if (!adminListen) return;
    const aggregated = new AggregatorRegistry();
    admin = await startAdminListener(
      adminListen,
      { contentType: aggregated.contentType, metrics: () => aggregated.clusterMetrics() },
      async () => (await o.store.info()).master_key_id === master_key_id,
    );
    stops.push(admin.close);
  });
  return {
    ...served,
    ...(dev ? { caFile: dev.caFile, caPem: dev.ca.certPem } : {}),
    ...(admin ? { admin: { address: admin.address, port: admin.port } } : {}),
  };
}
