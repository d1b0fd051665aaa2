/**
 * `verifyMcpReceipt` — vrpkit's verdict on a receipt of the MCP composition profile (an `offer`
 * and a `transport` attestation), decided by what the node signed.
 *
 * The reference algorithm (`verifyReceipt`, VRP receipt envelope v1 §5) reads members nobody signed: each
 * attestation's `valid_from`/`valid_until`, `ref`, `source`, the receipt's `subject` and
 * `issuer`. Its result is kept beside this one, for parity, and it can only ever take a pass
 * away: a layer is verified here only when the reference verified it AND the signed content
 * holds. The signed content decides:
 * - keys: the signing domain is the `canonical_domain` the offer JWS signs, and its keys come
 *   from that domain's own discovery (`resolveSignerJwks`), never from `source` or `issuer`;
 * - layers: exactly one `offer` and one `transport` attestation; any other layer is not part of
 *   the profile and leaves the receipt unverifiable;
 * - windows: the offer layer lives `generated_at`..`valid_until` of the signed offer, the
 *   transport layer `served_at`..`served_at` + that offer's lifetime (the node's rule,
 *   docs/receipts.md), both bounds inclusive as in VRP receipt envelope v1;
 * - labels: `issuer.node`, the assertion's `issuer`, `subject`, both `ref`s and the assertion's
 *   `offer_ref` must all be what the signed offer implies, and the signed `served_at` must fall
 *   within the signed offer's life;
 * - one call: the assertion's `arguments_sha256` must be the digest of the arguments the signed
 *   offer's `request` echoes, so an offer layer and a transport layer of two calls do not pass.
 * Never throws for a bad artifact.
 */
import { isRecord, jwsPayloadJson, parseCompactJws } from '@vrpkit/core';
import {
  dateTimeMs,
  hashArguments,
  MCP_TRANSPORT_LAYER,
  type McpTransportAssertion,
  OFFER_LAYER,
  offerRef,
  readMcpTransportAssertion,
} from '@vrpkit/protocol';
import { normalizeHost } from '../canonical-domain.js';
import { jwsHeaderKid } from '../jwks-cache.js';
import {
  type AttestationStatus,
  type ReceiptErrorCode,
  type ReceiptVerificationResult,
  type ResolveReceiptJwks,
  verifyAttestationJws,
  verifyReceipt,
} from './verify.js';

/** The key set `domain` publishes at the `jwks_url` its own discovery document names; anything not an object means none. */
export type ResolveSignerJwks = (domain: string, kid: string | undefined) => unknown;

/**
 * Codes of vrpkit's verdict: the VRP receipt envelope v1 registry, plus vrpkit's own for a layer that is
 * missing or repeated and for unsigned labels that disagree with the signed payloads.
 */
export type McpReceiptCode =
  | ReceiptErrorCode
  | 'layer_missing' // no attestation for a layer the profile requires
  | 'duplicate_layer' // more than one attestation for a layer: which one binds is ambiguous
  | 'issuer_mismatch' // issuer.node or the assertion's issuer is not the domain that signed the offer
  | 'subject_mismatch' // subject is not the signed offer's property and stay
  | 'offer_ref_mismatch' // a ref or the assertion's offer_ref is not the signed offer's
  | 'served_at_mismatch' // the signed served_at is not within the signed offer's generated_at..valid_until
  | 'arguments_mismatch'; // the assertion's arguments_sha256 is not the digest of the request the offer layer signs (two calls' layers)

export interface McpReceiptLayer {
  status: AttestationStatus;
  /** Null only when `verified`. */
  code: McpReceiptCode | null;
  /** Index in `attestations[]`, null when the layer is missing. */
  index: number | null;
  kid: string | null;
}

export interface McpReceiptVerification {
  /** vrpkit's verdict: the worst of both layers, the label checks and any layer outside the profile. */
  status: AttestationStatus;
  verified: boolean;
  offer: McpReceiptLayer;
  transport: McpReceiptLayer;
  /** Receipt-level findings (label checks, layers outside the profile); empty when there are none. */
  errors: McpReceiptCode[];
  /** The domain whose key signed the offer (its signed `canonical_domain`), once that signature verified. */
  signer: string | null;
  /** The signed offer and the transport assertion, each once its signature verified against the signer's keys (whatever its window). */
  signed_offer: Record<string, unknown> | null;
  assertion: McpTransportAssertion | null;
  /** The reference algorithm's result, untouched (reference receipt verifier parity; it reads unsigned members). */
  reference: ReceiptVerificationResult;
}

export interface VerifyMcpReceiptOptions {
  /** Resolves an attestation's `source` for the reference algorithm. */
  resolveJwks: ResolveReceiptJwks;
  /** Resolves the signing domain's own keys for vrpkit's verdict. */
  resolveSignerJwks: ResolveSignerJwks;
  /** Epoch milliseconds. */
  now: number;
}

type Json = Record<string, unknown>;

/** The JSON payload of a compact JWS, unverified (only to learn whose keys to ask for). */
export function unverifiedJwsPayload(jws: unknown): unknown {
  const parsed = parseCompactJws(jws);
  return parsed.ok ? jwsPayloadJson(parsed.jws) : undefined;
}

type Located = { index: number; attestation: Json } | { missing: 'layer_missing' | 'duplicate_layer' };

/** The one attestation of `layer`, or why there is not exactly one. */
export function locateLayer(receipt: unknown, layer: string): Located {
  const all = isRecord(receipt) && Array.isArray(receipt.attestations) ? receipt.attestations : [];
  const hits = all.flatMap((a, index) => (isRecord(a) && a.layer === layer ? [{ index, attestation: a }] : []));
  if (hits.length === 0) return { missing: 'layer_missing' };
  if (hits.length > 1) return { missing: 'duplicate_layer' };
  return hits[0]!;
}

const RANK: Record<AttestationStatus, number> = { verified: 0, unverifiable: 1, expired: 2, invalid: 3 };
const worst = (statuses: AttestationStatus[]): AttestationStatus =>
  statuses.reduce<AttestationStatus>((a, b) => (RANK[b] > RANK[a] ? b : a), 'verified');

/** The worse of two verdicts on one layer; on a tie, the first. */
const worse = (a: McpReceiptLayer, b: McpReceiptLayer): McpReceiptLayer => (RANK[b.status] > RANK[a.status] ? b : a);

const layer = (status: AttestationStatus, code: McpReceiptCode | null, index: number | null, kid: string | null): McpReceiptLayer => ({
  status,
  code,
  index,
  kid,
});

async function resolveSafely(resolve: ResolveSignerJwks, domain: string, kid: string | undefined): Promise<unknown> {
  try {
    return await resolve(domain, kid);
  } catch {
    return null;
  }
}

/** The signed offer's window, or null when it carries no usable one (VRP receipt envelope v1, D2: the window is mandatory). */
function offerWindow(offer: Json): { from: number; until: number } | null {
  const from = dateTimeMs(offer.generated_at);
  const until = dateTimeMs(offer.valid_until);
  return Number.isFinite(from) && Number.isFinite(until) && until > from ? { from, until } : null;
}

function windowStatus(now: number, from: number, until: number, index: number, kid: string | null): McpReceiptLayer {
  if (now < from) return layer('expired', 'not_yet_valid', index, kid);
  if (now > until) return layer('expired', 'sig_expired', index, kid);
  return layer('verified', null, index, kid);
}

/** The members a node echoes from the call's arguments into the signed `request` (Core VRP v0.1 §4, §5). */
export const ECHOED_ARGUMENTS = ['check_in', 'check_out', 'guests', 'language'] as const;

/**
 * The digest of the call a signed `request` answers: its echoed members (`ECHOED_ARGUMENTS`, the
 * derived `nights` and weekdays left out) hashed as the profile hashes a call's arguments.
 */
function requestArgumentsDigest(request: Json): string {
  return hashArguments(Object.fromEntries(ECHOED_ARGUMENTS.filter((k) => Object.hasOwn(request, k)).map((k) => [k, request[k]])));
}

/** The offer a vrpkit node signs in the offer layer: a VRP offer with its domain, window and request (and that request's call digest). */
function readSignedOffer(
  payload: Json,
  signer: string,
): { window: { from: number; until: number }; ref: string; stay: string; argumentsSha256: string } | null {
  const request = isRecord(payload.request) ? payload.request : {};
  const window = offerWindow(payload);
  if (payload.kind !== 'verified_stay_offer' || payload.canonical_domain !== signer || !window) return null;
  if (typeof request.check_in !== 'string' || typeof request.check_out !== 'string') return null;
  try {
    return {
      window,
      ref: offerRef(signer, request.check_in, request.check_out),
      stay: `${request.check_in}/${request.check_out}`,
      argumentsSha256: requestArgumentsDigest(request),
    };
  } catch {
    return null;
  }
}

type SignedOffer = NonNullable<ReturnType<typeof readSignedOffer>>;
type Found = { index: number; attestation: Json };

/** What every layer check of one receipt shares. */
interface LayerContext {
  reference: ReceiptVerificationResult;
  /** The domain the offer (else the assertion) claims to be signed by, checked once its signature verifies. */
  signer: string | null;
  options: VerifyMcpReceiptOptions;
}

const statusOfMissing = (m: 'layer_missing' | 'duplicate_layer') =>
  layer(m === 'layer_missing' ? 'unverifiable' : 'invalid', m, null, null);

/** Whose keys: the domain the offer claims to be signed by, else the assertion's issuer; null when neither is a normalised host. */
function claimedSigner(offerFound: Located, transportFound: Located): string | null {
  const claimedOffer = 'attestation' in offerFound ? unverifiedJwsPayload(offerFound.attestation.signature) : undefined;
  const claimedAssertion = 'attestation' in transportFound ? unverifiedJwsPayload(transportFound.attestation.signature) : undefined;
  const claimed = isRecord(claimedOffer) ? claimedOffer.canonical_domain : isRecord(claimedAssertion) ? claimedAssertion.issuer : undefined;
  return typeof claimed === 'string' && normalizeHost(claimed) === claimed ? claimed : null;
}

/**
 * One layer's signature against the signer's keys. The reference's verdict comes first and is
 * kept unless the signed content finds worse (it can only take a pass away); its signature
 * check also ran, so only a layer it found validly signed is checked again.
 */
async function signedLayer(found: Found, ctx: LayerContext): Promise<McpReceiptLayer & { payload?: Json }> {
  const ref = ctx.reference.attestations[found.index]!;
  const asReference = layer(ref.status, ref.error, found.index, ref.kid);
  if (ref.status !== 'verified' && ref.status !== 'expired') return asReference;
  const jws = found.attestation.signature as string; // the reference verified it, so it is a non-blank string
  const jwks = ctx.signer === null ? null : await resolveSafely(ctx.options.resolveSignerJwks, ctx.signer, jwsHeaderKid(jws));
  if (!isRecord(jwks)) return worse(asReference, layer('unverifiable', 'key_unresolvable', found.index, null));
  const verified = verifyAttestationJws(jws, jwks);
  if (!verified) return layer('invalid', 'sig_invalid', found.index, null);
  return { ...asReference, kid: verified.kid, payload: verified.payload };
}

/** The offer layer: its signature, then the signed offer read and its window (`generated_at`..`valid_until`). */
async function checkOfferLayer(found: Located, ctx: LayerContext) {
  if ('missing' in found) return { offer: statusOfMissing(found.missing), signedOffer: null, payload: null };
  const { payload, ...offer } = await signedLayer(found, ctx);
  if (!payload || ctx.signer === null) return { offer, signedOffer: null, payload: null };
  const signedOffer = readSignedOffer(payload, ctx.signer);
  if (!signedOffer) return { offer: layer('invalid', 'malformed_attestation', offer.index, offer.kid), signedOffer: null, payload: null };
  const inWindow = windowStatus(ctx.options.now, signedOffer.window.from, signedOffer.window.until, offer.index!, offer.kid);
  return { offer: worse(offer, inWindow), signedOffer, payload };
}

/**
 * The transport layer: its signature, the assertion read, its window (`served_at` + the offer's
 * lifetime) and whether the signed `served_at` falls within the signed offer's life (`served_at_mismatch`
 * pushed onto `errors`).
 */
async function checkTransportLayer(found: Located, signedOffer: SignedOffer | null, ctx: LayerContext, errors: McpReceiptCode[]) {
  if ('missing' in found) return { transport: statusOfMissing(found.missing), assertion: null };
  const { payload, ...transport } = await signedLayer(found, ctx);
  if (!payload) return { transport, assertion: null };
  const assertion = readMcpTransportAssertion(payload);
  const servedAt = dateTimeMs(assertion?.served_at);
  if (!assertion || !Number.isFinite(servedAt))
    return { transport: layer('invalid', 'malformed_attestation', transport.index, transport.kid), assertion: null };
  if (!signedOffer) return { transport: layer('unverifiable', 'missing_validity_window', transport.index, transport.kid), assertion };
  const lifetime = signedOffer.window.until - signedOffer.window.from;
  const inWindow = windowStatus(ctx.options.now, servedAt, servedAt + lifetime, transport.index!, transport.kid);
  // The transport window and `ref` are unsigned: only the signed served_at ties this call to this offer.
  if (servedAt < signedOffer.window.from || servedAt > signedOffer.window.until) errors.push('served_at_mismatch');
  // Both layers must describe one call: the assertion hashes the arguments the node was sent, and
  // the signed request echoes them (issue 36 defect 9: an offer for 3 guests beside a call for 2).
  if (assertion.arguments_sha256 !== signedOffer.argumentsSha256) errors.push('arguments_mismatch');
  return { transport: worse(transport, inWindow), assertion };
}

/** The unsigned labels against what the signed offer implies: `issuer.node` and the assertion's issuer, `subject`, both `ref`s and `offer_ref`. */
function labelErrors(
  receipt: unknown,
  signer: string,
  signedOffer: SignedOffer,
  found: Located[],
  assertion: McpTransportAssertion | null,
) {
  const errors: McpReceiptCode[] = [];
  const issuer = isRecord(receipt) && isRecord(receipt.issuer) ? receipt.issuer.node : undefined;
  if (issuer !== signer || (assertion !== null && assertion.issuer !== signer)) errors.push('issuer_mismatch');
  const subject = isRecord(receipt) && isRecord(receipt.subject) ? receipt.subject : {};
  if (Object.keys(subject).length !== 2 || subject.property !== signer || subject.stay !== signedOffer.stay)
    errors.push('subject_mismatch');
  const refs = found.flatMap((f) => ('attestation' in f ? [f.attestation.ref] : []));
  if (refs.some((r) => r !== signedOffer.ref) || (assertion !== null && assertion.offer_ref !== signedOffer.ref))
    errors.push('offer_ref_mismatch');
  return errors;
}

/**
 * `verifyMcpReceipt(receipt, { resolveJwks, resolveSignerJwks, now })`: vrpkit's verdict on an
 * MCP composition profile receipt from signed content only (module doc), with the reference
 * result beside it. It does not bind the receipt to a call: `checkMcpCallReceipt` does that.
 */
export async function verifyMcpReceipt(receipt: unknown, options: VerifyMcpReceiptOptions): Promise<McpReceiptVerification> {
  const reference = await verifyReceipt(receipt, { resolveJwks: options.resolveJwks, now: options.now });
  if (!reference.receipt_valid) {
    // A version we do not speak cannot be checked; a malformed envelope is a failed check.
    const code = reference.errors[0] ?? 'malformed_receipt';
    const status: AttestationStatus = code === 'unsupported_version' ? 'unverifiable' : 'invalid';
    const blank = layer(status, code, null, null);
    return {
      status,
      verified: false,
      offer: blank,
      transport: { ...blank },
      errors: [code],
      signer: null,
      signed_offer: null,
      assertion: null,
      reference,
    };
  }
  const offerFound = locateLayer(receipt, OFFER_LAYER);
  const transportFound = locateLayer(receipt, MCP_TRANSPORT_LAYER);
  const ctx: LayerContext = { reference, signer: claimedSigner(offerFound, transportFound), options };
  const errors: McpReceiptCode[] = [];
  const { offer, signedOffer, payload } = await checkOfferLayer(offerFound, ctx);
  const { transport, assertion } = await checkTransportLayer(transportFound, signedOffer, ctx, errors);
  if (signedOffer && ctx.signer !== null)
    errors.push(...labelErrors(receipt, ctx.signer, signedOffer, [offerFound, transportFound], assertion));
  const outside = reference.attestations.filter((a) => a.layer !== OFFER_LAYER && a.layer !== MCP_TRANSPORT_LAYER);
  if (outside.length > 0) errors.push('layer_unverifiable');
  const status = worst([
    offer.status,
    transport.status,
    ...(outside.length > 0 ? (['unverifiable'] as const) : []),
    ...(errors.some((e) => e !== 'layer_unverifiable') ? (['invalid'] as const) : []),
  ]);
  const signer = payload ? ctx.signer : null;
  return { status, verified: status === 'verified', offer, transport, errors, signer, signed_offer: payload, assertion, reference };
}
