import { readStreamCapped } from '@vrpkit/core';
import type { Context } from 'hono';

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
