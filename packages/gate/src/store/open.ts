/**
 * `openGateStore(target)`: the one way to open a gate store by its name — a SQLite file
 * (`sqlite:FILE` or a path) or a PostgreSQL schema (`postgres://…?schema=NAME`).
 */
import type { Clock } from '@vrpkit/core';
import { StoreConfigError } from './errors.js';
import type { GateStore } from './gate-store.js';
import { openPostgresStore, type PostgresStoreOptions } from './postgres.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite.js';

export type GateStoreTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string; schema: string | undefined };

export interface GateStoreOptions extends Omit<SqliteStoreOptions, 'clock'>, Omit<PostgresStoreOptions, 'clock' | 'schema'> {
  clock?: Clock;
  /** The PostgreSQL schema when the URL names none (`?schema=` wins). Default `vrpkit_gate`. */
  schema?: string;
}

/** `postgres://…` / `postgresql://…` (an optional `schema` query parameter), `sqlite:FILE`, or a file path. */
export function parseGateStoreTarget(target: string): GateStoreTarget {
  if (/^postgres(ql)?:\/\//.test(target)) {
    let u: URL;
    try {
      u = new URL(target);
    } catch {
      throw new StoreConfigError('the gate store URL is not a URL');
    }
    const schema = u.searchParams.get('schema') ?? undefined;
    u.searchParams.delete('schema');
    return { kind: 'postgres', url: u.toString(), schema };
  }
  const file = target.startsWith('sqlite:') ? target.slice('sqlite:'.length) : target;
  if (file === '') throw new StoreConfigError('the gate store names no file');
  return { kind: 'sqlite', file };
}

export function openGateStore(target: string, opts: GateStoreOptions = {}): Promise<GateStore> {
  const t = parseGateStoreTarget(target);
  if (t.kind === 'sqlite') return openSqliteStore(t.file, opts);
  const schema = t.schema ?? opts.schema;
  return openPostgresStore(t.url, { ...opts, ...(schema !== undefined ? { schema } : {}) });
}
