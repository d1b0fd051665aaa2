/**
 * `openGateStore(target)`: the one way to open a gate store by its name — a SQLite file
 * (`sqlite:FILE` or a path) or a PostgreSQL schema (`postgres://…?schema=NAME`).
 */
import type { Clock } from '@vrpkit/core';
import { parsePostgresTarget, parseTarget, type SqlTarget } from '@vrpkit/sql';
import type { GateStore } from './gate-store.js';
import { DEFAULT_GATE_SCHEMA, openPostgresStore, type PostgresStoreOptions } from './postgres.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite.js';

/** Where a gate store lives: the SQL kit's target (a SQLite file, or a PostgreSQL URL and schema). */
export type GateStoreTarget = SqlTarget;

export interface GateStoreOptions extends Omit<SqliteStoreOptions, 'clock'>, Omit<PostgresStoreOptions, 'clock' | 'schema'> {
  clock?: Clock;
  /** The PostgreSQL schema when the URL names none (`?schema=` wins). Default `vrpkit_gate`. */
  schema?: string;
}

/**
 * `postgres://…` / `postgresql://…` (an optional `schema` query parameter, else `defaultSchema`),
 * `sqlite:FILE`, or a file path — read by the SQL kit, as the node's and platform's targets are.
 */
export function parseGateStoreTarget(target: string, defaultSchema: string = DEFAULT_GATE_SCHEMA): SqlTarget {
  if (/^postgres(ql)?:\/\//.test(target)) return parsePostgresTarget(target, defaultSchema);
  return parseTarget(target.startsWith('sqlite:') ? target : `sqlite:${target}`, defaultSchema);
}

export async function openGateStore(target: string, opts: GateStoreOptions = {}): Promise<GateStore> {
  const t = parseGateStoreTarget(target, opts.schema);
  if (t.kind === 'sqlite') return openSqliteStore(t.file, opts);
  return openPostgresStore(t.url, { ...opts, schema: t.schema });
}
