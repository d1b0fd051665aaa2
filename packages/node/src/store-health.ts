/**
 * Whether the node's store can take writes (issue 36 defect 13). On a full disk (or a read-only
 * or failing one, or a PostgreSQL out of space) a booking request is not a bug: it is answered
 * 503 `store_unavailable` with `Retry-After`, the cause is reported once per outage (not once
 * per request), and `/readyz` says the store cannot write until the outage is over. Nothing is
 * written meanwhile: the failing transaction rolled back.
 *
 * The outage is over once any write commits (the store revision moves past the one seen at the
 * failure: a calendar sync, a hold, another process) or, with no write to prove it either way,
 * `STORE_OUTAGE_HOLD_MS` after the last failure, so a node that a load balancer took out of
 * rotation is offered traffic again and finds out.
 */
import type { Clock } from '@vrpkit/core';
import { NodeError } from './errors.js';
import type { NodeStore } from './store/store.js';

/** `Retry-After` of a `store_unavailable` answer, in seconds. */
export const STORE_OUTAGE_RETRY_AFTER_SECONDS = 30;

/** How long a write failure keeps the store reported unwritable without a new failure or a committed write. */
export const STORE_OUTAGE_HOLD_MS = 60_000;

/** SQLite result codes (better-sqlite3's `code`) that mean the file system refused the write, not the statement. */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/;
/** System error codes of the same meaning (a file the node writes itself). */
const ERRNO_UNAVAILABLE = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EFBIG']);
/** PostgreSQL SQLSTATEs: class 53 insufficient resources (53100 disk_full) and 58030 io_error. */
const PG_UNAVAILABLE = /^(53[0-9A-Z]{3}|58030)$/;

/** The error code when `e` says the store cannot write now; undefined for every other failure. */
export function storeUnavailableCause(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  return SQLITE_UNAVAILABLE.test(code) || ERRNO_UNAVAILABLE.has(code) || PG_UNAVAILABLE.test(code) ? code : undefined;
}

export interface StoreHealth {
  /** True when `e` says the store cannot write: the outage is recorded, its cause reported if it is new. */
  failed(e: unknown): boolean;
  /** The readiness check `store`: `store_unavailable` during an outage. */
  check(): Promise<{ ok: boolean; code?: string }>;
}

/**
 * The write health of `store`. `report` receives a `store_unavailable` error naming the cause once
 * when an outage begins, and once more when the cause changes.
 */
export function storeHealth(store: Pick<NodeStore, 'revision'>, clock: Clock, report: (e: unknown) => void): StoreHealth {
  let outage: { cause: string; at: number; revision: number | undefined } | undefined;
  return {
    failed(e) {
      const cause = storeUnavailableCause(e);
      if (cause === undefined) return false;
      const known = outage?.cause === cause;
      const seen: NonNullable<typeof outage> = { cause, at: clock.now(), revision: undefined };
      outage = seen;
      // The revision at this failure: a later one means a write committed since.
      store.revision().then(
        (r) => {
          seen.revision = r;
        },
        () => {},
      );
      if (!known) report(new NodeError('store_unavailable', { cause }));
      return true;
    },
    async check() {
      if (!outage) return { ok: true };
      const revision = await store.revision();
      const wrote = outage.revision !== undefined && revision > outage.revision;
      if (wrote || clock.now() - outage.at > STORE_OUTAGE_HOLD_MS) {
        outage = undefined;
        return { ok: true };
      }
      return { ok: false, code: 'store_unavailable' };
    },
  };
}
