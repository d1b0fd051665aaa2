/** The two databases a gate store runs on (one query layer, Kysely, for both). */
export type Dialect = 'sqlite' | 'postgres';

export interface StoreCallOptions {
  /** Bound on waiting for the store (locks, statement time). Exceeding it throws `StoreTimeoutError` and changes nothing. */
  timeoutMs?: number;
}
