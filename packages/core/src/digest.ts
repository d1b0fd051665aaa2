import { createHash, hash } from 'node:crypto';
import { canonicalJson } from './canonical.js';

/** SHA-256 of bytes (a string is taken as its UTF-8 bytes). */
export function sha256(data: Uint8Array | string): Uint8Array {
  const d = createHash('sha256').update(data).digest();
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

// The one-shot crypto.hash (Node ≥ 20.12) costs about a third of a createHash object for the
// short inputs hashed per act (audit entries, ids, digests of arguments).

/** Lowercase hex SHA-256. */
export function sha256Hex(data: Uint8Array | string): string {
  return hash('sha256', data, 'hex');
}

/** base64url (unpadded) SHA-256. */
export function sha256Base64url(data: Uint8Array | string): string {
  return hash('sha256', data, 'base64url');
}

/** SHA-256 over the RFC 8785 canonical JSON of `value`, lowercase hex. */
export function canonicalSha256Hex(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** SHA-256 over the RFC 8785 canonical JSON of `value`, base64url. */
export function canonicalSha256Base64url(value: unknown): string {
  return sha256Base64url(canonicalJson(value));
}
