/**
 * The `http` surface: the verified stay offer endpoint (Core VRP v0.1 §4),
 * `GET ?check_in&check_out&guests` → the signed envelope's exact bytes, or 400 `{error:{code,message}}`.
 * The raw query string is parsed once by the protocol's parser and its accepted parse remembered
 * (offer-parses.ts), so a stay asked again skips decoding and parsing.
 */
import { OFFER_ENDPOINT_PATH, parseOfferRequest } from '@vrpkit/protocol';
import type { Hono } from 'hono';
import { offerResponse } from '../../http/json.js';
import { offerQueryString } from '../../http/query.js';
import { offerParses } from '../offer-parses.js';
import type { ServiceOf } from '../types.js';

/** Core VRP v0.1 §4: `parseOfferRequest` of a raw query string, through the endpoint's memo (by the string). */
const parsedQuery = offerParses();

export function mountOfferEndpoint(app: Hono, serviceOf: ServiceOf): void {
  app.get(OFFER_ENDPOINT_PATH, (c): Response | Promise<Response> => {
    // Every pair of the query, repeated keys included, goes to the one request parser (duplicate_parameter is its call).
    const read = offerQueryString(c.req.url);
    if (!read.ok) return offerResponse(read);
    const parsed = parsedQuery(read.query, () => parseOfferRequest(new URLSearchParams(read.query)));
    if (!parsed.ok) return offerResponse(parsed);
    // A cache hit or a refusal is answered in this turn when the store state is known without
    // waiting: a handler that returns a Response (not a promise) lets @hono/node-server write the
    // prebuilt bytes at once, headers and body in one write. A fresh signature is answered from
    // this turn's signing batch.
    const answer = serviceOf(c).offer(parsed.request);
    return answer instanceof Promise ? answer.then(offerResponse) : offerResponse(answer);
  });
}
