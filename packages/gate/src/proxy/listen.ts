import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import {
  type AuthInfo,
  type CallToolResult,
  createMcpHandler,
  hostHeaderValidationResponse,
  type InputRequiredResult,
  isInitializeRequest,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  type McpHttpHandler,
  type Notification,
  originValidationResponse,
  ProtocolErrorCode,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS, drainable, mcpBatchRefusal } from '@vrpkit/core';
import { authenticateRequest, calledTool, protectedResourceMetadataResponse, toolScopeRefusal } from '../auth/http.js';
import type { Principal, ResourceServer } from '../auth/resource-server.js';
import { plainModernCall } from './direct-call.js';
import { OAUTH_CALLBACK_PATH } from './downstream-oauth.js';
import { type PlainModernCall, plainAnswer } from './plain-call.js';
import type { GateProxy } from './proxy.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './stdio.js';

/** Hosts `--listen` accepts: the agent side is plain HTTP, so it stays on the loopback interface. */
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export interface AgentListener {
  /** The Streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp */
  url: string;
  /** The bearer token every request must carry (printed once at start, never logged again); absent in team mode. */
  token?: string;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Cap on one request body in bytes (default 4 MiB, as stdio's line cap). */
  maxMessageBytes?: number;
  /** How long a stop waits for the calls in flight. */
  shutdownGraceMs?: number;
  /**
   * Host names (`Host` header, without port) and origin host names (`Origin`) accepted besides the
   * loopback ones: a name the operator put in front of the listener (e.g. a local reverse proxy).
   */
  allowedHosts?: readonly string[];
  /**
   * Team mode (issue 33): tokens are access tokens this resource server validates (its metadata
   * served at the well-known path), not the printed token; each request's principal travels to the
   * agent `Server` as the SDK's `AuthInfo`.
   */
  resourceServer?: ResourceServer;
  /**
   * Downstream OAuth (proxy/downstream-oauth.ts): the gateway's OAuth callback, served at
   * `/oauth/callback` without a bearer token (the person's browser arrives from the authorization
   * server; the single-use `state` is what authorizes the redemption).
   */
  oauthCallback?: (request: Request) => Promise<Response>;
}

/** Parse `HOST:PORT` (IPv6 in brackets); only loopback hosts. Throws RangeError with a clear message. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!host || !Number.isInteger(port) || port > 65535) throw new RangeError(`--listen must be HOST:PORT, got ${value}`);
  if (!LOOPBACK.has(host))
    throw new RangeError(`--listen serves plain HTTP and accepts loopback hosts only (127.0.0.1, ::1, localhost), got ${host}`);
  return { host, port };
}

/**
 * Serve the agent side over Streamable HTTP at `/mcp`, both MCP revisions on the one endpoint:
 * - 2026-07-28 per request (the SDK v2 `createMcpHandler`, strict: `server/discover`, the
 *   `Mcp-Method`/`Mcp-Name`/`MCP-Protocol-Version` headers checked against the body, `resultType`,
 *   the proxy's cache hint on `tools/list`, `subscriptions/listen` for list changes), a fresh agent
 *   `Server` per request;
 * - 2025-11-25 and older as before: one session and one agent `Server` per `initialize`
 *   (SDK v2 `WebStandardStreamableHTTPServerTransport`), its GET stream carrying notifications.
 * `isLegacyRequest` (the SDK's own routing step) splits the two, so the proxy and the SDK can never
 * disagree on a request's revision. A plain stateless 2026-07-28 `tools/call` (no progress token,
 * no retried round; token mode) takes the direct path (direct-call.ts): the same pipeline and
 * gate, without the SDK's per-request `Server`, answered with the SDK's bytes.
 *
 * In front of both, in order: `Host` and `Origin` are checked against the loopback names and
 * `allowedHosts` (MCP transports, security warning: servers MUST validate `Origin` and SHOULD
 * bind to localhost, against DNS rebinding), whatever the token — a page on another site that
 * learned the token still gets 403; then `Authorization: Bearer <token>` with the random token
 * made here (compared in constant time; else 401); then the path. A POST body is read here,
 * capped at `maxMessageBytes` (413 with a JSON-RPC `-32600` error, the same cap and wording as
 * stdio) and parsed (`-32700` when it is not JSON), before the SDK sees it.
 */
export async function listenForAgents(proxy: GateProxy, at: { host: string; port: number }, o: ListenOptions = {}): Promise<AgentListener> {
  const maxMessageBytes = o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const token = randomBytes(32).toString('base64url');
  const expected = Buffer.from(token);
  const hosts = [...localhostAllowedHostnames(), ...(o.allowedHosts ?? [])];
  const origins = [...localhostAllowedOrigins(), ...(o.allowedHosts ?? [])];
  const sessions = new LegacySessions(proxy);
  const replays: Replays = new WeakMap();
  const modern = modernHandler(proxy, maxMessageBytes, replays);
  const unsubscribe = proxy.onChange((n) => publishChange(modern, n));

  const handle = async (request: Request, env?: { outgoing?: unknown }): Promise<Response> => {
    const refused = hostHeaderValidationResponse(request, hosts) ?? originValidationResponse(request, origins);
    if (refused) return refused;
    if (o.oauthCallback && new URL(request.url).pathname === OAUTH_CALLBACK_PATH)
      return request.method === 'GET' ? o.oauthCallback(request) : new Response(null, { status: 405, headers: { allow: 'GET' } });
    const authenticated = await authenticate(request);
    if (authenticated instanceof Response) return authenticated;
    const authInfo = authenticated;
    if (new URL(request.url).pathname !== '/mcp')
      return Response.json({ error: 'not_found', message: 'the MCP endpoint is /mcp' }, { status: 404 });
    if (request.method !== 'POST') return sessions.handle(request, undefined, authInfo);
    const read = await readMessage(request, maxMessageBytes);
    if (read instanceof Response) return read;
    const tool = o.resourceServer && authInfo ? calledTool(read.message) : undefined;
    if (tool !== undefined) {
      const principal = authInfo?.extra?.principal as Principal;
      const refused = toolScopeRefusal(o.resourceServer as ResourceServer, principal, tool, (p, t) => proxy.classify(p, t));
      if (refused) return refused;
    }
    // Team mode's calls stay on the SDK's path (their principal travels in the SDK's AuthInfo).
    const plain = o.resourceServer ? null : plainModernCall(request, read.message);
    if (plain) return direct(request, read.message, plain, env?.outgoing);
    if (await isLegacyRequest(request, read.message, { maxRequestBodySize: maxMessageBytes }))
      return sessions.handle(request, read.message, authInfo);
    return modern.fetch(request, { parsedBody: read.message, ...(authInfo ? { authInfo } : {}) });
  };

  /**
   * A plain 2026-07-28 `tools/call` (direct-call.ts): run through the same pipeline, answered with
   * the SDK's bytes for a plain result, or by the SDK itself from the call's outcome (`replays`).
   * A call whose agent went away is answered as the SDK answers it (499, to no one).
   */
  const direct = async (request: Request, message: unknown, call: PlainModernCall, out: unknown): Promise<Response> => {
    let outcome: Outcome;
    try {
      outcome = { result: await proxy.callPlainModern(call, request.signal) };
    } catch (error) {
      outcome = { error };
    }
    if (request.signal.aborted) return new Response(null, { status: 499 });
    const body = 'result' in outcome ? plainAnswer(outcome.result as CallToolResult, call.id, 'modern', proxy.serverInfo) : null;
    if (body === null) {
      replays.set(request, () => ('result' in outcome ? Promise.resolve(outcome.result) : Promise.reject(outcome.error)));
      return modern.fetch(request, { parsedBody: message });
    }
    const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    if (!(out instanceof ServerResponse) || out.headersSent) return new Response(body, { status: 200, headers });
    out.writeHead(200, headers);
    out.end(body);
    return RESPONSE_ALREADY_SENT;
  };

  /** The request's `AuthInfo` (team mode), undefined (the printed token matched), or the refusal; the metadata document is public. */
  const authenticate = async (request: Request): Promise<AuthInfo | undefined | Response> => {
    if (o.resourceServer) {
      const metadata = protectedResourceMetadataResponse(o.resourceServer, request);
      if (metadata) return metadata;
      const auth = await authenticateRequest(o.resourceServer, request);
      return auth.ok ? auth.authInfo : auth.response;
    }
    // RFC 6750 §2.1 credentials; the scheme name is case-insensitive (RFC 9110 §11.1).
    const credentials = /^bearer +(\S+) *$/i.exec(request.headers.get('authorization') ?? '');
    const given = Buffer.from(credentials?.[1] ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return Response.json(
        { error: 'unauthorized', message: 'a valid bearer token is required' },
        { status: 401, headers: { 'www-authenticate': 'Bearer' } },
      );
    return undefined;
  };

  const listener = getRequestListener(handle, {
    errorHandler: () => Response.json({ error: 'internal_error' }, { status: 500 }),
  });
  const http: HttpServer = createServer((req, res) => {
    if (req.method === 'POST') holdHeaders(res);
    return listener(req, res);
  });
  // A stop waits for the calls in flight; a session's GET notification stream never ends by itself, so close() ends it first.
  const drain = drainable(http);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(at.port, at.host, resolve);
  });
  const { port, address } = http.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/mcp`,
    ...(o.resourceServer ? {} : { token }),
    // Issue 36 defect 2: stop accepting, end the notification streams, answer the calls in flight
    // (within the grace), then close the sessions.
    close: async () => {
      unsubscribe();
      sessions.endStreams();
      await modern.close().catch(() => {});
      await drain.drain(o.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_SECONDS * 1000);
      await sessions.close();
    },
  };
}

/** How a call on the direct path ended: the pipeline's answer, or what it threw. */
type Outcome = { result: CallToolResult | InputRequiredResult } | { error: unknown };
/** The outcomes of direct-path calls the SDK answers itself, by request (`modernHandler`). */
type Replays = WeakMap<Request, () => Promise<CallToolResult | InputRequiredResult>>;

/**
 * The 2026-07-28 leg: strict (2025 traffic never reaches it), a fresh agent `Server` per request;
 * for a request the direct path already ran (`replays`), a `Server` whose `tools/call` handler
 * gives that run's outcome, so the SDK answers it exactly as it answers the call itself.
 */
function modernHandler(proxy: GateProxy, maxMessageBytes: number, replays: Replays): McpHttpHandler {
  return createMcpHandler(({ requestInfo }) => proxy.createAgentServer('modern', false, requestInfo && replays.get(requestInfo)), {
    legacy: 'reject',
    maxRequestBodySize: maxMessageBytes,
  });
}

/** A downstream change notification onto the 2026-07-28 agents' `subscriptions/listen` streams. */
function publishChange(modern: McpHttpHandler, n: Notification): void {
  if (n.method === 'notifications/tools/list_changed') modern.notify.toolsChanged();
  else if (n.method === 'notifications/prompts/list_changed') modern.notify.promptsChanged();
  else if (n.method === 'notifications/resources/list_changed') modern.notify.resourcesChanged();
  else if (n.method === 'notifications/resources/updated' && typeof n.params?.uri === 'string') modern.notify.resourceUpdated(n.params.uri);
}

/** The 2025-11-25 leg: one SDK transport and agent `Server` per session, made by `initialize`. */
class LegacySessions {
  private readonly sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  /** Team mode: the subject that opened each session; nobody else may use its id. */
  private readonly owners = new Map<string, string>();

  constructor(private readonly proxy: GateProxy) {}

  async handle(request: Request, parsedBody?: unknown, authInfo?: AuthInfo): Promise<Response> {
    const sid = request.headers.get('mcp-session-id');
    const known = sid === null ? undefined : this.sessions.get(sid);
    const subject = (authInfo?.extra?.principal as Principal | undefined)?.subject;
    // Another user's session id is answered as an unknown one (the transport's 404): a session is its opener's alone.
    if (known && sid !== null && this.owners.get(sid) === subject) return known.handleRequest(request, { parsedBody, authInfo });
    if (known) return sessionNotFound();
    // A session id this listener does not hold (ended by DELETE or a restart, or never issued) is
    // answered 404 (MCP 2025-11-25, Streamable HTTP, session management: once a session is
    // terminated the server MUST answer requests carrying its id with 404 Not Found, and a client
    // that gets it starts a new session). A new transport would answer 400 ("not initialized").
    // Only an `initialize` may come with a stale id: it starts a new session, as before.
    if (sid !== null && !isInitializeRequest(parsedBody)) return sessionNotFound();
    // A new session (the transport itself refuses anything but an initialize request, or an unknown session id).
    const t: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        this.sessions.set(id, t);
        if (subject !== undefined) this.owners.set(id, subject);
      },
    });
    t.onclose = () => {
      if (t.sessionId) {
        this.sessions.delete(t.sessionId);
        this.owners.delete(t.sessionId);
      }
    };
    await this.proxy.createAgentServer('legacy').connect(t);
    const response = await t.handleRequest(request, { parsedBody, authInfo });
    // A request that did not start a session leaves nothing behind.
    if (!t.sessionId) await t.close();
    return response;
  }

  endStreams(): void {
    for (const t of this.sessions.values()) t.closeStandaloneSSEStream();
  }

  async close(): Promise<void> {
    for (const t of [...this.sessions.values()]) await t.close().catch(() => {});
  }
}

/** The answer to a request on a session this listener does not hold, as the SDK transport words it (404, JSON-RPC -32001). */
function sessionNotFound(): Response {
  return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, { status: 404 });
}

/** How long an SSE answer's headers may wait for its first event (`holdHeaders`). */
export const HEADERS_HOLD_MS = 50;

/**
 * Hold the headers of a POST's SSE answer until its first event is written (Node sends headers
 * and that event in one write), or `HEADERS_HOLD_MS` at most. The SDK transport answers a
 * request with a stream, and `@hono/node-server`, which writes it, flushes the headers at once
 * when the answer is not ready within its turn: a quick tool call then cost the agent's
 * connection two writes and two wake-ups instead of one (bench/gateway, HTTP side). Nothing
 * waits on these headers: the agent reads the answer and any progress from the events, and the
 * first event releases them; the bound keeps a long call (an approval wait with no progress to
 * report) from leaving the agent's HTTP client without a response past its headers timeout.
 */
function holdHeaders(res: ServerResponse): void {
  let timer: NodeJS.Timeout | undefined;
  res.flushHeaders = () => {
    // Not `headersSent`: it turns true at `writeHead`, which stores the headers without sending
    // them, and the caller always writes the head before asking for the flush. Flushing headers
    // that an event already carried sends nothing more.
    timer ??= setTimeout(() => {
      if (!res.writableEnded && !res.destroyed) ServerResponse.prototype.flushHeaders.call(res);
    }, HEADERS_HOLD_MS);
  };
  res.once('close', () => clearTimeout(timer));
}

/**
 * A POST's JSON-RPC message, read capped at `maxMessageBytes` and parsed; or the refusal to
 * answer: over the cap (413), not JSON (-32700), or an empty batch, a batch under MCP 2025-06-18
 * or later, or one over the cap (-32600; issue 36 defect 12).
 */
async function readMessage(request: Request, maxMessageBytes: number): Promise<{ message: unknown } | Response> {
  const body = await readCapped(request, maxMessageBytes);
  if (body === undefined) return rpcError(413, ProtocolErrorCode.InvalidRequest, `message exceeds ${maxMessageBytes} bytes`);
  let message: unknown;
  try {
    message = JSON.parse(UTF8.decode(body));
  } catch {
    return rpcError(400, ProtocolErrorCode.ParseError, 'Parse error: the message is not JSON');
  }
  const batch = mcpBatchRefusal(message, request.headers.get('mcp-protocol-version') ?? undefined);
  if (batch) return rpcError(400, ProtocolErrorCode.InvalidRequest, batch);
  return { message };
}

/** Request bodies are UTF-8 JSON (RFC 8259 §8.1); one decoder serves every request. */
const UTF8 = new TextDecoder();

/**
 * The request body, or undefined as soon as it exceeds `max` bytes (the rest is not buffered).
 * A body of a declared length within the cap is read in one piece: the HTTP parser delivers no
 * more than `Content-Length` says (RFC 9112 §6.3), and `@hono/node-server` reads it straight off
 * the socket, without the WHATWG request and its body stream (bench/gateway, HTTP side).
 */
async function readCapped(request: Request, max: number): Promise<Uint8Array | undefined> {
  const declared = request.headers.get('content-length');
  const length = declared === null || declared.trim() === '' ? Number.NaN : Number(declared);
  if (Number.isSafeInteger(length) && length >= 0 && length <= max) return new Uint8Array(await request.arrayBuffer());
  if (length > max || !request.body) {
    if (request.body) await request.body.cancel().catch(() => {});
    return request.body ? undefined : new Uint8Array();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.length;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(r.value);
  }
  return Buffer.concat(chunks);
}

/** A JSON-RPC error answered before the MCP layer (JSON-RPC 2.0 §5: id null, it was not read). */
function rpcError(status: number, code: number, message: string): Response {
  return Response.json(
    { jsonrpc: '2.0', id: null, error: { code, message } },
    { status, ...(status === 413 ? { headers: { connection: 'close' } } : {}) },
  );
}
