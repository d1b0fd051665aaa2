/**
 * Offer requests over HTTP (Core VRP v0.1 §4). The offer endpoint and the booking page read
 * their query string the same way and hand every pair, repeated keys included, to the
 * protocol's one parser (`parseOfferRequest`), so both answer the same input with the same code.
 */
import type { OfferRequestRefusal } from '@vrpkit/protocol';
import type { OfferOutcome } from './service.js';

/** Longest raw query string an offer request may carry (three dates-and-count parameters fit in ~60 bytes). */
export const MAX_QUERY_LENGTH = 512;

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The JSON error body every HTTP resource of the node answers with: `{"error":{"code","message"}}`. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
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

/** The raw query string of a request URL, without the `?`. */
export function rawQuery(url: string): string {
  const i = url.indexOf('?');
  return i < 0 ? '' : url.slice(i + 1);
}

/** The raw query of `url` (without the `?`), or `query_too_long` before anything is decoded. */
export function offerQueryString(url: string): { ok: true; query: string } | { ok: false; error: OfferRequestRefusal } {
  const q = rawQuery(url);
  if (q.length > MAX_QUERY_LENGTH) {
    return { ok: false, error: { code: 'query_too_long', message: `the query string is limited to ${MAX_QUERY_LENGTH} bytes` } };
  }
  return { ok: true, query: q };
}

/** The query of `url` as parser input, or `query_too_long` before anything is decoded. */
export function offerQuery(url: string): { ok: true; query: URLSearchParams } | { ok: false; error: OfferRequestRefusal } {
  const read = offerQueryString(url);
  return read.ok ? { ok: true, query: new URLSearchParams(read.query) } : read;
}
