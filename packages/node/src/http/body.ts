import { isRecord, readStreamCapped } from '@vrpkit/core';
import type { Context } from 'hono';
import { nodeMessage } from '../errors.js';

/**
 * Deepest nesting of objects and arrays a JSON request body may have. A tool call is a
 * JSON-RPC envelope around three flat arguments (the A2A envelope puts them five levels down);
 * the SDKs behind the surfaces walk a body recursively, so a body nested thousands deep would
 * exhaust their stack. Anything near this limit is not a tool call.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Read a request body as text with a byte cap, so an oversized body is refused before parsing.
 * A declared length within the cap is read by Hono in one go (on @hono/node-server straight
 * from the socket, much cheaper than the Node→web stream conversion); a body without a declared
 * length is streamed and cut off at the cap.
 */
export async function readBodyCapped(c: Context, maxBytes: number): Promise<{ ok: true; text: string } | { ok: false }> {
  const declared = Number(c.req.header('content-length'));
  if (Number.isInteger(declared)) return declared > maxBytes ? { ok: false } : { ok: true, text: await c.req.text() };
  const body = c.req.raw.body;
  if (!body) return { ok: true, text: '' };
  const bytes = await readStreamCapped(body, maxBytes);
  return bytes ? { ok: true, text: bytes.toString('utf8') } : { ok: false };
}

/** Why a JSON body was refused: over the byte cap, not JSON, or nested deeper than `MAX_JSON_DEPTH`. */
export type JsonBodyRefusal = 'body_too_large' | 'invalid_json' | 'json_too_deep';

/**
 * Read and parse a JSON request body for a surface: byte cap first, then `JSON.parse` (which is
 * not recursive in V8), then the depth bound, all before any SDK sees the value. `value` is
 * kept on a depth refusal so the caller can answer with the request's JSON-RPC id.
 */
export async function readJsonBody(
  c: Context,
  maxBytes: number,
): Promise<{ ok: true; value: unknown } | { ok: false; refusal: JsonBodyRefusal; value?: unknown }> {
  const read = await readBodyCapped(c, maxBytes);
  if (!read.ok) return { ok: false, refusal: 'body_too_large' };
  let value: unknown;
  try {
    value = JSON.parse(read.text);
  } catch {
    return { ok: false, refusal: 'invalid_json' };
  }
  return nestsDeeperThan(value, MAX_JSON_DEPTH) ? { ok: false, refusal: 'json_too_deep', value } : { ok: true, value };
}

/** Whether objects and arrays nest deeper than `max` in `value` (a top-level object is depth 1). Iterative: recursion would fail on the very input it guards against. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}

/** A JSON-RPC 2.0 error response (§5.1) as a surface answers it before or instead of its SDK. */
export function jsonRpcErrorResponse(
  id: unknown,
  error: { code: number; message: string; data?: unknown },
  status = 200,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/**
 * The JSON-RPC answer to a body nested deeper than `MAX_JSON_DEPTH`: invalid params (JSON-RPC 2.0
 * §5.1, -32602) with the stable code `json_too_deep`, under the request's id when it has one.
 */
export function jsonTooDeepResponse(request: unknown, status: number): Response {
  const id = isRecord(request) ? request.id : null;
  return jsonRpcErrorResponse(
    id,
    {
      code: -32602,
      message: nodeMessage('json_too_deep', { max: MAX_JSON_DEPTH }),
      data: { code: 'json_too_deep', max_depth: MAX_JSON_DEPTH },
    },
    status,
  );
}
