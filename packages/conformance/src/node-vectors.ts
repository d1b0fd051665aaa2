/**
 * Node-surface vectors (Node Tool Binding v0.1 §10 asks for them under examples/conformance/):
 * the reads a node check made, recorded request by request with the node's answers, and the
 * verdict expected per rule. Replaying one runs the same checker against the recorded answers,
 * offline, at the recorded instant, so another implementer can run the vectors without a live
 * node, and a checker that judges a rule differently is caught.
 *
 * Format (`kind: "vrpkit_node_conformance_vector"`, version 1; docs/conformance.md):
 * `{kind, version, name, description, domain, checked_at, arguments, surfaces, surface_urls,
 *   exchanges: [{request: {method, url, body}, response: {status, headers, body}}],
 *   expected: {"<rule>" | "<rule>@<surface>": "pass" | "fail" | "unknown"}}`.
 * Only MCP and A2A surfaces are recorded: a WebMCP read happens inside a browser, not over fetch.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FetchLike, fixedClock, isRecord } from '@vrpkit/core';
import { ConformanceError } from './errors.js';
import { checkNode, type NodeCheckOptions, type NodeConformanceReport, type ToolSurface } from './node-check.js';
import type { CheckStatus } from './verdict.js';

export const NODE_VECTOR_KIND = 'vrpkit_node_conformance_vector';

export interface RecordedExchange {
  request: { method: string; url: string; body: string | null };
  response: { status: number; headers: Record<string, string>; body: string };
}

export interface NodeVector {
  kind: typeof NODE_VECTOR_KIND;
  version: 1;
  name: string;
  description: string;
  domain: string;
  checked_at: string;
  arguments: { check_in: string; check_out: string; guests: number };
  surfaces: ('mcp' | 'a2a')[];
  surface_urls: Partial<Record<'mcp' | 'a2a', string>>;
  exchanges: RecordedExchange[];
  expected: Record<string, CheckStatus>;
}

/** Headers that describe one transfer, not the document: never recorded, never replayed. */
const TRANSFER_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

const urlOf = (input: string | URL | Request) => (typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
const methodOf = (input: string | URL | Request, init?: RequestInit) =>
  (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();

/** A fetch that records every exchange in full (for writing a vector). */
export function exchangeRecorder(inner: FetchLike): { fetch: FetchLike; exchanges(): Promise<RecordedExchange[]> } {
  const log: Promise<RecordedExchange | null>[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = { method: methodOf(input, init), url: urlOf(input), body: typeof init?.body === 'string' ? init.body : null };
    const res = await inner(input, init);
    const headers: Record<string, string> = {};
    for (const [k, v] of res.headers) if (!TRANSFER_HEADERS.has(k)) headers[k] = v;
    // An event stream that stays open is not a document: it is left out of the recording.
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) log.push(Promise.resolve(null));
    else
      log.push(
        res
          .clone()
          .text()
          .then(
            (body) => ({ request, response: { status: res.status, headers, body } }),
            () => null,
          ),
      );
    return res;
  };
  return { fetch, exchanges: async () => (await Promise.all(log)).filter((e): e is RecordedExchange => e !== null) };
}

/**
 * A fetch that answers from the recording: the first unused exchange with the same method, URL
 * and body, else the first unused one with the same method and URL, else (a request the checker
 * repeats) the last such one; anything else is a network error, as an unreachable host would be.
 */
export function replayFetch(exchanges: readonly RecordedExchange[]): FetchLike {
  const used = new Set<number>();
  return async (input, init) => {
    const method = methodOf(input, init);
    const url = urlOf(input);
    const body = typeof init?.body === 'string' ? init.body : null;
    const at = exchanges.flatMap((e, i) => (e.request.method === method && e.request.url === url ? [i] : []));
    // A JSON-RPC method the recorded node was never asked (a 2026-07-28 client's `server/discover`
    // probe to a node recorded on 2025-11-25) gets what that node answered any method it lacks:
    // -32601. Answering it with another method's recording would feed the client a wrong answer.
    const rpcMethod = jsonRpcMethod(body);
    if (rpcMethod !== undefined && at.length > 0 && !at.some((j) => jsonRpcMethod(exchanges[j]?.request.body ?? null) === rpcMethod))
      return Response.json({ jsonrpc: '2.0', id: jsonRpcId(body), error: { code: -32601, message: `Method not found: ${rpcMethod}` } });
    const same = at.filter((j) => exchanges[j]?.request.body === body);
    // A body that differs only by a fresh message id (A2A) is answered in recorded order.
    const i = same.find((j) => !used.has(j)) ?? at.find((j) => !used.has(j)) ?? same.at(-1) ?? at.at(-1);
    if (i === undefined) throw new TypeError(`fetch failed: no recorded answer for ${method} ${url}`);
    used.add(i);
    const { status, headers, body: text } = (exchanges[i] as RecordedExchange).response;
    return new Response(status === 204 || status === 304 ? null : text, { status, headers });
  };
}

/** The `method` of a JSON-RPC request body; undefined for anything else (no body, not JSON, a batch). */
function jsonRpcMethod(body: string | null): string | undefined {
  const message = parseJson(body);
  return isRecord(message) && typeof message.method === 'string' ? message.method : undefined;
}

function jsonRpcId(body: string | null): unknown {
  const message = parseJson(body);
  return isRecord(message) ? (message.id ?? null) : null;
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The verdicts of a report keyed as a vector's `expected` block. */
export function verdictsOf(report: NodeConformanceReport): Record<string, CheckStatus> {
  return Object.fromEntries(report.results.map((r) => [`${r.rule}${r.surface ? `@${r.surface}` : ''}`, r.status]));
}

/** Check a live node and record it as a vector (expected = what was observed; review before publishing). */
export async function recordNodeVector(
  domain: string,
  meta: { name: string; description: string },
  options: NodeCheckOptions & { fetch: FetchLike; surfaces: ('mcp' | 'a2a')[] },
): Promise<{ vector: NodeVector; report: NodeConformanceReport }> {
  const recorder = exchangeRecorder(options.fetch);
  const report = await checkNode(domain, { ...options, fetch: recorder.fetch });
  const surfaceUrls = (options.surfaceUrls ?? {}) as NodeVector['surface_urls'];
  return {
    report,
    vector: {
      kind: NODE_VECTOR_KIND,
      version: 1,
      ...meta,
      domain,
      checked_at: report.checked_at,
      arguments: report.arguments,
      surfaces: options.surfaces,
      surface_urls: surfaceUrls,
      exchanges: await recorder.exchanges(),
      expected: verdictsOf(report),
    },
  };
}

function asVector(doc: unknown, file: string): NodeVector {
  if (!isRecord(doc) || doc.kind !== NODE_VECTOR_KIND || doc.version !== 1 || !Array.isArray(doc.exchanges) || !isRecord(doc.expected))
    throw new ConformanceError('invalid_vector', { file, what: `a ${NODE_VECTOR_KIND} version 1` });
  return doc as unknown as NodeVector;
}

export interface NodeVectorOutcome {
  vector: string;
  name: string;
  /** True when every rule got the expected verdict and no rule was judged that the vector does not name. */
  matches: boolean;
  mismatches: { rule: string; expected: CheckStatus | null; observed: CheckStatus | null }[];
  report: NodeConformanceReport;
}

/** Replay one vector offline and compare the verdicts with its `expected` block. */
export async function replayNodeVector(vector: NodeVector, file = vector.name): Promise<NodeVectorOutcome> {
  const report = await checkNode(vector.domain, {
    fetch: replayFetch(vector.exchanges),
    clock: fixedClock(vector.checked_at),
    args: vector.arguments,
    surfaces: vector.surfaces as ToolSurface[],
    surfaceUrls: vector.surface_urls,
  });
  const observed = verdictsOf(report);
  const rules = [...new Set([...Object.keys(vector.expected), ...Object.keys(observed)])].sort();
  const mismatches = rules
    .filter((r) => vector.expected[r] !== observed[r])
    .map((rule) => ({ rule, expected: vector.expected[rule] ?? null, observed: observed[rule] ?? null }));
  return { vector: file, name: vector.name, matches: mismatches.length === 0, mismatches, report };
}

/** Replay every `*.json` vector of a directory, in name order. */
export async function replayNodeVectors(dir: string): Promise<NodeVectorOutcome[]> {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch {
    throw new ConformanceError('vectors_unreadable', { dir });
  }
  if (names.length === 0) throw new ConformanceError('vectors_empty', { dir });
  const out: NodeVectorOutcome[] = [];
  for (const n of names) {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(join(dir, n), 'utf8'));
    } catch {
      throw new ConformanceError('invalid_vector', { file: n, what: 'JSON' });
    }
    out.push(await replayNodeVector(asVector(doc, n), n));
  }
  return out;
}
