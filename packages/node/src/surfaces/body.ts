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
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return { ok: false };
    }
    chunks.push(value);
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
}
