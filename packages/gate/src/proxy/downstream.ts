import { setMaxListeners } from 'node:events';
import type { Readable } from 'node:stream';
import {
  Client,
  type FetchLike,
  type OAuthClientProvider,
  type PriorDiscovery,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { canonicalSha256Base64url } from '@vrpkit/core';
import { Agent, type Dispatcher, request } from 'undici';

/** The MCP server the proxy fronts: a child process over stdio, or a Streamable HTTP endpoint. */
export type DownstreamSpec =
  | { kind: 'stdio'; command: string; args: readonly string[] }
  /** `headers` hold the downstream's credentials: they live in the proxy only, never reach the agent or a log. */
  | { kind: 'http'; url: string; headers: Readonly<Record<string, string>> };

/**
 * The server identity that enters every act's `tool_endpoint` and `destination` (Tool-Use
 * Binding draft, MCP mapping: "Server identity MUST enter destination or tool.tool_endpoint so a
 * swapped server with the same tool name fails sink or destination match") and keys the
 * tool pins. `serverInfo` is self-asserted, so the identity is the transport endpoint: for
 * stdio the proxy name plus a digest of the command line (arguments may hold secrets, so
 * they are not spelled out), for HTTP the URL without credentials or fragment, its query (which
 * often carries an API key) replaced by a digest of it. The identity is logged, audited, shown on
 * the approvals page and sent with `--notify-url`, so it holds no secret; two upstreams that
 * differ only in their query stay two servers.
 */
export function serverIdentity(spec: DownstreamSpec, name: string): string {
  if (spec.kind === 'stdio') return `stdio:${name}#${canonicalSha256Base64url({ command: spec.command, args: spec.args })}`;
  const u = new URL(spec.url);
  const query = u.search;
  u.username = '';
  u.password = '';
  u.hash = '';
  u.search = '';
  return query ? `${u}#${canonicalSha256Base64url({ query })}` : u.toString();
}

/**
 * The era verdict last negotiated with each downstream, by what identifies it on the wire (the
 * command line for stdio, the URL for HTTP; never the credentials). A respawned or reconnected
 * downstream skips the probe and speaks the revision it spoke before (the SDK's `connect({ prior })`:
 * a modern verdict adopts the remembered `server/discover` result with no round trip).
 */
const negotiated = new Map<string, PriorDiscovery>();

function negotiationKey(spec: DownstreamSpec): string {
  return spec.kind === 'stdio' ? canonicalSha256Base64url({ command: spec.command, args: spec.args }) : spec.url;
}

/**
 * What the proxy's client declares to every downstream: elicitation in both modes, passed to the
 * agent of the call that caused it when that agent declared it, declined otherwise
 * (downstream-input.ts; issue 32 item 5). No sampling (deprecated) and no roots: roots would let
 * the agent side widen, e.g., the filesystem server's allowed directories.
 */
export const DOWNSTREAM_CLIENT_CAPABILITIES = { elicitation: { form: {}, url: {} } };

/**
 * Connect the proxy's client to the downstream server (official SDK v2 `Client`). The revision is
 * negotiated once per server identity (MCP 2026-07-28, lifecycle: a client probes with
 * `server/discover` and falls back to `initialize` when the server does not speak it) and
 * remembered for reconnects. The client declares elicitation only (`DOWNSTREAM_CLIENT_CAPABILITIES`).
 * A stdio child inherits the proxy's environment, which is where its credentials live; its own
 * stderr passes through unchanged.
 */
export async function connectDownstream(
  spec: DownstreamSpec,
  authProvider?: OAuthClientProvider,
  o: { probe?: boolean } = {},
): Promise<Client> {
  const key = negotiationKey(spec);
  // `probe`: negotiate on the wire even when the era is remembered (downstream OAuth: the first request's 401 starts the authorization).
  const prior = o.probe ? undefined : negotiated.get(key);
  try {
    return await connectWith(spec, key, prior, authProvider);
  } catch (e) {
    // A server built on an SDK that exits on any request before `initialize` closes the pipe on
    // the probe: it is a 2025 server, started again (it is gone) for the `initialize` handshake.
    if (prior || !(e instanceof SdkError) || e.code !== SdkErrorCode.EraNegotiationFailed || spec.kind !== 'stdio') throw e;
    negotiated.set(key, { kind: 'legacy' });
    return connectWith(spec, key, { kind: 'legacy' });
  }
}

async function connectWith(
  spec: DownstreamSpec,
  key: string,
  prior: PriorDiscovery | undefined,
  authProvider?: OAuthClientProvider,
): Promise<Client> {
  const client = new Client(
    { name: 'vrp-gate-proxy', version: '0.1.0' },
    {
      capabilities: DOWNSTREAM_CLIENT_CAPABILITIES,
      versionNegotiation: { mode: 'auto' },
      // A 2026-07-28 server's InputRequiredResult comes back to the call pipeline (downstream-input.ts):
      // never fulfilled inside the SDK, where no call, act or agent is known.
      inputRequired: { autoFulfill: false },
    },
  );
  const transport =
    spec.kind === 'stdio'
      ? new InPlaceStdioTransport({
          command: spec.command,
          args: [...spec.args],
          env: Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
          stderr: 'inherit',
        })
      : httpTransport(spec.url, spec.headers, authProvider);
  await client.connect(transport, prior ? { prior } : {});
  const discover = client.getDiscoverResult();
  negotiated.set(key, client.getProtocolEra() === 'modern' && discover ? { kind: 'modern', discover } : { kind: 'legacy' });
  return client;
}

/**
 * The SDK's stdio transport, subclassed so the `server/discover` probe runs on the child itself:
 * the SDK probes the exact base class on a second, short-lived child spawned from the same command
 * line, and a downstream is never started twice to be probed (its start may have effects: a lock,
 * a migration, a licence seat). A 2025-only child answers the probe with an error (or not at all,
 * then the probe's timeout) and the `initialize` handshake follows on the same pipe.
 */
class InPlaceStdioTransport extends StdioClientTransport {}

/**
 * The downstream's Streamable HTTP transport, on keep-alive connections of its own that close with
 * it; with `authProvider` (downstream OAuth, auth/downstream-oauth.ts) the SDK runs the MCP
 * authorization flow on a 401 and sends the provider's token on every request.
 */
function httpTransport(
  url: string,
  headers: Readonly<Record<string, string>>,
  authProvider?: OAuthClientProvider,
): StreamableHTTPClientTransport {
  const dispatcher = new Agent();
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { ...headers } },
    fetch: downstreamFetch(dispatcher),
    ...(authProvider ? { authProvider } : {}),
  });
  // The SDK's Client keeps a handler set before connect and calls its own after it (also when connect fails).
  transport.onclose = () => void dispatcher.close().catch(() => {});
  return transport;
}

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
  };
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
