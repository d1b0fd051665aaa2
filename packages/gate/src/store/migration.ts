/**
 * What one feature's migration is. A leaf: features (store/, audit/, proxy/, ui/) declare their
 * migrations against this type and `store/migrations.ts` lists them; nothing here imports a feature.
 */
import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.js';

export interface MigrationContext {
  /** The time rows a migration inserts are dated with (epoch ms). */
  now: number;
  dialect: Dialect;
}

export interface GateMigration {
  /**
   * The name Kysely's `Migrator` records; names sort in the order migrations run
   * (`0001_…`, `0002_…`). Append only: a released migration is never edited.
   */
  name: string;
  /**
   * The version the gate's own runner (before Kysely's `Migrator`) recorded for this migration in
   * `gate_schema_migrations`; a store made by that runner is adopted by it (store/migrations.ts).
   * Absent on migrations added since.
   */
  legacyVersion?: number;
  // The schema a migration meets is the one its predecessors left, not today's: untyped, as Kysely advises.
  up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void>;
}
