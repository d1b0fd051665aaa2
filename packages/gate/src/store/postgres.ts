/**
 * The multi-process, multi-host gate store: PostgreSQL through `pg` and the same
 * Kysely queries as SQLite.
 *
 * Linearizable consume at READ COMMITTED (docs/gate.md "Store guarantees"):
 * - the consume transaction first reads the epochs with `FOR SHARE`, so an epoch bump
 *   (an UPDATE of that row) waits for in-flight consumes and every later consume sees the
 *   bumped value — a revocation that commits first controls the consume (Finality-bound revocation draft);
 * - the consume itself is `UPDATE … WHERE state = 'ISSUED' AND <every binding> RETURNING`.
 *   Two racing UPDATEs of one row serialize on its row lock; the loser re-evaluates the
 *   WHERE against the committed winner (state is now CONSUMED) and updates nothing.
 * SERIALIZABLE would give the same answer with retries on serialization failures; the
 * row lock gives it without retries. Durability is PostgreSQL's default
 * `synchronous_commit = on` (a COMMIT returns after the WAL flush).
 */
import { asRecord, type Clock, systemClock } from '@vrpkit/core';
import { assertSchemaName, openPgPool, redactedTarget } from '@vrpkit/sql';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { type DialectOps, type GateDatabase, runAsync, StoreEngine } from './engine.js';
import { StoreTimeoutError } from './errors.js';
import { type GateStore, gateStore } from './gate-store.js';
import { adoptLegacyMigrations, migrateGateStore } from './migrations.js';
import {
  consumeGroupInOneStatement,
  consumeInOneStatement,
  issueAndConsumeInOneStatement,
  recordOutcomeInOneStatement,
} from './postgres-consume.js';

export interface PostgresStoreOptions {
  /** Schema holding the gate tables (created if missing). Default `vrpkit_gate`. */
  schema?: string;
  /** Default bound on a write transaction's lock waits and statements (ms). Default 5000. */
  timeoutMs?: number;
  /** Pool size. Default 10. */
  poolSize?: number;
  /** The `application_name` of the store's connections (what `pg_stat_activity` shows). Default `vrpkit-gate`. */
  applicationName?: string;
  /** Told the size of every group of concurrent consumes committed together (metrics; store/group-commit.ts). */
  onGroupCommit?: (members: number) => void;
  clock?: Clock;
}

/** The schema of the gate tables when neither the URL nor the caller names one. */
export const DEFAULT_GATE_SCHEMA = 'vrpkit_gate';

export async function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<GateStore> {
  // The kit's pool (issue 31 item 2): the schema-name check, search_path, application_name and
  // the error listeners that keep a PostgreSQL restart from ending the process (issue 36 defect 1:
  // a call meeting a lost connection fails closed with EF_STORE_UNAVAILABLE, the next one
  // connects afresh once the server is back).
  const target = { kind: 'postgres' as const, url, schema: assertSchemaName(opts.schema ?? DEFAULT_GATE_SCHEMA) };
  const { schema } = target;
  const defaultTimeout = opts.timeoutMs ?? 5000;
  const pool = openPgPool(target, {
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: defaultTimeout,
    applicationName: opts.applicationName ?? 'vrpkit-gate',
    int8AsNumber: true,
    onConnectionLoss: () => {},
  });
  const db = new Kysely<GateDatabase>({ dialect: new PostgresDialect({ pool }) });

  /** A one-statement write bounded by its lock timeout. */
  async function oneStatement<T>(run: (lockTimeoutMs: number) => Promise<T>, timeoutMs: number | undefined): Promise<T> {
    const ms = Math.max(1, Math.floor(timeoutMs ?? defaultTimeout));
    try {
      return await run(ms);
    } catch (e) {
      if (isTimeout(e)) throw new StoreTimeoutError(`PostgreSQL did not answer within ${ms} ms`, { cause: e });
      throw e;
    }
  }

  const ops: DialectOps = {
    name: 'postgres',
    write: async (fn, timeoutMs) => {
      const ms = String(Math.max(1, Math.floor(timeoutMs ?? defaultTimeout)));
      try {
        return await db.transaction().execute(async (trx) => {
          // Server-side bounds: on expiry PostgreSQL cancels the statement and the whole transaction rolls back.
          await sql`select set_config('statement_timeout', ${ms}, true), set_config('lock_timeout', ${ms}, true)`.execute(trx);
          return fn(trx);
        });
      } catch (e) {
        if (isTimeout(e)) throw new StoreTimeoutError(`PostgreSQL did not answer within ${ms} ms`, { cause: e });
        throw e;
      }
    },
    run(program, timeoutMs, durability = 'disk') {
      return this.write(async (trx) => {
        // This transaction's COMMIT does not wait for the WAL flush (lost only if the server crashes first).
        if (durability === 'process') await sql`select set_config('synchronous_commit', 'off', true)`.execute(trx);
        return runAsync(program(trx), trx);
      }, timeoutMs);
    },
    epochsQuery: (trx) =>
      trx.selectFrom('gate_policy_state').select(['policy_epoch', 'authority_epoch', 'revocation_epoch']).where('id', '=', 1).forShare(),
    // One chain across processes: every append locks the head row until its transaction commits.
    auditHeadQuery: (trx) => trx.selectFrom('gate_audit_head').select(['seq', 'hash']).where('id', '=', 1).forUpdate(),
    // A group of one is the one-member function itself (no subtransaction); its error is the group's.
    consumeGroupOnce: (reqs, timeoutMs) =>
      oneStatement(
        async (ms) =>
          reqs.length === 1
            ? [{ ok: true as const, value: await consumeInOneStatement(db, reqs[0]!, ms) }]
            : consumeGroupInOneStatement(db, reqs, ms),
        timeoutMs,
      ),
    issueAndConsumeOnce: (record, req, timeoutMs) => oneStatement((ms) => issueAndConsumeInOneStatement(db, record, req, ms), timeoutMs),
    recordOutcomeOnce: (id, owner, outcome, now) =>
      oneStatement((ms) => recordOutcomeInOneStatement(db, id, owner, outcome, now, ms), undefined),
    close: async () => {},
  };

  const clock = opts.clock ?? systemClock;
  const engine = new StoreEngine(db, ops, redactedTarget(target), clock, opts.onGroupCommit);
  try {
    await migrate(db, schema, clock.now());
  } catch (e) {
    await engine.close();
    throw e;
  }
  return gateStore(engine);
}

/**
 * Create the schema and adopt a store the gate's own runner migrated, in one transaction under an
 * advisory lock scoped to the schema (N processes opening at once take turns), then migrate with
 * `Migrator` (its own transaction and lock).
 */
async function migrate(db: Kysely<GateDatabase>, schema: string, now: number): Promise<void> {
  const ctx = { now, dialect: 'postgres' as const };
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`vrpkit-gate:${schema}`}))`.execute(trx);
    // Created only when missing: a role that owns a schema made for it needs no CREATE on the database.
    const existing = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(trx);
    if (existing.rows.length === 0) await sql`create schema ${sql.id(schema)}`.execute(trx);
    await adoptLegacyMigrations(trx as unknown as Kysely<unknown>, ctx);
  });
  await migrateGateStore(db as Kysely<unknown>, ctx, schema);
}

function isTimeout(e: unknown): boolean {
  const code = asRecord(e)?.code;
  // 57014 query_canceled (statement_timeout), 55P03 lock_not_available (lock_timeout).
  if (code === '57014' || code === '55P03') return true;
  return e instanceof Error && /timeout exceeded when trying to connect/i.test(e.message);
}
