import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS, drainable, mcpBatchRefusal } from '@vrpkit/core';
import type { GateProxy } from './proxy.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './stdio.js';

/** Hosts `--listen` accepts: the agent side is plain HTTP, so it stays on the loopback interface. */
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export interface AgentListener {
  /** The Streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp */
  url: string;
  /** The bearer token every request must carry (printed once at start, never logged again). */
  token: string;
  close(): Promise<void>;
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
 * Serve the agent side over Streamable HTTP (SDK `StreamableHTTPServerTransport`, one session
 * and one agent `Server` per `initialize`) at `/mcp`. Every request must carry
 * `Authorization: Bearer <token>` with the random token made here (compared in constant time);
 * otherwise 401 and nothing reaches the MCP layer. A POST body is read here, capped at
 * `maxMessageBytes` (413 with a JSON-RPC `-32600` error, the same cap and wording as stdio) and
 * parsed (`-32700` when it is not JSON), before the transport sees it.
 */
export async function listenForAgents(
  proxy: GateProxy,
  at: { host: string; port: number },
  maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
  shutdownGraceMs = DEFAULT_SHUTDOWN_GRACE_SECONDS * 1000,
): Promise<AgentListener> {
  const token = randomBytes(32).toString('base64url');
  const expected = Buffer.from(token);
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // RFC 6750 §2.1 credentials; the scheme name is case-insensitive (RFC 9110 §11.1).
    const credentials = /^bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    const given = Buffer.from(credentials?.[1] ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: 'unauthorized', message: 'a valid bearer token is required' }));
    }
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: 'not_found', message: 'the MCP endpoint is /mcp' }));
    }
    let parsedBody: unknown;
    if (req.method === 'POST') {
      const read = await readMessage(req, res, maxMessageBytes);
      if (!read) return;
      parsedBody = read.message;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      // A new session (the transport itself refuses anything but an initialize request, or an unknown session id).
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => void sessions.set(id, t),
      });
      t.onclose = () => {
        if (t.sessionId) sessions.delete(t.sessionId);
      };
      await proxy.createAgentServer().connect(t);
      transport = t;
    }
    if (req.method === 'POST') holdHeaders(res);
    await transport.handleRequest(req, res, parsedBody);
    // A request that did not start a session leaves nothing behind.
    if (!transport.sessionId) await transport.close();
  };

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'internal_error' }));
    });
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
    token,
    // Issue 36 defect 2: stop accepting, end the notification streams, answer the calls in flight
    // (within the grace), then close the sessions.
    close: async () => {
      for (const t of sessions.values()) t.closeStandaloneSSEStream();
      await drain.drain(shutdownGraceMs);
      for (const t of sessions.values()) await t.close().catch(() => {});
    },
  };
}

/**
 * A POST's JSON-RPC message, read capped at `maxMessageBytes` and parsed; or undefined once the
 * refusal is answered: over the cap (413), not JSON (-32700), or an empty batch (the transport
 * would answer 202 and nothing), a batch under MCP 2025-06-18 or later, or one over the cap
 * (-32600; issue 36 defect 12).
 */
async function readMessage(req: IncomingMessage, res: ServerResponse, maxMessageBytes: number): Promise<{ message: unknown } | undefined> {
  const body = await readCapped(req, maxMessageBytes);
  if (body === undefined) return void rpcError(res, 413, ErrorCode.InvalidRequest, `message exceeds ${maxMessageBytes} bytes`);
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    return void rpcError(res, 400, ErrorCode.ParseError, 'Parse error: the message is not JSON');
  }
  const batch = mcpBatchRefusal(message, req.headers['mcp-protocol-version'] as string | undefined);
  if (batch) return void rpcError(res, 400, ErrorCode.InvalidRequest, batch);
  return { message };
}

/** How long an SSE answer's headers may wait for its first event (`holdHeaders`). */
const HEADERS_HOLD_MS = 50;

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
 * The request body, or undefined as soon as it exceeds `max` bytes; the rest is read and dropped
 * (not buffered) so the answer can still be written, and the connection is closed after it.
 */
function readCapped(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  if (Number(req.headers['content-length']) > max) {
    req.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume();
      resolve(undefined);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** A JSON-RPC error answered before the MCP layer (JSON-RPC 2.0 §5: id null, it was not read). */
function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(status === 413 ? { connection: 'close' } : {}) });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}
