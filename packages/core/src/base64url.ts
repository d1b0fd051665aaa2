/** base64url without padding (RFC 4648 §5), as JWS uses it (RFC 7515 §2). */
export function base64urlEncode(data: Uint8Array | string): string {
  return (typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)).toString(
    'base64url',
  );
}

const B64URL = /^[A-Za-z0-9_-]*$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Whether `text` is strict, canonical unpadded base64url (RFC 4648 §5, §3.5): only url-safe
 * characters, no impossible length, and no non-zero pad bits in the last character (which a
 * lenient decoder would silently drop, giving two encodings of the same bytes). Checked without
 * decoding, so a verifier can reject a malformed segment before it spends anything on it.
 */
export function isCanonicalBase64url(text: string): boolean {
  const rem = text.length % 4;
  if (rem === 1 || !B64URL.test(text)) return false;
  if (rem === 0) return true;
  const last = ALPHABET.indexOf(text[text.length - 1] as string);
  // 2 chars carry 8 bits (4 pad bits), 3 chars carry 16 bits (2 pad bits).
  return (last & (rem === 2 ? 0b1111 : 0b11)) === 0;
}

/**
 * Strict base64url decode: rejects characters outside the url-safe alphabet and
 * non-canonical encodings (Node's decoder alone would silently skip bad characters).
 * Returns `null` instead of throwing so verifiers can map it to their own codes.
 */
export function base64urlDecode(text: string): Uint8Array | null {
  if (!isCanonicalBase64url(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
