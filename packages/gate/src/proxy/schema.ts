/**
 * The gateway's tables (tool pins, proxy observations) and the migrations that add them to the
 * gate store (listed in store/migrations.ts), so SQLite and PostgreSQL get them through the
 * store's one migration mechanism. Nothing here holds tool arguments: definitions are the server's, and
 * observations carry digests only.
 */
import type { Kysely } from 'kysely';
import type { GateMigration } from '../store/migration.js';

export interface ToolPinTable {
  /** The downstream server's identity as the proxy binds it (stdio command digest or HTTP URL). */
  server_id: string;
  tool_name: string;
  /** The definition digest a person pinned; null = never pinned (or unpinned). */
  pinned_digest: string | null;
  pinned_at: number | null;
  pinned_by: string | null;
  /** The definition digest the proxy saw last, and that definition (JSON), for the person deciding. */
  seen_digest: string;
  seen_definition: string;
  /** The server's self-asserted `serverInfo` (JSON) when last seen: informative, never a trust signal. */
  server_info: string | null;
  first_seen_at: number;
  seen_at: number;
}

export type ProxyMode = 'enforce' | 'observe';

export interface ProxyObservationTable {
  observation_id: string;
  recorded_at: number;
  /** `enforce`: the call was denied; `observe`: it was forwarded although enforce would have denied it. */
  mode: ProxyMode;
  server_id: string;
  tool_name: string;
  consequence_class: string;
  code: string;
  candidate_act_id: string | null;
  arguments_digest: string | null;
}

/**
 * A server identity's pin version: bumped in the transaction of every pin and unpin of its tools,
 * so a proxy reads one small row per call to know whether the pins it holds are still current.
 */
export interface ToolPinVersionTable {
  server_id: string;
  version: number;
}

// A type alias (not an interface) so Kysely's `withTables` accepts it.
export type ProxyDatabase = {
  gate_tool_pin: ToolPinTable;
  gate_proxy_observation: ProxyObservationTable;
  gate_tool_pin_version: ToolPinVersionTable;
};

/** Gateway tool pins and proxy observations. */
export const PROXY_TABLES_MIGRATION: GateMigration = {
  name: '0002_proxy_tables',
  legacyVersion: 2,
  async up(untyped) {
    const db = untyped as Kysely<ProxyDatabase>;
    await db.schema
      .createTable('gate_tool_pin')
      .addColumn('server_id', 'text', (c) => c.notNull())
      .addColumn('tool_name', 'text', (c) => c.notNull())
      .addColumn('pinned_digest', 'text')
      .addColumn('pinned_at', 'bigint')
      .addColumn('pinned_by', 'text')
      .addColumn('seen_digest', 'text', (c) => c.notNull())
      .addColumn('seen_definition', 'text', (c) => c.notNull())
      .addColumn('server_info', 'text')
      .addColumn('first_seen_at', 'bigint', (c) => c.notNull())
      .addColumn('seen_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('gate_tool_pin_pk', ['server_id', 'tool_name'])
      .execute();
    await db.schema
      .createTable('gate_proxy_observation')
      .addColumn('observation_id', 'text', (c) => c.primaryKey())
      .addColumn('recorded_at', 'bigint', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('server_id', 'text', (c) => c.notNull())
      .addColumn('tool_name', 'text', (c) => c.notNull())
      .addColumn('consequence_class', 'text', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('candidate_act_id', 'text')
      .addColumn('arguments_digest', 'text')
      .execute();
    await db.schema.createIndex('gate_proxy_observation_time').on('gate_proxy_observation').column('recorded_at').execute();
  },
};

/** The pin version per server identity a proxy checks on every call. */
export const PIN_VERSION_MIGRATION: GateMigration = {
  name: '0006_pin_version',
  legacyVersion: 6,
  async up(db) {
    await db.schema
      .createTable('gate_tool_pin_version')
      .addColumn('server_id', 'text', (c) => c.primaryKey())
      .addColumn('version', 'bigint', (c) => c.notNull())
      .execute();
  },
};
