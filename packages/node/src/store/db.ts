import { resolve } from 'node:path';
import { openDatabase, type PostgresTarget, parsePostgresTarget, type SqliteTarget } from '@vrpkit/sql';
import Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { nodeMigrations } from './migrations.js';
import type { NodeDatabase } from './schema.js';

/** Where a node's store lives: an SQLite file (embedded default) or a PostgreSQL schema (scale-out). */
export type StoreTarget = SqliteTarget | PostgresTarget;

/** `application_name` of the node's PostgreSQL connections (`pg_stat_activity` shows whose they are). */
const NODE_APPLICATION_NAME = 'vrpkit-node';

/**
 * Parse a `postgres://…` URL. An optional `schema` query parameter picks the PostgreSQL schema
 * the node's tables live in (default `public`), so several nodes can share one database.
 */
export function postgresTarget(url: string): PostgresTarget {
  return parsePostgresTarget(url, 'public');
}

/** Open the store and bring it to the latest migration. */
export async function openNodeDatabase(target: StoreTarget): Promise<Kysely<NodeDatabase>> {
  const { db } = await openDatabase<NodeDatabase>(target, { migrations: nodeMigrations, applicationName: NODE_APPLICATION_NAME });
  return db;
}

/** The store revision read the offer path makes on every request (see `NodeStore.snapshot`). */
export interface RevisionReader {
  read(): number | Promise<number>;
  /**
   * The revision without waiting (SQLite; absent where every read is a round trip, PostgreSQL).
   * It may lag a write committed by another process by `REVISION_RECHECK_MS`; a write committed
   * through any store of this process (`committed`) is seen at once.
   */
  readNow?(): number;
  /** Called after this process committed a write that bumped the revision. */
  committed(): void;
  close(): void;
}

/**
 * How long (ms) the offer path's synchronous revision read is reused before the statement runs
 * again. The statement costs as much as the rest of a cache hit; under load many requests share
 * one read, and a write by another process (the CLI, a `--workers` sibling, the primary's hold
 * sweep) is still seen within this bound, far inside the second the cluster and platform
 * promise.
 */
export const REVISION_RECHECK_MS = 1;

/**
 * Writes committed through any store of this process, per SQLite file: a reader reads the
 * revision again as soon as that count moved, so a write is never hidden from the process that
 * made it (a booking request, then the next offer). Counted while a store holds the file open.
 */
const localWrites = new Map<string, { count: number; open: number }>();

function localWritesTo(file: string) {
  let w = localWrites.get(file);
  if (!w) {
    w = { count: 0, open: 0 };
    localWrites.set(file, w);
  }
  w.open++;
  return w;
}

/**
 * The revision reader for an open store. On PostgreSQL it is one compiled query through the
 * pool. On SQLite it is a synchronous statement on a read-only connection of its own: through
 * Kysely every query queues on the one connection's mutex and a promise chain, which measured
 * several times the statement itself when 32 requests are in flight. A separate connection only
 * ever sees committed data (WAL), so a write transaction still open on the main connection can
 * never show it an uncommitted revision; the snapshot guarantee (revision read first, data
 * after, both committed) is unchanged for `read`; `readNow` adds the bound above.
 */
export function openRevisionReader(target: StoreTarget, db: Kysely<NodeDatabase>): RevisionReader {
  if (target.kind === 'sqlite') {
    const reader = new Database(target.file, { readonly: true, fileMustExist: true });
    reader.pragma('busy_timeout = 5000');
    const stmt = reader.prepare<[], number>('SELECT revision FROM store_revision WHERE id = 1').pluck();
    const file = resolve(target.file);
    const writes = localWritesTo(file);
    let seenWrites = -1;
    let readAt = Number.NEGATIVE_INFINITY;
    let revision = 0;
    const read = () => {
      // The count and the time are taken before the statement: a write committing after it is seen by the next read.
      seenWrites = writes.count;
      readAt = performance.now();
      revision = stmt.get() ?? 0;
      return revision;
    };
    return {
      read,
      readNow: () => (writes.count === seenWrites && performance.now() - readAt < REVISION_RECHECK_MS ? revision : read()),
      committed: () => {
        writes.count++;
      },
      close: () => {
        reader.close();
        if (--writes.open === 0) localWrites.delete(file);
      },
    };
  }
  const query = db.selectFrom('store_revision').select('revision').where('id', '=', 1).compile();
  return {
    read: () => db.executeQuery(query).then((r) => Number(r.rows[0]?.revision ?? 0)),
    committed: () => {},
    close: () => {},
  };
}
