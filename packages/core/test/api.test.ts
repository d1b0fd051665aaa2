import * as core from '@vrpkit/core';
import { describe, expect, it } from 'vitest';

describe('@vrpkit/core public entry', () => {
  it('exports exactly the chosen runtime names (a new export is a deliberate API change)', () => {
    expect(Object.keys(core).sort()).toEqual(
      [
        // RFC 8785
        'canonicalJson',
        // digests
        'canonicalSha256Base64url',
        'canonicalSha256Hex',
        'sha256',
        'sha256Base64url',
        'sha256Hex',
        // RFC 4648 §5
        'base64urlDecode',
        'base64urlEncode',
        // RFC 7515 / 8037 / 7638
        'createJwsSigner',
        'decodeJwsPayload',
        'ed25519PrivateJwkFromSeed',
        'generateEd25519Jwk',
        'importEd25519PrivateKey',
        'importEd25519PublicKey',
        'jwkThumbprint',
        'jwsPayloadJson',
        'parseCompactJws',
        'parseTlsConnectionsAsStreams',
        'publicJwkOf',
        'verifyEd25519Signature',
        // JSON objects
        'asRecord',
        'isRecord',
        // clock
        'fixedClock',
        'systemClock',
        'toUtcSecond',
        // errors
        'CanonicalizationError',
        'CORE_CODES',
        'CoreError',
        'codedErrorClass',
        'isVrpError',
        'VrpError',
        // code tables
        'CodedError',
        'formatMessage',
        // streams
        'readStreamCapped',
        // text from outside shown to a person (issue 36: one character class)
        'isDisplaySafeText',
        'UNSAFE_TEXT_CHARACTERS',
        'visibleEscapes',
        // servers: stop draining the requests in flight (issue 36 defect 2)
        'DEFAULT_SHUTDOWN_GRACE_SECONDS',
        'drainable',
        // MCP listeners: JSON-RPC batches by protocol revision (issue 36 defect 12)
        'MCP_MAX_BATCH_ITEMS',
        'mcpBatchRefusal',
      ].sort(),
    );
  });
});
