/**
 * The direct path of a `tools/call` to a Streamable HTTP downstream (issue 37 item 3): the SDK's
 * client transport, with its `send` of a plain `tools/call` done here on the transport's own
 * keep-alive undici connection — the POST the SDK would send (its headers, from its own header
 * steps: credentials, the session id and protocol version it negotiated, the era's body-derived
 * headers; its body), and a `200` answer read as the SDK reads it (MCP Streamable HTTP, "Sending
 * Messages to the Server": `application/json` or a `text/event-stream`) through undici's dispatcher
 * API (downstream-fetch.ts `post`), without the Fetch `Response`, the response streams and the schema parse of an ordinary result message, each message
 * handed to the SDK's `Client` through `onmessage`, where everything else happens as on the SDK's
 * path: result decoding and validation, JSON-RPC errors, timeouts, cancellation, and a
 * notification or server request on the stream (a request's answer is the SDK's own POST).
 *
 * Anything unusual in the answer is the SDK's: any other status (a 401 or 403 challenge and the
 * downstream OAuth flow behind it, a 404 for an expired session, a 500, a redirect) or content
 * type, is given to the SDK's own `send` as the answer to its own request (`replays`: the request
 * is not sent twice), so its checks, retries and errors are the SDK's; an SSE stream that ends
 * without the answer goes to the SDK's reconnection. Every other message (an initialize, a
 * notification, a request with SEP-2243 header arguments, a resumed stream) and a transport with
 * DPoP proofs (a proof per request, made inside the SDK's fetch) take the SDK's `send` unchanged.
 *
 * The SDK's transport keeps these steps private; they are reached through `TransportInternals`
 * (@modelcontextprotocol/client 2.4.0). test/proxy-downstream-http.test.ts holds the two paths
 * equal (what the `Client` resolves or rejects with, what the downstream receives).
 */
import {
  type FetchLike,
  type JSONRPCMessage,
  type OAuthClientProvider,
  PROTOCOL_VERSION_META_KEY,
  parseJSONRPCMessage,
  StreamableHTTPClientTransport,
  type TransportSendOptions,
} from '@modelcontextprotocol/client';
import { isRecord } from '@vrpkit/core';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import { downstreamFetch, post, webResponse } from './downstream-fetch.js';

/** The SDK transport's private steps and state the direct path reuses (@modelcontextprotocol/client 2.4.0). */
interface TransportInternals {
  _url: URL;
  _abortController?: AbortController;
  _serverRetryMs?: number;
  _commonHeaders(): Promise<Headers>;
  _applyBodyDerivedHeaders(headers: Headers, message: JSONRPCMessage): void;
  _scheduleReconnection(options: ReconnectOptions, attempt: number): void;
}

interface ReconnectOptions {
  resumptionToken?: string;
  onresumptiontoken?: (token: string) => void;
  requestSignal?: AbortSignal;
  onRequestStreamEnd?: () => void;
}

/**
 * Answers already received for requests the SDK's `send` is given to answer, by request body
 * (the JSON-RPC id makes each body unique): its fetch takes the answer from here instead of the network, once.
 */
type Replays = Map<string, Response>;

/**
 * The downstream's Streamable HTTP transport with the direct path of a plain `tools/call`.
 * `dispatcher` is the keep-alive undici `Agent` that only this transport uses (downstream.ts).
 */
export class DirectHttpClientTransport extends StreamableHTTPClientTransport {
  private readonly dispatcher: Dispatcher;
  private readonly replays: Replays;
  /** DPoP: every request carries a proof made in the SDK's fetch wrapper, so every request is the SDK's. */
  private readonly direct: boolean;

  constructor(url: URL, o: { headers: Readonly<Record<string, string>>; dispatcher: Dispatcher; authProvider?: OAuthClientProvider }) {
    const replays: Replays = new Map();
    const base = downstreamFetch(o.dispatcher);
    const fetch: FetchLike = (input, init) => {
      const body = init?.body;
      const replay = typeof body === 'string' ? replays.get(body) : undefined;
      if (replay === undefined) return base(input, init);
      replays.delete(body as string);
      return Promise.resolve(replay);
    };
    super(url, { requestInit: { headers: { ...o.headers } }, fetch, ...(o.authProvider ? { authProvider: o.authProvider } : {}) });
    this.dispatcher = o.dispatcher;
    this.replays = replays;
    this.direct = !o.authProvider?.dpop;
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (!this.direct || !isPlainToolCall(message) || options?.resumptionToken || options?.headers !== undefined)
      return super.send(message, options);
    const self = this as unknown as TransportInternals;
    const body = JSON.stringify(message);
    try {
      // The SDK's header steps for a POST (`_send`): common headers, the era's body-derived ones, then content type and accept.
      const headers = await self._commonHeaders();
      // The body-derived step adds nothing to a request without a protocol-version claim in its
      // `_meta` envelope (a 2025-11-25 exchange), and validates the whole request against the SDK's
      // schema before it finds that out: it runs only for a request that carries the claim.
      if (typeof envelopeClaim(message) === 'string') self._applyBodyDerivedHeaders(headers, message);
      headers.set('content-type', 'application/json');
      const types = [
        ...(headers
          .get('accept')
          ?.split(',')
          .map((s) => s.trim().toLowerCase()) ?? []),
        'application/json',
        'text/event-stream',
      ];
      headers.set('accept', [...new Set(types)].join(', '));
      const transportSignal = self._abortController?.signal;
      const requestSignal = options?.requestSignal;
      const signal =
        requestSignal !== undefined && transportSignal !== undefined
          ? AbortSignal.any([transportSignal, requestSignal])
          : (requestSignal ?? transportSignal);
      const res = await post(this.dispatcher, self._url, { headers: Object.fromEntries(headers), body, signal });
      const type = res.statusCode === 200 ? mediaType(res.headers['content-type']) : undefined;
      if (type === 'application/json') return this.deliverJson(await res.body.text());
      if (type === 'text/event-stream') return void this.readStream(res.body, options);
      // Anything else is the SDK's, as the answer to its own request.
      this.replays.set(body, webResponse({ ...res, body: res.body.readable() }));
    } catch (error) {
      // As the SDK's `_send`: an error is reported unless the request was cancelled, and thrown.
      if (options?.requestSignal?.aborted !== true) this.onerror?.(error as Error);
      throw error;
    }
    try {
      return await super.send(message, options);
    } finally {
      // Taken by the SDK's fetch, unless its send failed before fetching (e.g. its credentials step threw).
      this.replays.delete(body);
    }
  }

  /** A JSON answer: one message or a batch, each to the `Client` (the SDK's `_send`, `application/json`). */
  private deliverJson(text: string): void {
    const data: unknown = JSON.parse(text);
    const messages = Array.isArray(data) ? data.map(toMessage) : [toMessage(data)];
    for (const m of messages) this.onmessage?.(m);
  }

  /**
   * An SSE answer, read as the SDK's `_handleSseStream` reads a POST's stream (not reconnectable
   * unless an event carried an id): every `message` event's data to the `Client` (one that does
   * not parse is reported, the stream goes on); a stream that ends or breaks before the answer
   * came is resumed by the SDK's reconnection when it can be.
   */
  private async readStream(body: AsyncIterable<Buffer>, options: TransportSendOptions | undefined): Promise<void> {
    const self = this as unknown as TransportInternals;
    const { onresumptiontoken, requestSignal, onRequestStreamEnd } = options ?? {};
    const intentionalAbort = () => self._abortController?.signal.aborted === true || requestSignal?.aborted === true;
    let lastEventId: string | undefined;
    let received = false;
    /** The events of the chunk being read, delivered one by one (`deliver`). */
    const events: EventSourceMessage[] = [];
    const parser = createParser({
      onRetry: (ms) => {
        self._serverRetryMs = ms;
      },
      onEvent: (event) => void events.push(event),
    });
    /**
     * Each event as the SDK delivers it: its id as the resumption token, its data to the `Client`
     * (one that does not parse is reported, the stream goes on). After a notification or request
     * the next message waits a turn, as it does behind the SDK's stream reader: the `Client` runs
     * a notification's handler a microtask later, and progress must reach it before the answer
     * that ends its request.
     */
    const deliver = async () => {
      for (let event = events.shift(); event !== undefined; event = events.shift()) {
        if (event.id) {
          lastEventId = event.id;
          onresumptiontoken?.(event.id);
        }
        if (!event.data || (event.event && event.event !== 'message')) continue;
        let answer = false;
        try {
          const message = toMessage(JSON.parse(event.data));
          answer = 'id' in message && ('result' in message || 'error' in message);
          received ||= answer;
          this.onmessage?.(message);
        } catch (error) {
          this.onerror?.(error as Error);
        }
        if (!answer) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const decoder = new TextDecoder();
    const resume = () => {
      if (lastEventId !== undefined && !received && self._abortController && !intentionalAbort()) {
        self._scheduleReconnection({ resumptionToken: lastEventId, onresumptiontoken, requestSignal, onRequestStreamEnd }, 0);
        return true;
      }
      return false;
    };
    try {
      for await (const chunk of body) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        await deliver();
      }
      parser.feed(decoder.decode());
      await deliver();
      if (!resume() && !intentionalAbort()) onRequestStreamEnd?.();
    } catch (error) {
      if (intentionalAbort()) return;
      this.onerror?.(new Error(`SSE stream disconnected: ${error}`));
      try {
        if (!resume()) onRequestStreamEnd?.();
      } catch (e) {
        this.onerror?.(new Error(`Failed to reconnect: ${e instanceof Error ? e.message : String(e)}`));
        onRequestStreamEnd?.();
      }
    }
  }
}

/**
 * A JSON-RPC message as the SDK's transport hands it on: an ordinary result message (a `result`
 * object, a string or number id, nothing else) as it is — the SDK's schema passes it unchanged,
 * and the `Client` validates the result itself —, anything else through the SDK's own parse.
 */
function toMessage(value: unknown): JSONRPCMessage {
  if (
    isRecord(value) &&
    value.jsonrpc === '2.0' &&
    (typeof value.id === 'string' || typeof value.id === 'number') &&
    isRecord(value.result) &&
    Object.keys(value).length === 3
  )
    return value as unknown as JSONRPCMessage;
  return parseJSONRPCMessage(value);
}

/** A lone `tools/call` request (JSON-RPC 2.0 §4, with an id). */
function isPlainToolCall(message: JSONRPCMessage): boolean {
  return !Array.isArray(message) && 'method' in message && message.method === 'tools/call' && 'id' in message && message.id !== undefined;
}

/** The protocol-version claim in a request's `_meta` envelope (MCP 2026-07-28), as the SDK's body-derived header step reads it. */
function envelopeClaim(message: JSONRPCMessage): unknown {
  const params = (message as { params?: { _meta?: Record<string, unknown> } }).params;
  return params?._meta?.[PROTOCOL_VERSION_META_KEY];
}

/**
 * The media type of a plain `Content-Type` (RFC 9110 §8.3.1): one of the two an answer to a
 * request may have, with plain parameters; undefined for anything else (the SDK reads that one).
 */
function mediaType(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  return /^(application\/json|text\/event-stream)[ \t]*(?:;[ \t]*[!#$%&'*+.^`|~\w-]+=[!#$%&'*+.^`|~\w-]+[ \t]*)*$/i
    .exec(header)?.[1]
    ?.toLowerCase();
}
