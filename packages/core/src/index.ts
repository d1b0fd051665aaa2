/**
 * @vrpkit/core: the primitives every vrpkit package builds on. No VRP knowledge and no I/O:
 * time and network arrive as parameters. Each group below is one public specification (or one
 * vrpkit convention) and one module; `README.md` says what each group proves and what it does not.
 */

// RFC 4648 §5: base64url without padding, strict decoding.
export { base64urlDecode, base64urlEncode } from './base64url.js';
// RFC 8785: JSON Canonicalization Scheme (JCS).
export { canonicalJson } from './canonical.js';
// Time (RFC 3339 instants) and network injection.
export type { Clock, FetchLike } from './clock.js';
export { fixedClock, systemClock, toUtcSecond } from './clock.js';
// Errors: stable codes, never messages, are the contract.
export type { CoreCode } from './codes.js';
export { CanonicalizationError, CORE_CODES, CoreError } from './codes.js';
// Digests: SHA-256 (FIPS 180-4) of bytes, and of RFC 8785 canonical JSON.
export { canonicalSha256Base64url, canonicalSha256Hex, sha256, sha256Base64url, sha256Hex } from './digest.js';
// Stopping a listener: drain the requests in flight (issue 36 defect 2).
export { DEFAULT_SHUTDOWN_GRACE_SECONDS, type Drain, type DrainableServer, drainable } from './drain.js';
// A package's code table: each code's message template and, where one applies, its HTTP or exit status.
export type { CodeArgs, CodeEntry, CodeTable, MessageParams, RaiseOptions } from './error-codes.js';
export { CodedError, codedErrorClass, formatMessage } from './error-codes.js';
export { isVrpError, VrpError } from './errors.js';
// RFC 7515 §7.1 compact JWS, RFC 8037 Ed25519 (EdDSA) keys and signatures, RFC 7638 thumbprints.
export type {
  CompactJwsLayout,
  Ed25519PrivateJwk,
  Ed25519PublicJwk,
  JwsProtectedHeader,
  JwsSigner,
  ParseCompactJwsResult,
  ParsedCompactJws,
} from './jws.js';
export {
  createJwsSigner,
  decodeJwsPayload,
  ed25519PrivateJwkFromSeed,
  generateEd25519Jwk,
  importEd25519PrivateKey,
  importEd25519PublicKey,
  jwkThumbprint,
  jwsPayloadJson,
  parseCompactJws,
  publicJwkOf,
  verifyEd25519Signature,
} from './jws.js';
// MCP: JSON-RPC batches refused from revision 2025-06-18 on, capped before it.
export { MCP_MAX_BATCH_ITEMS, mcpBatchRefusal } from './mcp-batch.js';
// RFC 8259 §4: reading untrusted JSON objects member by member.
export { asRecord, isRecord } from './record.js';
// Streams: byte-capped reading of a body.
export { readStreamCapped } from './stream.js';
// Text from outside shown to a person: one character class, refused or shown as visible escapes.
export { isDisplaySafeText, UNSAFE_TEXT_CHARACTERS, visibleEscapes } from './text.js';
// Serving a TLS listener: a request that arrives before the previous answer drained keeps its connection (issue 32).
export { parseTlsConnectionsAsStreams } from './tls-parse.js';
