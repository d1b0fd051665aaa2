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
 * A request body as text with a byte cap, so an oversized body is refused before parsing:
 * undefined when it is over `maxBytes`. A declared length within the cap is read by Hono in one
 * go (on @hono/node-server straight from the socket, much cheaper than the Node→web stream
 * conversion), and its promise is handed back as it is rather than wrapped in another, so a
 * surface that awaits it resumes one turn after the body arrived; a body without a declared
 * length is streamed and cut off at the cap.
 */
export function bodyTextCapped(c: Context, maxBytes: number): Promise<string | undefined> {
  const declared = Number(c.req.header('content-length'));
  if (Number.isInteger(declared)) return declared > maxBytes ? Promise.resolve(undefined) : c.req.text();
  const body = c.req.raw.body;
  if (!body) return Promise.resolve('');
  return readStreamCapped(body, maxBytes).then((bytes) => bytes?.toString('utf8'));
}

/** `bodyTextCapped` as a result: the text, or not ok when the body is over `maxBytes`. */
export async function readBodyCapped(c: Context, maxBytes: number): Promise<{ ok: true; text: string } | { ok: false }> {
  const text = await bodyTextCapped(c, maxBytes);
  return text === undefined ? { ok: false } : { ok: true, text };
}

/** Why a JSON body was refused: over the byte cap, not JSON, or nested deeper than `MAX_JSON_DEPTH`. */
export type JsonBodyRefusal = 'body_too_large' | 'invalid_json' | 'json_too_deep';

/** A JSON request body read: its value, or why it was refused (`value` kept on a depth refusal). */
export type JsonBodyRead = { ok: true; value: unknown } | { ok: false; refusal: JsonBodyRefusal; value?: unknown };

/**
 * Read and parse a JSON request body for a surface: byte cap first, then `JSON.parse` (which is
 * not recursive in V8), then the depth bound, all before any SDK sees the value. `value` is
 * kept on a depth refusal so the caller can answer with the request's JSON-RPC id.
 */
export async function readJsonBody(c: Context, maxBytes: number): Promise<JsonBodyRead> {
  const text = await bodyTextCapped(c, maxBytes);
  if (text === undefined) return { ok: false, refusal: 'body_too_large' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, refusal: 'invalid_json' };
  }
  return nestsDeeperThan(value, MAX_JSON_DEPTH) ? { ok: false, refusal: 'json_too_deep', value } : { ok: true, value };
}

/**
 * Whether objects and arrays nest deeper than `max` in `value` (a top-level object is depth 1).
 * The walk stops at depth `max + 1`, so it recurses at most that deep whatever the input (the
 * input it guards against cannot exhaust the stack), without a work list of pairs per member.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max < 1) return true;
  if (Array.isArray(value)) return value.some((child) => nestsDeeperThan(child, max - 1));
  for (const child of Object.values(value)) if (nestsDeeperThan(child, max - 1)) return true;
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
