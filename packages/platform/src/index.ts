/**
 * `@vrpkit/platform`: one deployment serving many host domains, each a full VRP node, from one
 * database (PostgreSQL for several machines, SQLite for one).
 */

export { redactedTarget } from '@vrpkit/sql';
export {
  type CertificateSource,
  type CertificateStore,
  type CertificateStoreBounds,
  DEFAULT_TLS_CONTEXT_CACHE_SIZE,
  openCertificateStore,
  TLS_DIR_CHECK_MS,
} from './certificates.js';
export { runPlatformWorker, type ServedPlatformCluster, servePlatformCluster } from './cluster.js';
// The operator console (issue 35 item 2): `vrp platform serve --console`, `vrp platform console enroll`.
export { CONSOLE_ROLES } from './console/credentials.js';
export { enrollOperatorConsole, type OperatorConsoleEnrollment } from './console/enroll.js';
export { FleetHistory, type FleetSample, histogramQuantile } from './console/fleet.js';
export { auditTrail, type TenantPage, tenantPage } from './console/reads.js';
export type { OperatorConsoleListen } from './console/serve.js';
export { PLATFORM_CODES, type PlatformCode, PlatformError } from './errors.js';
export { isRefusedFeedAddress, PublicFeedAgent } from './feed-address.js';
export { syncLagSeconds } from './feed-leases.js';
export { type ImportProblem, type ImportProgress, type ImportResult, importTenants } from './import.js';
export {
  generateMasterKeyText,
  loadMasterKey,
  MASTER_KEY_ENV,
  type MasterKey,
  openPrivateKey,
  parseMasterKey,
  sealPrivateKey,
} from './master-key.js';
export {
  type AdminListener,
  PlatformMetrics,
  parseAdminListen,
  ScaleMetrics,
  SyncMetrics,
  startAdminListener,
  surfaceOf,
} from './metrics.js';
export { createOperatorApp, OPERATOR_TOOL_NAME } from './operator.js';
export {
  DEFAULT_PLATFORM_KEEP_ALIVE_MS,
  DEFAULT_PLATFORM_MAX_CONNECTIONS,
  DEFAULT_PLATFORM_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_TENANT_CACHE_SIZE,
  type PlatformLogEntry,
  type ServedPlatform,
  type ServePlatformOptions,
  servePlatform,
} from './serve.js';
export { PLATFORM_DATABASE_URL_ENV, type PlatformTarget, platformTarget } from './store/db.js';
export type { ConsoleRole, TenantStatus } from './store/schema.js';
export {
  DEFAULT_SYNC_CONCURRENCY,
  DEFAULT_SYNC_LEASE_MS,
  DEFAULT_SYNC_PER_HOST,
  type FeedSyncOutcome,
  MIN_SYNC_LEASE_MS,
  type SyncLogEntry,
  type SyncTotals,
  type SyncWorker,
  type SyncWorkerOptions,
  startSyncWorker,
} from './sync-worker.js';
export { decideTenantBooking, listTenantBookings, TenantBookings } from './tenant-bookings.js';
export { type GuestMailOptions, openTenantNode, type TenantDeskOptions, type TenantNode, TenantSource } from './tenant-node.js';
// Tenant state in memory (docs/platform.md): how long a confirmation holds, and what disable, remove and revoke wait.
export { INVALIDATION_WINDOW_MS, TENANT_STATE_LEASE_MS } from './tenant-watch.js';
export {
  type NewTenant,
  PlatformStore,
  type TenantDetail,
  type TenantFeedStatus,
  type TenantSnapshot,
  type TenantSummary,
} from './tenants.js';
