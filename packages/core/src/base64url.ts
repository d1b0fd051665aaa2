/** base64url without padding (RFC 4648 §5), as JWS uses it (RFC 7515 §2). */
export function base64urlEncode(data: Uint8Array | string): string {
  return (typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)).toString(
    'base64url',
  );
}

const B64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Strict base64url decode: rejects characters outside the url-safe alphabet and
 * non-canonical encodings (Node's decoder alone would silently skip bad characters).
 * Returns `null` instead of throwing so verifiers can map it to their own codes.
 */
export function base64urlDecode(text: string): Uint8Array | null {
  if (!B64URL.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
