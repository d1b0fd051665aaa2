import { setMaxListeners } from 'node:events';
import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/client';
import { type Dispatcher, errors, request } from 'undici';

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
export function webResponse(res: Pick<Dispatcher.ResponseData, 'statusCode' | 'statusText' | 'headers'> & { body: Readable }): Response {
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

/** An answer read through undici's dispatcher API (`post`): its status line, its headers, its body as it comes. */
export interface PostAnswer {
  statusCode: number;
  statusText: string;
  headers: Dispatcher.ResponseData['headers'];
  body: AnswerBody;
}

/**
 * A POST of `body` to `url` on `dispatcher`, answered as soon as its headers came: what
 * `request()` does, through undici's dispatcher API without `request()`'s response stream
 * (a `Readable` per answer, read through its async iterator), which is most of what a small
 * answer costs on the direct path besides the socket itself (bench/gateway, HTTP side). The
 * answer is the same: it fails with the connection's error or `signal`'s reason before the
 * headers, its body with them after; the signal's listener is removed when the answer ends.
 */
export function post(
  dispatcher: Dispatcher,
  url: URL,
  init: { headers: Record<string, string>; body: string; signal: AbortSignal | undefined },
): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    const { signal } = init;
    let body: AnswerBody | undefined;
    let onAbort: (() => void) | undefined;
    const release = () => {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      onAbort = undefined;
    };
    dispatcher.dispatch(
      { origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', headers: init.headers, body: init.body },
      {
        onRequestStart(controller) {
          if (!signal) return;
          const abort = () => controller.abort(signal.reason ?? new errors.RequestAbortedError());
          if (signal.aborted) return abort();
          release();
          onAbort = abort;
          signal.addEventListener('abort', abort, { once: true });
        },
        onResponseStart(controller, statusCode, headers, statusMessage) {
          body = new AnswerBody(controller);
          resolve({ statusCode, statusText: statusMessage ?? '', headers, body });
        },
        onResponseData(_controller, chunk) {
          body?.push(chunk);
        },
        onResponseEnd() {
          release();
          body?.end();
        },
        onResponseError(_controller, error) {
          release();
          if (body) body.fail(error);
          else reject(error);
        },
      },
    );
  });
}

/** How many chunks an answer body holds unread before the connection stops reading (undici's `pause`). */
const BODY_CHUNKS_BUFFERED = 4;

/**
 * An answer's body as its chunks come, read once: as an async iterable (a loop that stops early,
 * or `readable()`'s destruction, aborts the rest of the answer), or whole (`text`).
 */
export class AnswerBody implements AsyncIterableIterator<Buffer> {
  private readonly chunks: Buffer[] = [];
  private done = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  push(chunk: Buffer): void {
    // undici hands on an empty chunk when it resumes a paused parser: nothing to read, nothing to pause for.
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    if (this.chunks.length >= BODY_CHUNKS_BUFFERED) this.controller.pause();
    this.wake?.();
  }

  end(): void {
    this.done = true;
    this.wake?.();
  }

  fail(error: Error): void {
    this.error = error;
    this.wake?.();
  }

  async next(): Promise<IteratorResult<Buffer, undefined>> {
    while (this.chunks.length === 0 && !this.done && this.error === undefined)
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    this.wake = undefined;
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      if (this.controller.paused && this.chunks.length === 0) this.controller.resume();
      return { value: chunk, done: false };
    }
    if (this.error !== undefined) throw this.error;
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<Buffer, undefined>> {
    if (!this.done && this.error === undefined) {
      this.error = new errors.RequestAbortedError();
      this.controller.abort(this.error);
    }
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The whole body, UTF-8 decoded as `fetch` decodes a body (a leading BOM dropped). */
  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this) chunks.push(chunk);
    return UTF8.decode(Buffer.concat(chunks));
  }

  /** The body as a stream (the `Response` the SDK reads, `webResponse`); destroying it aborts the answer. */
  readable(): Readable {
    return Readable.from(this, { objectMode: false });
  }
}

const UTF8 = new TextDecoder();
