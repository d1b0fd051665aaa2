/**
 * Read a byte stream to the end, or stop as soon as it exceeds `maxBytes`: an endless or
 * oversized body is cut off at the cap instead of being buffered. Pure stream handling; what a
 * refusal means (an error, a 413) is the caller's.
 */
export async function readStreamCapped(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Buffer<ArrayBuffer> | null> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // The verdict (too large) is already reached; a failing cancel cannot change it.
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
