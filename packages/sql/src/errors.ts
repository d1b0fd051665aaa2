/**
 * The SQL kit's code table (core's `CodeTable`): what opening, migrating or losing a store raises,
 * for the node, the platform and the gate alike. Codes are the contract (the CLI's `error[code]`
 * lines and HTTP clients match on them); messages are reworded here, and only here.
 */
import { type CodeTable, codedErrorClass } from '@vrpkit/core';

export const SQL_CODES = {
  invalid_database_url: { message: 'invalid database URL (postgres://…[?schema=name] or sqlite:PATH): {problem}' },
  /** A PostgreSQL schema name is spliced into DDL and `search_path`, so only a plain lowercase identifier is taken. */
  invalid_schema_name: { message: 'the PostgreSQL schema "{schema}" is not a lowercase SQL identifier (a-z, 0-9, _; at most 63)' },
  database_unreachable: { message: 'cannot reach the database {target}: {reason}' },
  migration_failed: { message: 'store migration {name} failed: {reason}' },
  /**
   * The store cannot be reached right now (issue 36 defect 1: PostgreSQL restarting or failing
   * over): a request fails closed with this answer and the process serves again by itself.
   */
  store_unavailable: { status: 503, message: 'the store is unavailable; try again shortly' },
} as const satisfies CodeTable;

export type SqlCode = keyof typeof SQL_CODES;

/** Errors the SQL kit raises: `code` is always a `SQL_CODES` code. */
export class SqlError extends codedErrorClass(SQL_CODES) {}
