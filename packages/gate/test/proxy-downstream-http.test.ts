/**
 * The direct path of a `tools/call` to a Streamable HTTP downstream (proxy/downstream-http.ts)
 * against the SDK's own transport: two SDK `Client`s, one on each, call the same scripted
 * downstream (a 2025-11-25 server with a session, over real HTTP), and each call must end the
 * same on both — the value the `Client` resolves with (members in the same order) or the error it
 * rejects with (class, code, message, data), the notifications and transport errors it saw, and
 * the request the downstream received (headers and body, but the JSON-RPC id). The answers:
 * text, structured, image and isError results as JSON and as SSE, a JSON-RPC tool error, a 500,
 * an expired session (404), a body that is not JSON, answers in many writes, a log notification
 * and progress on the stream, a stream that ends or breaks without the answer, and a cancelled call. The direct path must have
 * taken the plain answers (the SDK's `send` never ran for them) and replayed the others to it.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, type Notification, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { downstreamFetch, post } from '../src/proxy/downstream-fetch.js';
import { DirectHttpClientTransport } from '../src/proxy/downstream-http.js';

type Json = Record<string, unknown>;

const TEXT = { content: [{ type: 'text', text: 'hello' }] };
const STRUCTURED = { structuredContent: { sum: 3 }, content: [{ type: 'text', text: '{"sum":3}' }], _meta: { 'x-trace': 'a' } };
const IMAGE = { content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png', annotations: { priority: 1 } }] };
const IS_ERROR = { content: [{ type: 'text', text: 'it failed' }], isError: true };
const BIG = { content: [{ type: 'text', text: 'é'.repeat(300_000) }] };

/** What the scripted downstream answers to a `tools/call`, by tool name. */
const SCRIPTS: Record<string, (id: unknown, res: ServerResponse, params: Json) => void> = {
  'text-json': (id, res) => json(res, { jsonrpc: '2.0', id, result: TEXT }),
  'structured-json': (id, res) => json(res, { jsonrpc: '2.0', id, result: STRUCTURED }),
  'image-sse': (id, res) => sse(res, [{ jsonrpc: '2.0', id, result: IMAGE }]),
  'is-error-sse': (id, res) => sse(res, [{ jsonrpc: '2.0', id, result: IS_ERROR }]),
  'text-sse-charset': (id, res) => sse(res, [{ jsonrpc: '2.0', id, result: TEXT }], 'text/event-stream; charset=utf-8'),
  'tool-error': (id, res) =>
    json(res, { jsonrpc: '2.0', id, error: { code: -32602, message: 'Unknown tool: nope', data: { tool: 'nope' } } }),
  'tool-error-sse': (id, res) => sse(res, [{ jsonrpc: '2.0', id, error: { code: -32603, message: 'broken' } }]),
  'http-500': (_id, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('boom'),
  expired: (_id, res) =>
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } })),
  'not-json': (_id, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":'),
  'odd-type': (_id, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'),
  'log-then-result': (id, res) =>
    sse(res, [
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } },
      { jsonrpc: '2.0', id, result: TEXT },
    ]),
  progress: (id, res, params) =>
    sse(res, [
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: (params._meta as Json)?.progressToken, progress: 1, total: 2 },
      },
      { jsonrpc: '2.0', id, result: TEXT },
    ]),
  'bad-event': (id, res) =>
    res
      .writeHead(200, { 'content-type': 'text/event-stream' })
      .end(`event: message\ndata: not json\n\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: TEXT })}\n\n`),
  'ends-early': (_id, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(': nothing\n\n'),
  // An answer in many writes (the direct path's reader stops the connection while chunks wait unread, then reads on).
  'big-sse': (id, res) => {
    const text = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: BIG })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let at = 0; at < text.length; at += 16_384) res.write(text.slice(at, at + 16_384));
    res.end();
  },
  'big-json': (id, res) => json(res, { jsonrpc: '2.0', id, result: BIG }),
  // The connection breaks after a notification, before the answer.
  'broken-sse': (_id, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'a' } })}\n\n`,
    );
    setTimeout(() => res.destroy(), 20);
  },
  slow: () => {},
};

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function sse(res: ServerResponse, messages: unknown[], type = 'text/event-stream'): void {
  res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache' });
  res.end(messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join(''));
}

/** The requests the downstream received, by session, the JSON-RPC id left out. */
const received = new Map<string, unknown[]>();
let server: Server;
let url: URL;
let sessions = 0;

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const message = JSON.parse(Buffer.concat(chunks).toString()) as Json;
  if (message.method === 'initialize') {
    const sid = `session-${++sessions}`;
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': sid });
    const result = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'scripted', version: '1.0.0' } };
    return void res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  }
  const sid = String(req.headers['mcp-session-id']);
  const { id, ...rest } = message;
  const { host: _host, 'content-length': _length, connection: _connection, ...headers } = req.headers;
  received.set(sid, [...(received.get(sid) ?? []), { headers, body: rest }]);
  if (!('id' in message)) return void res.writeHead(202).end();
  const params = message.params as Json;
  SCRIPTS[String(params.name)]?.(id, res, params);
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

interface Side {
  client: Client;
  transport: StreamableHTTPClientTransport;
  notifications: Notification[];
  errors: string[];
  sid: string;
}

const HEADERS = { 'x-api-key': 'secret' };

async function connect(direct: boolean): Promise<Side> {
  const dispatcher = new Agent();
  const transport = direct
    ? new DirectHttpClientTransport(url, { headers: HEADERS, dispatcher })
    : new StreamableHTTPClientTransport(url, { requestInit: { headers: { ...HEADERS } }, fetch: downstreamFetch(dispatcher) });
  const client = new Client({ name: 'differential', version: '1.0.0' }, { capabilities: {} });
  const side: Side = { client, transport, notifications: [], errors: [], sid: '' };
  client.fallbackNotificationHandler = async (n) => void side.notifications.push(n);
  client.onerror = (e) => void side.errors.push(e.message);
  await client.connect(transport, { prior: { kind: 'legacy' } });
  side.sid = String(transport.sessionId);
  return side;
}

/** How a call ended, as the `Client`'s caller sees it (JSON text: members in order). */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify({ result: await p });
  } catch (e) {
    const err = e as Error & { code?: unknown; data?: unknown };
    return JSON.stringify({ error: { class: err.constructor.name, code: err.code, message: err.message, data: err.data } });
  }
}

let direct: Side;
let reference: Side;
const baseSend = vi.spyOn(StreamableHTTPClientTransport.prototype, 'send');

beforeAll(async () => {
  direct = await connect(true);
  reference = await connect(false);
});

afterAll(async () => {
  await direct?.client.close();
  await reference?.client.close();
});

/** One call on both sides: equal outcomes, notifications, errors and received requests; whether the SDK's `send` ran on the direct side. */
async function both(name: string, o: { progress?: boolean; timeout?: number; abortAfterMs?: number } = {}) {
  const run = async (side: Side) => {
    const before = { n: side.notifications.length, e: side.errors.length, r: received.get(side.sid)?.length ?? 0 };
    const progress: unknown[] = [];
    const signal = o.abortAfterMs !== undefined ? AbortSignal.timeout(o.abortAfterMs) : undefined;
    const sendsBefore = baseSend.mock.calls.length;
    const result = await outcome(
      side.client.request(
        { method: 'tools/call', params: { name, arguments: { a: 1 } } },
        {
          ...(o.progress ? { onprogress: (p: unknown) => void progress.push(p) } : {}),
          ...(o.timeout ? { timeout: o.timeout } : {}),
          ...(signal ? { signal } : {}),
        },
      ),
    );
    // Let a trailing cancellation notification or transport error arrive.
    await new Promise((r) => setTimeout(r, 30));
    return {
      result,
      progress,
      notifications: side.notifications.slice(before.n),
      errors: side.errors.slice(before.e),
      received: (received.get(side.sid) ?? []).slice(before.r),
      sdkSends: baseSend.mock.calls.length - sendsBefore,
    };
  };
  const d = await run(direct);
  const r = await run(reference);
  expect(d.result).toBe(r.result);
  expect(d.progress).toEqual(r.progress);
  expect(d.notifications).toEqual(r.notifications);
  expect(d.errors).toEqual(r.errors);
  expect(JSON.stringify(d.received)).toBe(JSON.stringify(r.received).replaceAll(reference.sid, direct.sid));
  return { ...d, direct: d.sdkSends === 0 };
}

describe('a tools/call to a Streamable HTTP downstream: the direct path ends as the SDK’s transport does', () => {
  it.each([
    ['text-json', true],
    ['structured-json', true],
    ['image-sse', true],
    ['is-error-sse', true],
    ['text-sse-charset', true],
    ['tool-error', true],
    ['tool-error-sse', true],
    ['log-then-result', true],
    ['bad-event', true],
    ['http-500', false],
    ['expired', false],
    ['odd-type', false],
    ['not-json', true],
    ['big-sse', true],
    ['big-json', true],
  ])('%s (direct: %s)', { timeout: 20_000 }, async (name, taken) => {
    const r = await both(name);
    expect(r.direct).toBe(taken);
    expect(r.received).toHaveLength(1);
    if (taken && name.endsWith('-json') && name !== 'not-json') expect(JSON.parse(r.result)).toHaveProperty('result');
  });

  it('progress on the stream reaches the caller’s onprogress on both', { timeout: 20_000 }, async () => {
    const r = await both('progress', { progress: true });
    expect(r.progress).toEqual([{ progress: 1, total: 2 }]);
    expect(r.direct).toBe(true);
  });

  it('a stream that ends without the answer: the call times out on both', { timeout: 20_000 }, async () => {
    const r = await both('ends-early', { timeout: 300 });
    expect(JSON.parse(r.result).error.code).toBeDefined();
    // The SDK's cancellation notification follows the timeout on both.
    expect(r.received.map((m) => (m as { body: Json }).body.method)).toEqual(['tools/call', 'notifications/cancelled']);
  });

  it('a stream that breaks before the answer: the same transport error, and the call times out on both', { timeout: 20_000 }, async () => {
    const r = await both('broken-sse', { timeout: 500 });
    expect(r.errors.some((e) => e.startsWith('SSE stream disconnected'))).toBe(true);
    expect(JSON.parse(r.result).error.code).toBeDefined();
  });

  it('a cancelled call: the same rejection and notifications/cancelled on both', { timeout: 20_000 }, async () => {
    const r = await both('slow', { abortAfterMs: 100 });
    expect(r.received.map((m) => (m as { body: Json }).body.method)).toEqual(['tools/call', 'notifications/cancelled']);
  });
});

describe('post(): the direct path’s POST through undici’s dispatcher API', () => {
  it('an answer read slower than it comes arrives whole and in order (the connection pauses and resumes)', {
    timeout: 20_000,
  }, async () => {
    const parts = Array.from({ length: 64 }, (_, i) => `${String(i).padStart(4, '0')}${'x'.repeat(16_380)}`);
    const slow = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const part of parts) res.write(part);
        res.end();
      });
    });
    slow.listen(0, '127.0.0.1');
    await once(slow, 'listening');
    const dispatcher = new Agent();
    try {
      const answer = await post(dispatcher, new URL(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/mcp`), {
        headers: {},
        body: '{}',
        signal: undefined,
      });
      expect(answer.statusCode).toBe(200);
      let text = '';
      for await (const chunk of answer.body) {
        text += chunk.toString();
        await new Promise((r) => setTimeout(r, 2));
      }
      expect(text).toBe(parts.join(''));
    } finally {
      await dispatcher.close();
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
    }
  });
});
