/** base64url without padding (RFC 4648 §5), as JWS uses it (RFC 7515 §2). */
export function base64urlEncode(data: Uint8Array | string): string {
  return (typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)).toString(
    'base64url',
  );
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Strict base64url decode: only the url-safe alphabet, no padding, no impossible length, and
 * no non-zero pad bits in the last character (which a lenient decoder would silently drop,
 * giving two encodings of the same bytes: RFC 4648 §3.5). Returns `null` instead of throwing
 * so verifiers can map it to their own codes.
 *
 * Checked around Node's decoder rather than with a pattern over every character (a JWS payload
 * is kilobytes, and the decode is needed anyway): the decoder skips any character outside its
 * alphabet and stops at `=`, so either leaves fewer bytes than the length promises; the only
 * characters it takes that base64url does not are the standard alphabet's `+` and `/`.
 */
export function base64urlDecode(text: string): Buffer | null {
  const rem = text.length % 4;
  if (rem === 1) return null;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.byteLength !== Math.floor((text.length * 3) / 4) || text.includes('+') || text.includes('/')) return null;
  // 2 trailing chars carry 8 bits (4 pad bits), 3 carry 16 bits (2 pad bits).
  if (rem !== 0 && (ALPHABET.indexOf(text[text.length - 1] as string) & (rem === 2 ? 0b1111 : 0b11)) !== 0) return null;
  // The decoder's own Buffer (a Uint8Array): no second view object, and callers can read it as text without a copy.
  return bytes;
}
