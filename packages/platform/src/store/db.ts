import { type OpenedDatabase, openDatabase, parseTarget, type SqlTarget } from '@vrpkit/sql';
import { PlatformError } from '../errors.js';
import { platformMigrations } from './migrations.js';
import type { PlatformDatabase } from './schema.js';

/** Environment variable naming the platform database when `--database-url` is absent. */
export const PLATFORM_DATABASE_URL_ENV = 'VRP_PLATFORM_DATABASE_URL';

/** `application_name` of the platform's PostgreSQL connections (`pg_stat_activity` shows whose they are). */
const PLATFORM_APPLICATION_NAME = 'vrpkit-platform';

/** `postgres://…[?schema=name]` (the system of record for several machines) or `sqlite:PATH` (one machine, tests). */
export type PlatformTarget = SqlTarget;

/** The target `url` (or `VRP_PLATFORM_DATABASE_URL`) names; the schema defaults to `vrpkit_platform`. */
export function platformTarget(url: string | undefined): PlatformTarget {
  const u = url ?? process.env[PLATFORM_DATABASE_URL_ENV];
  if (!u) throw new PlatformError('database_url_required', { env: PLATFORM_DATABASE_URL_ENV });
  return parseTarget(u, 'vrpkit_platform');
}

/**
 * Open the platform database and bring it to the latest migration (serialised across processes
 * by the kit's migration lock); `sqlite`: the connection Kysely runs on, for the reads the serving
 * path makes in its own turn.
 */
export function openPlatformDatabase(t: PlatformTarget, poolSize = 10): Promise<OpenedDatabase<PlatformDatabase>> {
  return openDatabase<PlatformDatabase>(t, {
    migrations: platformMigrations,
    migrationTable: { name: 'platform_migration', lockName: 'platform_migration_lock' },
    applicationName: PLATFORM_APPLICATION_NAME,
    poolSize,
    foreignKeys: true,
  });
}
