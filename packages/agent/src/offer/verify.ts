/**
 * `verifyOffer`: is this signed verified stay offer the host's, unaltered and fresh?
 * (Core VRP v0.1 §3, §5, §6; the statuses feed the three-state facts of Core VRP v0.1 §9.)
 *
 * Statuses and codes are exactly the reference verifier's (`@vacationrentalprotocol/vrp-verify`):
 * a verifier that speaks the same vocabulary can be swapped in or diffed against. The hot path
 * stays small: one header parse, one cached KeyObject lookup, one synchronous `crypto.verify`
 * over the received bytes, one payload parse and a structural comparison (none of the two when
 * fetch.ts parsed the envelope itself from a text whose offer is the signed text). It never throws
 * for a bad artifact.
 */
import type { KeyObject } from 'node:crypto';
import { importEd25519PublicKey, isRecord, type ParseCompactJwsResult, parseCompactJws, verifyEd25519Signature } from '@vrpkit/core';
import { dateTimeMs } from '@vrpkit/protocol';
import type { SignatureMemo } from './signature-memo.js';
import { type MemberText, memberText, rememberSignedText } from './signed-text.js';

/** vrp-verify `OfferStatus`. Only `verified` may ever lead to quoting. */
export type OfferStatus = 'verified' | 'expired' | 'invalid' | 'unverifiable';

/** vrp-verify `ReasonCode`: seven JWS-level codes (conformance engine §3.1) and three offer-level ones. */
export type OfferReasonCode =
  | 'malformed_jws'
  | 'malformed_header'
  | 'unexpected_alg'
  | 'kid_not_in_jwks'
  | 'unsupported_key'
  | 'signature_mismatch'
  | 'malformed_payload'
  | 'no_jws'
  | 'payload_offer_mismatch'
  | 'valid_until_unusable';

export interface OfferVerificationResult {
  status: OfferStatus;
  /** A reason code, or null when the signature verified (status `verified` or `expired`). */
  code: OfferReasonCode | null;
  /** Short human explanation (not stable; match on `code`). */
  reason: string;
  /** `valid_until > now` (strict); null unless the signature verified and `valid_until` was usable. */
  fresh: boolean | null;
  header: Record<string, unknown> | null;
  /** The decoded signed payload: the only authoritative copy of the offer. */
  payload: Record<string, unknown> | null;
  /** Whether `envelope.offer` equals the signed payload; null when there was nothing to compare. */
  payloadMatchesOffer: boolean | null;
}

export interface VerifyOfferParams {
  /** A `signed_verified_stay_offer` envelope (Core VRP v0.1 §5). */
  envelope?: unknown;
  /** A bare compact JWS; takes precedence over `envelope.signature.jws`, like the reference. */
  jws?: unknown;
  /** The host-domain JWKS document. A null or shapeless document counts as no keys. */
  jwks: unknown;
  /** Evaluation instant: epoch milliseconds, a Date or an RFC 3339 string. Injected, never read from the system. */
  now: number | Date | string;
}

const HUMAN: Record<OfferReasonCode, string> = {
  malformed_jws: 'the compact JWS is not a well-formed header.payload.signature',
  malformed_header: 'the JWS protected header is not a base64url JSON object',
  unexpected_alg: 'the JWS declares an algorithm other than EdDSA (downgrade)',
  kid_not_in_jwks: 'the header kid is not present in the JWKS document',
  unsupported_key: 'the resolved key is not an Ed25519 OKP key',
  signature_mismatch: 'the signature does not verify against the resolved key',
  malformed_payload: 'the signed payload is not a JSON object',
  no_jws: 'no compact JWS was found on the envelope',
  payload_offer_mismatch: 'the unsigned envelope does not match what was signed',
  valid_until_unusable: 'valid_until is missing or malformed, so freshness cannot be determined',
};

/**
 * KeyObjects are imported once per JWK `x` (the raw public key): re-importing on every call
 * would cost more than the signature check itself. `null` caches "not an Ed25519 key".
 * Bounded so an attacker streaming fresh keys cannot grow it without limit.
 */
const keyByX = new Map<string, KeyObject | null>();
const KEY_CACHE_LIMIT = 1024;

function keyFor(jwk: Record<string, unknown>): KeyObject | null {
  // Conformance engine step 5: kty/crv other than OKP/Ed25519 → unsupported_key.
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') return null;
  let key = keyByX.get(jwk.x);
  if (key === undefined) {
    key = importEd25519PublicKey(jwk);
    if (keyByX.size >= KEY_CACHE_LIMIT) keyByX.clear();
    keyByX.set(jwk.x, key);
  }
  return key;
}

/** The first JWK object in `jwks.keys` whose `kid` is `kid`; a null or shapeless document has none. */
function jwkByKid(jwks: unknown, kid: string): Record<string, unknown> | undefined {
  const keys = isRecord(jwks) ? jwks.keys : undefined;
  if (!Array.isArray(keys)) return undefined;
  for (const k of keys) if (isRecord(k) && k.kid === kid) return k;
  return undefined;
}

function result(
  status: OfferStatus,
  code: OfferReasonCode | null,
  fresh: boolean | null,
  header: Record<string, unknown> | null,
  payload: Record<string, unknown> | null,
  payloadMatchesOffer: boolean | null,
  detail?: string,
): OfferVerificationResult {
  const reason =
    code === null ? (fresh ? 'signature valid and offer fresh' : 'signature valid but offer expired') : (detail ?? HUMAN[code]);
  return { status, code, reason, fresh, header, payload, payloadMatchesOffer };
}

/** Epoch ms of an instant, or NaN. */
function instant(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v instanceof Date) return v.getTime();
  return typeof v === 'string' ? Date.parse(v) : Number.NaN;
}

const JSON_EQUAL_MAX_DEPTH = 64;

/**
 * Structural JSON equality ignoring object key order, like vrp-verify's sorted-key comparison
 * (Core VRP v0.1 §7 condition 6). Numbers compare by value, so `-0` equals `0` as JSON numbers do.
 */
export function jsonEqual(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  // A signed offer is a few levels deep; past this bound the comparison is refused (not equal),
  // so a hostile, validly signed but absurdly nested payload cannot overflow the stack and throw.
  if (depth >= JSON_EQUAL_MAX_DEPTH) return false;
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const bs = b as unknown[];
    if (a.length !== bs.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], bs[i], depth + 1)) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    // Same member at the same position (the usual case: one serialiser wrote both) is already
    // an own member of `b`; only a reordered member needs the lookup.
    if (k !== kb[i] && !Object.hasOwn(b, k)) return false;
    if (!jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], depth + 1)) return false;
  }
  return true;
}

/**
 * Verify a signed verified stay offer against the host-domain JWKS (Core VRP v0.1 §9: what
 * this proves is the `signature` and `offer_freshness` facts; every stay fact stays unknown
 * unless the status is `verified`).
 *
 * Checks, in the reference order, each failure answered with the reference's status and code:
 * 1. a compact JWS is present (`envelope.signature.jws`, or `jws`) — `invalid` / `no_jws`;
 * 2. it is three strict, canonical base64url segments with a JSON-object header — `malformed_jws`, `malformed_header`;
 * 3. `alg` is `EdDSA` (Core VRP v0.1 §3; anything else is a downgrade) — `unexpected_alg`;
 * 4. the header `kid` (a non-empty string, never "try every key") names a key in `jwks` — `unverifiable` / `kid_not_in_jwks`;
 * 5. that key is Ed25519 — `unverifiable` / `unsupported_key`;
 * 6. Ed25519 verifies over the received `header.payload` bytes — `invalid` / `signature_mismatch`;
 * 7. the signed payload is a JSON object — `malformed_payload`;
 * 8. with an envelope: `signature.alg` is `EdDSA`, `signature.kid` equals the header kid, and
 *    `envelope.offer` equals the signed payload (Core VRP v0.1 §7 condition 6) — `unexpected_alg`, `payload_offer_mismatch`;
 * 9. `valid_until` is an RFC 3339 UTC instant — `unverifiable` / `valid_until_unusable`;
 *    then `verified` when `valid_until > now` strictly (Core VRP v0.1 §6), else `expired`.
 *
 * Left to `quote.ts` (safe to quote, Core VRP v0.1 §7 conditions 8–11 and §5.1): availability, price
 * exactness, the booking URL, the quote permission, and whether the signed `request` and
 * `canonical_domain` are the stay and node asked. Left to the caller (`fetch.ts`): that the
 * JWKS is the one the host domain's own discovery document names (Core VRP v0.1 §7 conditions 1–3).
 *
 * Tightenings over vrp-verify (each still answers with a code from the same vocabulary; see
 * README "Stricter than the reference"): strict base64url, a header that is an object, a
 * required header kid, the envelope's unsigned signature metadata agreeing with the header,
 * a payload that is an object, and an RFC 3339 `valid_until`.
 */
export function verifyOffer(params: VerifyOfferParams): OfferVerificationResult {
  return verifyReadOffer(readOffer(params), params.jwks, params.now);
}

/** An offer's compact JWS found and parsed (steps 1–2), before any key is chosen. Internal to the package. */
export interface ReadOffer {
  env: Record<string, unknown> | null;
  /** The envelope's unsigned `signature` object, when it has one. */
  signature: Record<string, unknown> | null;
  /** The parse of the compact JWS, or null when there was none (`no_jws`). */
  parsed: ParseCompactJwsResult | null;
  /**
   * The exact text `env.offer` was parsed from, when the envelope is the caller's own (see
   * `readOffer`) and that value nests within `jsonEqual`'s bound; else undefined.
   */
  offerText: MemberText | undefined;
}

/**
 * Steps 1–2 of `verifyOffer`: find the compact JWS and parse it once. A caller that needs the
 * header `kid` to choose a key set (fetch.ts, through the JWKS cache) reads it from here and
 * hands the same parse to `verifyReadOffer`.
 *
 * `envelopeText` is the JSON text `envelope` was parsed from, given only by a caller that parsed
 * it and shares the envelope with no one (fetch.ts, the offer it GETs itself): when the signed
 * payload's text is exactly the text of `envelope.offer`, that object is the signed payload as
 * `JSON.parse` would give it, and step 7 uses it instead of parsing the same text again.
 */
export function readOffer(params: Pick<VerifyOfferParams, 'envelope' | 'jws'>, envelopeText?: string): ReadOffer {
  const { envelope, jws } = params;
  const env = isRecord(envelope) ? envelope : null;
  const signature = env && isRecord(env.signature) ? env.signature : null;
  const compact = typeof jws === 'string' ? jws : signature?.jws;
  // Conformance engine steps 1–2.
  const parsed = typeof compact === 'string' && compact.length > 0 ? parseCompactJws(compact) : null;
  // Past jsonEqual's bound the comparison refuses equal texts too: such an offer is left to it.
  const offerText = env && envelopeText !== undefined ? memberText(envelopeText, 'offer', JSON_EQUAL_MAX_DEPTH) : undefined;
  return { env, signature, parsed, offerText };
}

/** The protected header's `kid` of a read offer, when it parsed and has a string one. */
export function readOfferKid(read: ReadOffer): string | undefined {
  const kid = read.parsed?.ok ? read.parsed.jws.header.kid : undefined;
  return typeof kid === 'string' ? kid : undefined;
}

/**
 * Step 8 of `verifyOffer`: the envelope beside the signed payload. Its signature metadata is unsigned:
 * when present it must agree with the signed header (a bare `jws` passed beside an envelope
 * without one has none); its `offer` must equal the signed payload (Core VRP v0.1 §7 condition 6).
 * The failure's result, else whether `offer` matched (null: the envelope carries none).
 */
function envelopeAgrees(
  env: Record<string, unknown>,
  signature: Record<string, unknown> | null,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  offerIsPayload: boolean,
): OfferVerificationResult | boolean | null {
  if ('signature' in env) {
    if (signature?.alg !== 'EdDSA')
      return result('invalid', 'unexpected_alg', null, header, payload, null, 'the envelope signature.alg is not EdDSA');
    if (signature.kid !== header.kid) {
      const detail = 'the envelope signature.kid does not match the protected header kid';
      return result('invalid', 'payload_offer_mismatch', null, header, payload, null, detail);
    }
  }
  if (!('offer' in env)) return null;
  const matches = offerIsPayload || jsonEqual(env.offer, payload);
  return matches ? true : result('invalid', 'payload_offer_mismatch', null, header, payload, false);
}

/**
 * Steps 3–9 of `verifyOffer` on what `readOffer` found. With `memo` (the JWKS cache's), step 6's
 * Ed25519 computation is skipped for bytes that already verified under the same key (by RFC 7638
 * thumbprint, never by kid); every other step runs as always.
 */
export function verifyReadOffer(
  read: ReadOffer,
  jwks: unknown,
  now: VerifyOfferParams['now'],
  memo?: SignatureMemo,
): OfferVerificationResult {
  const { env, parsed } = read;
  if (parsed === null) return result('invalid', 'no_jws', null, null, null, null);
  if (!parsed.ok) return result('invalid', parsed.code, null, null, null, null);
  const { header, signingInput, signature: sigBytes, payload: payloadBytes } = parsed.jws;

  // Step 3: EdDSA only (Core VRP v0.1 §3; `none`, HS256-with-the-public-key and every other alg are downgrades).
  if (header.alg !== 'EdDSA') return result('invalid', 'unexpected_alg', null, header, null, null);

  // Step 4: the key is chosen by the protected header's kid, never by the envelope (Core VRP v0.1 §3).
  const kid = header.kid;
  const jwk = typeof kid === 'string' && kid.length > 0 ? jwkByKid(jwks, kid) : undefined;
  // "Absence of a key is not proof of forgery": a missing key is unverifiable, not invalid.
  if (!jwk) return result('unverifiable', 'kid_not_in_jwks', null, header, null, null);

  // Step 5.
  const key = keyFor(jwk);
  if (!key) return result('unverifiable', 'unsupported_key', null, header, null, null);

  // Step 6: Ed25519 over the exact received `header.payload` bytes (VRP receipt envelope v1, D5: no re-serialisation).
  const memoKey = memo?.keyFor(jwk, signingInput, sigBytes);
  if (memoKey === undefined || !memo?.has(memoKey)) {
    if (!verifyEd25519Signature(signingInput, sigBytes, key)) return result('invalid', 'signature_mismatch', null, header, null, null);
    if (memoKey !== undefined) memo?.remember(memoKey);
  }

  // Step 7: read the payload only after the signature checked out (`parseCompactJws` decoded it
  // while proving the segment strict, canonical base64url).
  const payloadText = payloadBytes.toString('utf8');
  // Core VRP v0.1 §7 condition 6 shown by the text itself: the caller's own `env.offer` was parsed
  // from exactly the signed text, so it is what parsing that text gives, and equal to it.
  const offerIsPayload = read.offerText?.text === payloadText;
  let payload: unknown;
  if (offerIsPayload) payload = env?.offer;
  else {
    try {
      payload = JSON.parse(payloadText);
    } catch {
      return result('invalid', 'malformed_payload', null, header, null, null);
    }
  }
  if (!isRecord(payload)) return result('invalid', 'malformed_payload', null, header, null, null);
  // The parse rounds numbers; quote.ts reads the signed totals' own text (signed-text.ts), which
  // only a number other than a plain non-negative integer literal makes worth keeping.
  if (!(offerIsPayload && read.offerText?.plainNumbers)) rememberSignedText(payload, payloadText);

  // Step 8.
  const payloadMatchesOffer = env ? envelopeAgrees(env, read.signature, header, payload, offerIsPayload) : null;
  if (typeof payloadMatchesOffer === 'object' && payloadMatchesOffer !== null) return payloadMatchesOffer;

  // Core VRP v0.1 §6: freshness is `valid_until > now`, strictly (equality is stale).
  // The offer schema's `dateTime` (RFC 3339 UTC): stricter than the reference's `Date.parse`, which also takes "2026-06-02".
  const validUntil = dateTimeMs(payload.valid_until);
  const nowMs = instant(now);
  if (!Number.isFinite(validUntil) || !Number.isFinite(nowMs)) {
    return result('unverifiable', 'valid_until_unusable', null, header, payload, payloadMatchesOffer);
  }
  const fresh = validUntil > nowMs;
  return result(fresh ? 'verified' : 'expired', null, fresh, header, payload, payloadMatchesOffer);
}
