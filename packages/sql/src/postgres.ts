/**
 * PostgreSQL connections that survive the database going away (issue 36 defect 1). A `pg` client
 * whose connection drops while idle emits `error`; with no listener that is an unhandled `error`
 * event and the process exits (`terminating connection due to administrator command` on a
 * restart or failover). Every pool and every client opened here has a listener: the dead client
 * is dropped (the pool opens a fresh one for the next query), queries fail meanwhile (callers
 * answer `store_unavailable`), and the process serves again by itself once the database is back.
 */
import pg from 'pg';
import { SqlError } from './errors.js';
import { assertSchemaName, type PostgresTarget, redactedTarget } from './target.js';

/** What a process does with a lost connection: by default one `error[store_unavailable]` line on stderr (no URL, no password). */
export type ConnectionLossListener = (error: Error) => void;

const logConnectionLoss: ConnectionLossListener = (e) =>
  process.stderr.write(`error[store_unavailable]: PostgreSQL connection lost (${e.message}); reconnecting on the next query\n`);

export interface PgPoolOptions {
  /** Connections at most (default 10). */
  max?: number;
  /**
   * `application_name` of every connection (a `?application_name=` in the URL wins): operators see
   * whose connections they are in `pg_stat_activity`, and tests cut only their own.
   */
  applicationName: string;
  onConnectionLoss?: ConnectionLossListener;
  /** How long a query waits for a connection before it fails (ms). Default: pg's (no limit). */
  connectionTimeoutMillis?: number;
  /** Parse int8 (bigint) columns as numbers: epochs and millisecond times stay far below 2^53. */
  int8AsNumber?: boolean;
}

const INT8_OID = 20;
/** pg's type parsers, with int8 parsed as a number. */
const INT8_AS_NUMBER = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** The connection settings of a target: its URL, its schema first on the search path, the application name. */
function clientConfig(t: PostgresTarget, applicationName: string): pg.ClientConfig {
  return {
    connectionString: t.url,
    options: `-c search_path="${assertSchemaName(t.schema)}"`,
    ...(new URL(t.url).searchParams.has('application_name') ? {} : { application_name: applicationName }),
  };
}

/** A pool whose idle and checked-out clients never take the process down with them (see the file comment). */
export function openPgPool(t: PostgresTarget, o: PgPoolOptions): pg.Pool {
  const onLoss = o.onConnectionLoss ?? logConnectionLoss;
  const pool = new pg.Pool({
    ...clientConfig(t, o.applicationName),
    max: o.max ?? 10,
    ...(o.connectionTimeoutMillis !== undefined ? { connectionTimeoutMillis: o.connectionTimeoutMillis } : {}),
    ...(o.int8AsNumber ? { types: INT8_AS_NUMBER } : {}),
  });
  // An idle client's error reaches the pool (which has already dropped the client).
  pool.on('error', onLoss);
  // A checked-out client between queries (inside a transaction) emits on itself; the query in
  // flight, if any, fails with the error and the pool drops the client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * A dedicated client (a schema bootstrap, a LISTEN connection, a lock holder) with an error
 * listener from the start, so its loss is never an unhandled `error` event. It does not
 * reconnect: its owner opens a new one.
 */
export function openPgClient(t: PostgresTarget, o: { applicationName: string; onConnectionLoss?: ConnectionLossListener }): pg.Client {
  const client = new pg.Client(clientConfig(t, o.applicationName));
  client.on('error', o.onConnectionLoss ?? logConnectionLoss);
  return client;
}

/** Create the target's schema if it is missing; `database_unreachable` when PostgreSQL cannot be reached. */
export async function ensureSchema(t: PostgresTarget, applicationName: string): Promise<void> {
  const client = openPgClient(t, { applicationName, onConnectionLoss: () => {} });
  try {
    await client.connect();
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${assertSchemaName(t.schema)}"`).catch((e: { code?: string }) => {
      // Two processes creating the schema at once: the loser sees a duplicate, which is success.
      if (e.code !== '23505' && e.code !== '42P06') throw e;
    });
  } catch (cause) {
    throw new SqlError('database_unreachable', { target: redactedTarget(t), reason: (cause as Error).message }, { cause });
  } finally {
    await client.end().catch(() => {});
  }
}

/** SQLSTATE classes and codes that mean the connection, not the statement, failed (PostgreSQL Appendix A). */
const LOST_SQLSTATE = /^(08|57P0[1-3])/;
/** Socket errors of a connection that is gone or cannot be made. */
const LOST_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** What `pg` and `pg-pool` throw, without a code, for a connection that ended or could not be had. */
const LOST_MESSAGE = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/;

/**
 * Whether `e` (or an error it wraps) is a lost or refused database connection rather than a
 * fault of the statement: such a request is answered `store_unavailable` (503), not `internal_error`.
 */
export function isConnectionLoss(e: unknown): boolean {
  for (let x = e, depth = 0; x instanceof Error && depth < 5; x = x.cause, depth++) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string' && (LOST_SQLSTATE.test(code) || LOST_ERRNO.has(code))) return true;
    if (x instanceof SqlError && (code === 'store_unavailable' || code === 'database_unreachable')) return true;
    if (LOST_MESSAGE.test(x.message)) return true;
    if (x instanceof AggregateError && x.errors.some(isConnectionLoss)) return true;
  }
  return false;
}
