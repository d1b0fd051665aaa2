/**
 * `verifyReceipt` — the VRP receipt envelope v1 verifier (VRP receipt envelope v1 §3–§6, D1–D5),
 * reproducing the reference receipt verifier `lib/vrp-receipt.mjs` (VRP receipt envelope v1 §12) so that all seven
 * official vectors give their expected result byte for byte, key order included.
 *
 * It never throws for a bad artifact (and never for a resolver that throws): every outcome is
 * a result with per-attestation statuses and codes from the VRP receipt envelope v1 error registry.
 */
import { decodeJwsPayload, importEd25519PublicKey, isRecord, parseCompactJws, verifyEd25519Signature } from '@vrpkit/core';
import { RECEIPT_VERSION } from '@vrpkit/protocol';

/** VRP receipt envelope v1 §6 per-attestation statuses (D4). `unverifiable` is never `verified`. */
export type AttestationStatus = 'verified' | 'expired' | 'invalid' | 'unverifiable';

/** VRP receipt envelope v1 §6 envelope- and signature-level error registry (the codes this verifier can emit). */
export type ReceiptErrorCode =
  | 'unsupported_version'
  | 'malformed_receipt'
  | 'malformed_attestation'
  | 'missing_validity_window'
  | 'sig_invalid'
  | 'sig_expired'
  | 'not_yet_valid'
  | 'key_unresolvable'
  | 'layer_unverifiable'
  | 'canonicalization_mismatch';

/** One entry of `attestations[]` in the result; members in the vectors' `expected` order. */
export interface AttestationResult {
  index: number;
  layer: string;
  status: AttestationStatus;
  error: ReceiptErrorCode | null;
  kid: string | null;
}

/** The verification result; members in the vectors' `expected` order (the receipt vectors' expected objects). */
export interface ReceiptVerificationResult {
  receipt_valid: boolean;
  fully_verified: boolean;
  errors: ReceiptErrorCode[];
  attestations: AttestationResult[];
}

/**
 * Resolve the JWKS for one attestation from its `source` (which may be absent or anything).
 * Returns the JWKS object, or anything that is not an object (e.g. `null`) when no key set is
 * available; a rejected or thrown resolution counts as "no key set" (fail closed).
 */
export type ResolveReceiptJwks = (source: unknown, attestation: Readonly<Record<string, unknown>>) => unknown;

export interface VerifyReceiptOptions {
  resolveJwks: ResolveReceiptJwks;
  /** The verifier's clock, epoch milliseconds (injected: pure code never reads the wall clock). */
  now: number;
}

function isNonBlankString(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

function envelopeFailure(code: 'unsupported_version' | 'malformed_receipt'): ReceiptVerificationResult {
  return { receipt_valid: false, fully_verified: false, errors: [code], attestations: [] };
}

/**
 * VRP receipt envelope v1 §3 envelope check, presence-based like the reference: a strict `date-time`
 * format check here would turn receipt vector 07 into `malformed_receipt`.
 */
function isWellFormedEnvelope(receipt: Record<string, unknown>): receipt is Record<string, unknown> & { attestations: unknown[] } {
  for (const key of ['vrp_receipt_version', 'subject', 'issuer', 'attestations']) if (!(key in receipt)) return false;
  if (receipt.vrp_receipt_version !== RECEIPT_VERSION) return false;
  if (!isRecord(receipt.subject) || !isRecord(receipt.issuer)) return false;
  const { attestations } = receipt;
  if (!Array.isArray(attestations) || attestations.length === 0) return false;
  return attestations.every(
    (a) => isRecord(a) && 'layer' in a && 'valid_from' in a && 'valid_until' in a && typeof a.layer === 'string' && a.layer !== '',
  );
}

/** A window bound the reference accepts: a non-blank string `Date.parse` reads (the reference receipt verifier's rule; VRP receipt envelope v1 §6 `missing_validity_window` otherwise). */
function parseInstant(v: unknown): number | null {
  if (!isNonBlankString(v)) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * The reference `verifyCompactJws` (lib/vrp-jws.mjs) over the received bytes (D5): three
 * segments, header and payload base64url JSON objects, `alg` EdDSA, candidate keys are the
 * JWKS's OKP/Ed25519 keys — only those with the header `kid` when it has one — and one of them
 * must verify. An unknown kid is therefore a failed signature, as in the reference
 * (the reference receipt verifier, receipt vectors 01–07). A `kid` that is present but not a string fails closed.
 * Returns the header kid (trimmed) or null and the verified payload on success, `undefined` on failure.
 */
export function verifyAttestationJws(
  jws: string,
  jwks: Record<string, unknown>,
): { kid: string | null; payload: Record<string, unknown> } | undefined {
  const parsed = parseCompactJws(jws);
  if (!parsed.ok) return undefined;
  const { header, payloadSegment, signingInput, signature } = parsed.jws;
  const payloadText = decodeJwsPayload(payloadSegment);
  let payload: unknown;
  try {
    payload = payloadText === null ? undefined : JSON.parse(payloadText);
  } catch {
    return undefined;
  }
  if (!isRecord(payload) || header.alg !== 'EdDSA') return undefined;
  if (header.kid !== undefined && typeof header.kid !== 'string') return undefined;
  const kid = typeof header.kid === 'string' && header.kid.trim() !== '' ? header.kid.trim() : null;
  const keys = Array.isArray(jwks.keys) ? jwks.keys : [];
  for (const jwk of keys) {
    if (!isRecord(jwk) || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') continue;
    if (kid !== null && jwk.kid !== kid) continue;
    const key = importEd25519PublicKey(jwk);
    if (key && verifyEd25519Signature(signingInput, signature, key)) return { kid, payload };
  }
  return undefined;
}

async function resolveSafely(resolveJwks: ResolveReceiptJwks, attestation: Record<string, unknown>): Promise<unknown> {
  try {
    return await resolveJwks(attestation.source, attestation);
  } catch {
    return null;
  }
}

/** VRP receipt envelope v1 §4–§6 for one attestation: window parse, signature (D5), then freshness (D2). */
async function verifyAttestation(
  attestation: Record<string, unknown>,
  index: number,
  { resolveJwks, now }: VerifyReceiptOptions,
): Promise<AttestationResult> {
  const layer = attestation.layer as string;
  const result = (status: AttestationStatus, error: ReceiptErrorCode | null, kid: string | null): AttestationResult => ({
    index,
    layer,
    status,
    error,
    kid,
  });
  const from = parseInstant(attestation.valid_from);
  const until = parseInstant(attestation.valid_until);
  // D2: the window is mandatory; an unreadable one is never signature-checked.
  if (from === null || until === null) return result('invalid', 'missing_validity_window', null);
  // D4: present but unsigned → unverifiable (e.g. an AP2 read-only capture, D9).
  if (!isNonBlankString(attestation.signature)) return result('unverifiable', 'layer_unverifiable', null);
  const jwks = await resolveSafely(resolveJwks, attestation);
  // Not `isRecord`: the reference receipt verifier signature-checks an array key set (sig_invalid), so this does too.
  if (typeof jwks !== 'object' || jwks === null) return result('unverifiable', 'key_unresolvable', null);
  const verified = verifyAttestationJws(attestation.signature, jwks as Record<string, unknown>);
  if (!verified) return result('invalid', 'sig_invalid', null);
  // D2: freshness after the signature; both bounds inclusive (now == valid_until is verified).
  if (now < from) return result('expired', 'not_yet_valid', verified.kid);
  if (now > until) return result('expired', 'sig_expired', verified.kid);
  return result('verified', null, verified.kid);
}

/**
 * `verifyReceipt(receipt, { resolveJwks, now })` (VRP receipt envelope v1 §5).
 * Envelope failures give `receipt_valid:false` with one envelope code; otherwise every
 * attestation gets its own status, and `fully_verified` is true only if all are `verified` (D4).
 */
export async function verifyReceipt(receipt: unknown, options: VerifyReceiptOptions): Promise<ReceiptVerificationResult> {
  // As the reference receipt verifier (kept off `isRecord` for parity): any object, arrays included, whose version is not "1.0" (absent included) is unsupported.
  if (typeof receipt === 'object' && receipt !== null && (receipt as Record<string, unknown>).vrp_receipt_version !== RECEIPT_VERSION) {
    return envelopeFailure('unsupported_version');
  }
  if (!isRecord(receipt) || !isWellFormedEnvelope(receipt)) return envelopeFailure('malformed_receipt');
  const attestations: AttestationResult[] = [];
  for (const [index, attestation] of receipt.attestations.entries()) {
    attestations.push(await verifyAttestation(attestation as Record<string, unknown>, index, options));
  }
  return {
    receipt_valid: true,
    fully_verified: attestations.every((a) => a.status === 'verified'),
    errors: [],
    attestations,
  };
}
