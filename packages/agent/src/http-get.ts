/**
 * The one GET the agent makes for a node document (discovery, JWKS, offer: Core VRP v0.1 §2–§4). Internal
 * to the package: each caller turns a failure into its own `*_unreachable` code (Core VRP v0.1 §9: unknown).
 */
import type { FetchLike } from '@vrpkit/core';
import { receivedBody } from './hardened-fetch.js';

export type HttpGetOutcome = { ok: true; res: Response; text: string } | { ok: false; message: string };

/** UTF-8 decoding as `Response.text()` does it (a leading BOM dropped, malformed bytes replaced). */
const utf8 = new TextDecoder();

/** GET `url` asking for JSON and read the body; a failed request is a message naming `what` and the fetch's error code. */
export async function getJsonText(fetch: FetchLike, url: string, what: string): Promise<HttpGetOutcome> {
  try {
    const res = await fetch(url, { headers: { accept: 'application/json' } });
    // A hardened fetch has read the bytes already: decode them once rather than stream them again.
    const bytes = receivedBody(res);
    return { ok: true, res, text: bytes ? utf8.decode(bytes) : await res.text() };
  } catch (e) {
    const code = (e as { code?: string }).code;
    return { ok: false, message: `${what} fetch failed${code ? ` (${code})` : ''}: ${(e as Error).message}` };
  }
}
