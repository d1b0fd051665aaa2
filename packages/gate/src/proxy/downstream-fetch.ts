import { setMaxListeners } from 'node:events';
import type { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/client';
import { type Dispatcher, request } from 'undici';

/**
 * `fetch` for the downstream's Streamable HTTP transport: undici's `request` on `dispatcher`
 * (a keep-alive `Agent` that only this transport uses), its answer handed to the SDK as a WHATWG
 * `Response`. Global `fetch` spends about twice the CPU per request on the same socket (the Fetch
 * standard's request and response objects, its redirect and CORS steps), and this is the hop
 * every forwarded call pays (bench/gateway, HTTP side). What the SDK relies on stays: it asks for
 * `redirect: 'manual'` and follows redirects itself, which `request` never follows; no
 * `accept-encoding` is sent, so the body arrives as the server wrote it. Cancellation: the
 * transport's one long-lived signal goes to every request, and undici removes its listener when
 * that request's body ends or is cancelled, so listeners never pile up (with global `fetch`
 * they stayed until garbage collection: each new request scanned them all, and past 1500 Node
 * printed a MaxListenersExceededWarning per request on stderr, the proxy's log); closing the
 * transport aborts a response still streaming.
 */
export function downstreamFetch(dispatcher: Dispatcher): FetchLike {
  return async (url, init) => {
    const signal = init?.signal;
    // One abort listener per request in flight: past Node's default bound of ten (eleven
    // concurrent or slow calls), Node prints a MaxListenersExceededWarning on stderr, the
    // proxy's JSON-lines log. The bound global fetch sets, as the proxy had with it (setting
    // it again on the transport's one long-lived signal is a property write).
    if (signal) setMaxListeners(IN_FLIGHT_LISTENERS, signal);
    // The SDK's OAuth requests (token, refresh, registration) send form bodies: as fetch would, their string.
    const body = init?.body instanceof URLSearchParams ? init.body.toString() : init?.body;
    if (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))
      throw new TypeError('the downstream transport sends string, form or byte bodies only');
    let headers = init?.headers;
    if (init?.body instanceof URLSearchParams) {
      headers = new Headers(headers);
      if (!headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    }
    const res = await request(url, {
      dispatcher,
      method: (init?.method ?? 'GET') as Dispatcher.HttpMethod,
      // undici takes a record or any iterable of pairs, except an array (it reads one as flat name, value, …).
      headers: Array.isArray(headers) ? new Headers(headers) : headers,
      body: body ?? null,
      signal: signal ?? null,
    });
    return webResponse(res);
  };
}

/**
 * undici's answer as a WHATWG `Response`, as `fetch` would give it; a status `Response` cannot
 * hold fails as fetch would (its body dropped).
 */
export function webResponse(res: Dispatcher.ResponseData): Response {
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
    else if (value !== undefined) responseHeaders.append(name, value);
  }
  // The Response constructor takes 200–599 only (Fetch §5.5 step 1): anything else fails as fetch would.
  if (res.statusCode < 200 || res.statusCode > 599) {
    discard(res.body);
    throw new TypeError(`the downstream answered with HTTP status ${res.statusCode}`);
  }
  // Fetch §2.2.4: 204, 205 and 304 are null-body statuses; the Response constructor refuses a body with them.
  const nullBody = res.statusCode === 204 || res.statusCode === 205 || res.statusCode === 304;
  if (nullBody) discard(res.body);
  return new Response(nullBody ? null : webBody(res.body), {
    status: res.statusCode,
    statusText: res.statusText,
    headers: responseHeaders,
  });
}

/** Requests in flight on the transport's one signal before Node warns of a listener leak. */
const IN_FLIGHT_LISTENERS = 1500;

/**
 * undici's response body as a WHATWG stream. Not `Readable.toWeb`: on Node 20 its adapter keeps
 * enqueueing data already buffered after the web stream is cancelled, and the
 * "Controller is already closed" TypeError it throws is uncaught: the SDK cancels every body it
 * does not read (a 202, a redirect, an unexpected content type), so one non-JSON answer from the
 * downstream ended the proxy. Cancelling destroys the body, which aborts the request (its
 * connection is not reused) and drops its abort listener.
 */
function webBody(body: Readable): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next();
      // A copy, as Readable.toWeb and undici's own web body make (a chunk may share its memory).
      if (done) controller.close();
      else controller.enqueue(new Uint8Array(value));
    },
    cancel() {
      discard(body);
    },
  });
}

/**
 * Drop a body nobody will read. Destroying undici's body emits its abort as an 'error' event,
 * which, with no listener, is an uncaught exception that ends the proxy (a 204 did).
 */
function discard(body: Readable): void {
  body.on('error', () => {}).destroy();
}
