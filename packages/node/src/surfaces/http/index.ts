/**
 * The `http` surface: the verified stay offer endpoint (Core VRP v0.1 §4),
 * `GET ?check_in&check_out&guests` → the signed envelope's exact bytes, or 400 `{error:{code,message}}`.
 * The raw query string is parsed once by the protocol's parser and its accepted parse remembered,
 * so a stay asked again skips decoding and parsing.
 */
import { OFFER_ENDPOINT_PATH, type OfferRequestResult, type ParsedOfferRequest, parseOfferRequest } from '@vrpkit/protocol';
import type { Hono } from 'hono';
import { offerResponse } from '../../http/json.js';
import { offerQueryString } from '../../http/query.js';
import type { ServiceOf } from '../types.js';

/** Most raw query strings whose accepted parse the offer endpoint remembers (the memo is emptied when full). */
const PARSED_QUERIES_MAX = 4096;

/**
 * The offer endpoint's accepted parses by raw query string, one memo for the process (every node
 * service in it, every platform tenant: the bound holds once). The parse depends on the query
 * alone (today and the horizon are the service's to judge); refusals are not kept, so a client
 * cannot fill the memo with them.
 */
const parsedQueries = new Map<string, { ok: true; request: ParsedOfferRequest }>();

/** Core VRP v0.1 §4: `parseOfferRequest` of the raw query string `query`, through the memo above. */
function parseOfferQuery(query: string): OfferRequestResult {
  const known = parsedQueries.get(query);
  if (known) return known;
  const parsed = parseOfferRequest(new URLSearchParams(query));
  if (parsed.ok) {
    if (parsedQueries.size >= PARSED_QUERIES_MAX) parsedQueries.clear();
    parsedQueries.set(query, parsed);
  }
  return parsed;
}

export function mountOfferEndpoint(app: Hono, serviceOf: ServiceOf): void {
  app.get(OFFER_ENDPOINT_PATH, (c): Response | Promise<Response> => {
    // Every pair of the query, repeated keys included, goes to the one request parser (duplicate_parameter is its call).
    const read = offerQueryString(c.req.url);
    if (!read.ok) return offerResponse(read);
    const parsed = parseOfferQuery(read.query);
    if (!parsed.ok) return offerResponse(parsed);
    // A cache hit or a refusal is answered in this turn when the store state is known without
    // waiting: a handler that returns a Response (not a promise) lets @hono/node-server write the
    // prebuilt bytes at once, headers and body in one write. A fresh signature is answered from
    // this turn's signing batch.
    const answer = serviceOf(c).offer(parsed.request);
    return answer instanceof Promise ? answer.then(offerResponse) : offerResponse(answer);
  });
}
