/**
 * The HTTP client as the sink, for frameworks that invoke tools themselves and give no hook
 * (Tool-Use Binding draft, mapping: "GPT Actions that HTTP POST to a customer API are API_REQUEST
 * acts; destination is the Action server URL"). Every consequential request — by default every
 * method but GET, HEAD and OPTIONS — is an API_REQUEST act over its method, URL, headers and the
 * SHA-256 of its body; it is sent only after enforce allowed it, with exactly the headers and bytes
 * that were digested.
 */
import { canonicalSha256Base64url, sha256Base64url } from '@vrpkit/core';
import { AUTHORITY_HEADER } from '../../authority.js';
import type { MapContext } from '../../host/dispatch-mapped.js';
import { dispatchHostCall, resultOrThrow } from '../../host/host-call.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Headers that make a server act as another method (issue 36 defect 19): a GET carrying
 * `X-HTTP-Method-Override: DELETE` is a DELETE to a server that honours it, so it is gated as one.
 */
const METHOD_OVERRIDE_HEADERS = ['x-http-method-override', 'x-http-method', 'x-method-override'] as const;

/** The method a server honouring the override headers acts as: the first override present, else the request's own. */
export function effectiveMethod(request: Request): string {
  for (const h of METHOD_OVERRIDE_HEADERS) {
    const v = request.headers.get(h)?.trim();
    if (v) return v.toUpperCase();
  }
  return request.method;
}

/**
 * Whether a header says where a request came from or for which host it was meant — what proxies
 * add and servers route and allow-list on. A gated request never carries them (issue 36 defect 16:
 * stripped, not bound): only an intermediary after the gate may add them, so a cooperating server
 * leaves them out of the digest as well (`BOUND_HEADERS_EXCLUDED`).
 */
function isForwardingHeader(name: string): boolean {
  return name === 'forwarded' || name === 'x-real-ip' || name.startsWith('x-forwarded-');
}

function withoutForwardingHeaders(request: Request, bytes: Uint8Array | undefined): Request {
  const names = [...request.headers.keys()].filter(isForwardingHeader);
  if (!names.length) return request;
  const headers = new Headers(request.headers);
  for (const name of names) headers.delete(name);
  // A request built without its body (`requestOf`) keeps it that way; one with a body stream moves it.
  return new Request(request, { headers, ...(request.body && bytes === undefined ? { duplex: 'half' } : {}) } as RequestInit);
}

/** The live arguments of an HTTP act: what the digest covers. Header values enter only as one digest (they may hold credentials). */
export interface HttpRequestArgs {
  method: string;
  url: string;
  content_type: string | null;
  /** base64url SHA-256 of the body bytes, null without a body. */
  body_sha256: string | null;
  /**
   * base64url SHA-256 of the request's headers (RFC 8785 JSON of the sorted [name, value] pairs),
   * leaving out only what the transport, the fetch implementation or an intermediary sets
   * (`BOUND_HEADERS_EXCLUDED`): a method override, an account header or a changed credential
   * after approval is another act.
   */
  headers_sha256: string;
}

/**
 * Headers not bound into an HTTP act: hop-by-hop and framing headers, what fetch implementations
 * add on their own (so the client's request and what a cooperating server receives digest alike),
 * what proxies add, the act id itself and the forwarded authority.
 */
export const BOUND_HEADERS_EXCLUDED: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'connection',
  'content-length',
  'expect',
  'forwarded',
  'host',
  'idempotency-key',
  'keep-alive',
  'sec-fetch-mode',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'via',
  'x-real-ip',
  AUTHORITY_HEADER.toLowerCase(),
]);

function headersDigest(headers: Headers): string {
  // Headers iterate lower-cased and sorted by name; a repeated header is one comma-joined value.
  const bound = [...headers].filter(([name]) => !BOUND_HEADERS_EXCLUDED.has(name) && !name.startsWith('x-forwarded-'));
  return canonicalSha256Base64url(bound);
}

export interface GatedFetchOptions {
  context: MapContext;
  /** Which requests are acts. Default: every method but GET, HEAD and OPTIONS. */
  isConsequential?: (request: Request) => boolean;
  /** tool_id of the acts (default `http_request`; function_id is the method). */
  toolId?: string;
  /** The fetch that sends (default: the global fetch). */
  fetch?: typeof fetch;
  /** Send the consumed authority in the `Agent-Finality-Authority` header, for a server that is a cooperating sink. */
  attachAuthority?: boolean;
}

/**
 * A `fetch` that gates consequential requests. A deny rejects with a `GateError` carrying the EF
 * code, and nothing is sent. The act id is the request's `Idempotency-Key` header when it has one
 * (so a retry is the same act and gets the recorded outcome, never a second send), else a new id.
 * Gated requests do not follow redirects: a redirect would carry the authorized body to a
 * destination nobody authorized; the 3xx response is returned as it is.
 */
export function gatedFetch(opts: GatedFetchOptions): typeof fetch {
  const send = opts.fetch ?? fetch;
  const consequential = opts.isConsequential ?? ((r: Request) => !SAFE_METHODS.has(effectiveMethod(r)));
  return async (input, init) => {
    // A caller's own `isConsequential` sees the request with its body, as built by fetch.
    const bytes = input instanceof Request || opts.isConsequential ? undefined : bytesOf(init?.body);
    const request = requestOf(input, init, bytes);
    // A request that is no act goes out as the caller built it (with its body).
    if (!consequential(request)) return send(bytes !== undefined && request.body === null ? new Request(input, init) : request);
    const gated = withoutForwardingHeaders(request, bytes);
    const { args, body } = await httpRequestArgs(gated, bytes);
    const url = new URL(args.url);
    const r = await dispatchHostCall(
      opts.context,
      {
        source: 'http',
        id: gated.headers.get('idempotency-key') ?? crypto.randomUUID(),
        name: opts.toolId ?? 'http_request',
        function_id: effectiveMethod(gated),
        args,
        act_type: 'API_REQUEST',
        tool_protocol: 'HTTP_API',
        tool_endpoint: url.origin,
        destination: { destination_id: url.origin, destination_url: url.href },
      },
      // The request sent is rebuilt from the digested method and URL and the digested bytes.
      async (live, grant) =>
        recordResponse(
          await send(live.url, {
            method: live.method,
            headers: opts.attachAuthority ? withAuthority(gated.headers, await grant.authorityJws()) : gated.headers,
            ...(body ? { body } : {}),
            redirect: 'manual',
            // Only a signal the caller gave: the fresh signal of a Request of our own never aborts.
            ...(init?.signal ? { signal: init.signal } : input instanceof Request ? { signal: input.signal } : {}),
          }),
        ),
    );
    return replayResponse(resultOrThrow(r));
  };
}

function withAuthority(headers: Headers, jws: string): Headers {
  const h = new Headers(headers);
  h.set(AUTHORITY_HEADER, jws);
  return h;
}

/**
 * The request as fetch would build it, but without copying `bytes` (the body, read directly by
 * `bytesOf`) into a stream: most of a gated POST's CPU in undici was that copy and reading it
 * back. A string body without a content type keeps the general path (fetch adds
 * `text/plain;charset=UTF-8`), and so does a GET or HEAD with a body, which fetch refuses.
 */
function requestOf(input: Parameters<typeof fetch>[0], init: RequestInit | undefined, bytes: Uint8Array | undefined): Request {
  if (bytes === undefined) return new Request(input, init);
  const request = new Request(input, { ...init, body: null });
  const typed = typeof init?.body !== 'string' || request.headers.has('content-type');
  return typed && request.method !== 'GET' && request.method !== 'HEAD' ? request : new Request(input, init);
}

/** A body fetch would send as exactly these bytes (a string as UTF-8), or undefined for any other kind of body. */
function bytesOf(body: BodyInit | null | undefined): Uint8Array<ArrayBuffer> | undefined {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return new Uint8Array(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
  return undefined;
}

/**
 * The live arguments of an HTTP request (reads its body, unless `bytes` are given: the body the
 * request was built without, as `requestOf` leaves it), with the body bytes they cover.
 */
export async function httpRequestArgs(
  request: Request,
  bytes?: Uint8Array<ArrayBuffer>,
): Promise<{ args: HttpRequestArgs; body: Uint8Array<ArrayBuffer> | null }> {
  const body = request.body ? new Uint8Array(await request.arrayBuffer()) : (bytes ?? null);
  return {
    args: {
      method: request.method,
      url: new URL(request.url).href,
      content_type: request.headers.get('content-type'),
      body_sha256: body ? sha256Base64url(body) : null,
      headers_sha256: headersDigest(request.headers),
    },
    body,
  };
}

/** A response as the dispatch journal records it, so a retried act gets the same response back. */
interface RecordedResponse {
  status: number;
  status_text: string;
  headers: Array<[string, string]>;
  body_base64: string;
}

async function recordResponse(res: Response): Promise<RecordedResponse> {
  return {
    status: res.status,
    status_text: res.statusText,
    headers: [...res.headers],
    body_base64: Buffer.from(await res.arrayBuffer()).toString('base64'),
  };
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

function replayResponse(r: RecordedResponse): Response {
  const body = NULL_BODY_STATUSES.has(r.status) ? null : Buffer.from(r.body_base64, 'base64');
  return new Response(body, { status: r.status, statusText: r.status_text, headers: r.headers });
}
