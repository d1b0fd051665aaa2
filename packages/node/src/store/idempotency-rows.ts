/**
 * The UCP `Idempotency-Key` rows (ucp/ports.ts `UcpIdempotencyStore`, ucp/idempotency.ts) over one
 * table with the node's columns (tables.ts `UCP_IDEMPOTENCY_COLUMNS`): the node's `ucp_idempotency`,
 * or a platform's `platform_tenant_ucp_idempotency` scoped to one tenant's rows. One statement each;
 * the primary key decides a race.
 */
import type { Kysely } from 'kysely';
import type { UcpIdempotencyRecord, UcpIdempotencyStore } from '../ucp/ports.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A column and its value every statement also filters on (a platform tenant's `domain`), written into new rows. */
export interface RowScope {
  column: string;
  value: string;
}

export function idempotencyRows(
  // biome-ignore lint/suspicious/noExplicitAny: one implementation for two schemas whose tables differ by name and a scope column.
  db: Kysely<any>,
  table: string,
  scope?: RowScope,
): UcpIdempotencyStore {
  const scoped = <Q extends { where: (c: string, op: '=', v: string) => Q }>(q: Q): Q =>
    scope ? q.where(scope.column, '=', scope.value) : q;
  const extra = scope ? { [scope.column]: scope.value } : {};
  const rows: UcpIdempotencyStore = {
    async claimUcpIdempotencyKey(id, requestSha256, now, expiresAt, staleBefore): Promise<UcpIdempotencyRecord | undefined> {
      await scoped(db.deleteFrom(table).where('expires_at', '<=', iso(now))).execute();
      const row = {
        id,
        request_sha256: requestSha256,
        answer_status: null,
        answer_json: null,
        created_at: iso(now),
        expires_at: iso(expiresAt),
      };
      const inserted = await db
        .insertInto(table)
        .values({ ...row, ...extra })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return undefined;
      // A claim never settled (its request's process stopped mid-way) is taken over, by one request only.
      const taken = await scoped(
        db
          .updateTable(table)
          .set({ request_sha256: requestSha256, created_at: iso(now), expires_at: iso(expiresAt) })
          .where('id', '=', id)
          .where('answer_status', 'is', null)
          .where('created_at', '<=', iso(staleBefore)),
      ).executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return undefined;
      const held = await scoped(
        db
          .selectFrom(table)
          .select(['id', 'request_sha256', 'answer_status', 'answer_json', 'created_at', 'expires_at'])
          .where('id', '=', id),
      ).executeTakeFirst();
      // Removed meanwhile (expired between the statements): the caller retries as a new claim would.
      return (held as UcpIdempotencyRecord | undefined) ?? rows.claimUcpIdempotencyKey(id, requestSha256, now, expiresAt, staleBefore);
    },
    async settleUcpIdempotencyKey(id, answer) {
      await scoped(db.updateTable(table).set({ answer_status: answer.status, answer_json: answer.json }).where('id', '=', id)).execute();
    },
    async releaseUcpIdempotencyKey(id) {
      await scoped(db.deleteFrom(table).where('id', '=', id).where('answer_status', 'is', null)).execute();
    },
  };
  return rows;
}
