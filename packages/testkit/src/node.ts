/**
 * Node harness for the node and CLI tests: temp data directories, a mutable clock, an https
 * client that reaches `https://{domain}` on a loopback port with the dev CA (curl
 * `--connect-to` + `--cacert`, test-only), ajv validators for the official schemas, and the
 * iCal feed of another channel that the calendar-sync tests serve, and a raw HTTP(S) exchange for
 * what fetch cannot send (any Host header, a chosen local address).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import { type RequestOptions as HttpsRequestOptions, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '@vrpkit/core';
import { initNode, type ServedNode, type ServeNodeOptions, serveNode } from '@vrpkit/node';
import { type OfficialSchemaName, officialSchema } from '@vrpkit/protocol';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `vrpkit-node-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A clock the test moves by hand: a `Clock` (the node reads it through `now()`) with `set` and `advance`. */
export function testClock(start: string | number) {
  let t = typeof start === 'number' ? start : Date.parse(start);
  return {
    now: () => t,
    set: (at: string | number) => {
      t = typeof at === 'number' ? at : Date.parse(at);
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}

export interface NodeClient {
  get(path: string): Promise<{ status: number; headers: Headers; text: string }>;
  request(
    method: string,
    path: string,
    init?: { body?: string; headers?: Record<string, string>; redirect?: 'follow' | 'manual' },
  ): Promise<{ status: number; headers: Headers; text: string }>;
  close(): Promise<void>;
}

/** Dial 127.0.0.1:port for every request, with SNI and certificate checks for `domain` against `caPem`. */
export function nodeClient(domain: string, port: number, caPem: string): NodeClient {
  const connector = buildConnector({ ca: caPem });
  const agent = new Agent({
    connect: (opts, cb) => connector({ ...opts, hostname: '127.0.0.1', port: String(port), servername: domain }, cb),
  });
  return {
    get(path) {
      return this.request('GET', path);
    },
    async request(method, path, init = {}) {
      const res = await undiciFetch(`https://${domain}${path}`, { method, dispatcher: agent, ...init });
      return { status: res.status, headers: res.headers as unknown as Headers, text: await res.text() };
    },
    close: () => agent.close(),
  };
}

/**
 * Initialise a node for `domain` in `dataDir` and serve it over https (dev CA) on the test
 * clock `now`, with a client that reaches it. `beforeServe` runs in between (calendar blocks, feeds).
 */
export async function serveTestNode(
  domain: string,
  dataDir: string,
  clock: Clock,
  opts: { beforeServe?: () => Promise<unknown> } & Omit<ServeNodeOptions, 'dataDir' | 'dev' | 'clock'> = {},
): Promise<{ node: ServedNode; client: NodeClient }> {
  const { beforeServe, ...serveOptions } = opts;
  await initNode({ domain, dataDir, clock, ...(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : {}) });
  await beforeServe?.();
  // Every test client is 127.0.0.1: without the per-address hold cap unless a test sets one.
  const node = await serveNode({ bookingHoldsPerDay: 0, ...serveOptions, dataDir, dev: true, clock });
  return { node, client: nodeClient(domain, node.port, node.caPem!) };
}

/** What a raw exchange answered: status, headers and the body as text. */
export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One request with node:http (or node:https with `tls`), for what fetch cannot do: set the Host
 * header, bind a local address (another loopback address as a client that is not the proxy).
 */
export function rawExchange(
  o: RequestOptions & { body?: string; tls?: Pick<HttpsRequestOptions, 'servername' | 'ca'> },
): Promise<RawAnswer> {
  const { body, tls, ...options } = o;
  return new Promise((resolve, reject) => {
    const done = (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    };
    const req = tls ? httpsRequest({ ...options, ...tls }, done) : httpRequest(options, done);
    req.on('error', reject);
    req.end(body);
  });
}

/** Close what `serveTestNode` opened (whatever of it did open) and remove the temp directory. */
export async function closeTestNode(served: { node?: ServedNode; client?: NodeClient }, tmp: { cleanup(): void }): Promise<void> {
  await served.client?.close();
  await served.node?.close();
  tmp.cleanup();
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);

/** Validate against an official VRP schema; returns ajv's errors (empty when valid). */
export function schemaErrors(name: OfficialSchemaName, doc: unknown): unknown[] {
  const id = (officialSchema(name) as { $id: string }).$id;
  const validate = ajv.getSchema(id) ?? ajv.compile(officialSchema(name));
  return validate(doc) ? [] : [...(validate.errors ?? [])];
}

/** YYYY-MM-DD `days` after the instant `from` (UTC). */
export function dayAfter(from: number, days: number): string {
  return new Date(from + days * 86_400_000).toISOString().slice(0, 10);
}

/** An iCal feed of another channel holding one all-day booking of the nights `[from, to)` (YYYY-MM-DD). */
export function blockingFeed(from: string, to: string): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//other channel//EN',
    'BEGIN:VEVENT',
    'UID:stay-1@other',
    'DTSTAMP:20260101T000000Z',
    `DTSTART;VALUE=DATE:${from.replaceAll('-', '')}`,
    `DTEND;VALUE=DATE:${to.replaceAll('-', '')}`,
    'SUMMARY:Reserved',
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}
