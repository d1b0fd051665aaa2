/**
 * The node's JSON answers: the `{"error":{"code","message"}}` body every HTTP resource refuses with
 * (the code's status from the registries), and the offer answer shared by the offer endpoint and
 * the WebMCP tool call: the signed envelope's exact bytes (Core VRP v0.1 §4–§5) or the refusal.
 */
import type { CodeEntry } from '@vrpkit/core';
import type { OfferRequestRefusal } from '@vrpkit/protocol';
import { NODE_CODES, type NodeCode, nodeMessage } from '../errors.js';
import type { OfferOutcome } from '../service/index.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The JSON error body every HTTP resource of the node answers with: `{"error":{"code","message"}}`. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/**
 * A node code as its HTTP answer: the table's status, `{"error":{"code","message"}}` with the
 * table's message for `params`, and any extra headers.
 */
export function errorResponse(
  code: NodeCode,
  params?: Readonly<Record<string, string | number>>,
  headers: Record<string, string> = {},
): Response {
  const entry: CodeEntry = NODE_CODES[code];
  const body = errorBody(code, nodeMessage(code, params));
  return new Response(body, { status: entry.status ?? 400, headers: { 'content-type': JSON_TYPE, ...headers } });
}

/** Seconds a client is told to wait (`Retry-After`) while the store's connection is lost. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * 503 `store_unavailable` with `Retry-After`: the store cannot take the request now — its
 * connection is lost (PostgreSQL restarting or failing over, issue 36 defect 1) or its storage
 * refuses writes (a full disk, defect 13). The request fails closed (nothing signed, nothing
 * written) and a retry may succeed: the process reconnects by itself.
 */
export function storeUnavailableResponse(
  cause = 'its database connection was lost',
  retryAfterSeconds: number = STORE_RETRY_AFTER_SECONDS,
): Response {
  return errorResponse('store_unavailable', { cause }, { 'retry-after': String(retryAfterSeconds), 'cache-control': 'no-store' });
}

/**
 * The HTTP answer to an offer request, on the offer endpoint and the WebMCP tool-call path alike:
 * the signed envelope's exact bytes (200, Core VRP v0.1 §4–§5) or the refusal's code and message (400).
 */
export function offerResponse(outcome: OfferOutcome | { ok: false; error: OfferRequestRefusal }): Response {
  if (!outcome.ok) {
    const headers = { 'content-type': JSON_TYPE, 'cache-control': 'no-store' };
    return new Response(errorBody(outcome.error.code, outcome.error.message), { status: 400, headers });
  }
  // One buffer with its length declared: @hono/node-server hands it to Node's http in one end() call.
  const headers = { 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'content-length': String(outcome.body.byteLength) };
  return new Response(outcome.body, { status: 200, headers });
}
