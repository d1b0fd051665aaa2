/**
 * Offer requests over HTTP (Core VRP v0.1 §4): the raw query string of a request URL, bounded
 * before anything is decoded. The offer endpoint and the booking page read their query this
 * way and hand every pair, repeated keys included, to the protocol's one parser
 * (`parseOfferRequest`), so both answer the same input with the same code.
 */
import type { OfferRequestRefusal } from '@vrpkit/protocol';

/** Longest raw query string an offer request may carry (three dates-and-count parameters fit in ~60 bytes). */
export const MAX_QUERY_LENGTH = 512;

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
