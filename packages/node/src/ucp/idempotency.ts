/**
 * `Idempotency-Key` for the booking-session operations that change state (Booking REST binding, HTTP
 * Headers; MCP binding, Request Metadata; Message Signatures, Replay Protection), the same for both
 * bindings:
 * - a key is unique per scope (the business for Create, the session for Update, Complete and Cancel)
 *   and operation ("per-client, per-operation type"), kept 48 hours ("minimum 24 hours, recommended 48");
 * - the first request with a key claims it (one row, its primary key decides a race) and, when the
 *   operation took effect, stores its answer; a request with the same key and the same request digest
 *   gets that answer back and runs nothing, so it writes nothing new;
 * - the same key with another digest is `idempotency_conflict` (409 / -32000, "do not execute"); while
 *   the first request is still being answered, `idempotency_in_progress` (409);
 * - an answer that changed nothing (a refusal, a Complete before the guest confirmed) is not stored:
 *   the claim is dropped, so a retry with the key is judged anew once its cause is gone;
 * - a store that cannot keep keys fails the request (the app answers 503 `store_unavailable`: "on
 *   storage failure, fail closed"). A failure never leaves a key claimed by nobody, nor an effect
 *   without its key: Create stores its answer in the transaction that writes the session (a retry
 *   after a failed Create writes it anew, once); when an Update, Complete or Cancel took effect but
 *   its answer could not be stored, the claim is dropped, and a retry answers from the session's
 *   state, which the first run already moved (so nothing is done twice).
 */
import { sha256Hex } from '@vrpkit/core';
import type { UcpIdempotencyStore } from './ports.js';

/** How long a key and its answer are kept. */
export const IDEMPOTENCY_HOURS = 48;
/** A claim unsettled this long belongs to a request whose process stopped: the next request with the key takes it over. */
export const IDEMPOTENCY_STALE_CLAIM_MS = 60_000;

/** The operations that take an `Idempotency-Key` (Get is safe by itself). */
export type UcpChangeOperation = 'create' | 'update' | 'complete' | 'cancel';

/** One answer of a session operation: the HTTP status, a UCP Booking or error-response body, and whether it took effect. */
export interface UcpAnswer {
  status: number;
  body: Record<string, unknown>;
  /** The operation took effect (or had already, for a repeated Complete or Cancel): only such an answer is replayed. */
  applied?: boolean;
  /** A 429's seconds until the rate limit admits the client again (REST `Retry-After`, MCP `error.data.retry_after`). */
  retryAfterSeconds?: number;
  /** The answer was stored under the claimed key with the write it answers (one transaction): nothing is left to settle. */
  settled?: boolean;
}

export interface IdempotentCall {
  /** `business:{domain}` for Create, `session:{id}` for the others. */
  scope: string;
  operation: UcpChangeOperation;
  key: string;
  /** SHA-256 (hex) of the request as the binding defines it (REST: the body's bytes). */
  requestSha256: string;
}

/** Run `run` once per key: the stored answer for a repeat, a refusal for a conflicting or concurrent one. */
export async function idempotent(
  store: UcpIdempotencyStore,
  call: IdempotentCall,
  now: number,
  refuse: (code: 'idempotency_conflict' | 'idempotency_in_progress', content: string) => UcpAnswer,
  run: (claim: string) => Promise<UcpAnswer>,
): Promise<UcpAnswer> {
  const id = sha256Hex(JSON.stringify([call.scope, call.operation, call.key]));
  const held = await store.claimUcpIdempotencyKey(
    id,
    call.requestSha256,
    now,
    now + IDEMPOTENCY_HOURS * 3_600_000,
    now - IDEMPOTENCY_STALE_CLAIM_MS,
  );
  if (held) {
    if (held.request_sha256 !== call.requestSha256)
      return refuse('idempotency_conflict', 'this Idempotency-Key was used with another request: use a fresh key for a changed request');
    if (held.answer_status === null || held.answer_json === null)
      return refuse('idempotency_in_progress', 'the first request with this Idempotency-Key is still being answered: retry it shortly');
    return { status: held.answer_status, body: JSON.parse(held.answer_json) as Record<string, unknown>, applied: true };
  }
  let answer: UcpAnswer;
  try {
    answer = await run(id);
  } catch (e) {
    await store.releaseUcpIdempotencyKey(id);
    throw e;
  }
  if (answer.settled) return answer;
  if (!answer.applied) {
    await store.releaseUcpIdempotencyKey(id);
    return answer;
  }
  try {
    await store.settleUcpIdempotencyKey(id, { status: answer.status, json: JSON.stringify(answer.body) });
  } catch (e) {
    // The effect stands but its answer could not be stored (a full disk): left claimed, a retry would
    // be refused `idempotency_in_progress` until the claim went stale. Dropped, the retry runs anew and
    // answers from the session's state (Update, Complete, Cancel: never done twice). Best effort: a
    // store that cannot even delete leaves the claim to be taken over once stale.
    await store.releaseUcpIdempotencyKey(id).catch(() => {});
    throw e;
  }
  return answer;
}
