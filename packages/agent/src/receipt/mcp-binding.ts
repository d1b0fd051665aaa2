/**
 * The agent's receipt check after an MCP `tools/call` (issue 5 item 5; MCP composition
 * profile, "Binding the assertion to an observed call"): verify the receipt the node put in the
 * result's `_meta`, then bind its transport assertion to the call the agent actually sent, to
 * the offer attestation and to the origin the agent talked to.
 *
 * Every layer reports its own status. A transport layer that fails — unsigned, unresolvable,
 * bad signature, or signed but describing another call — is never `verified` (profile:
 * "never silently passes"). Like `verifyReceipt`, this never throws for a bad artifact.
 */
import { decodeJwsPayload, parseCompactJws } from '@vrpkit/core';
import {
  assertionMatchesToolCall,
  hashArguments,
  MCP_TRANSPORT_LAYER,
  type McpTransportAssertion,
  normalizeToolArguments,
  OFFER_LAYER,
  RECEIPT_META_KEY,
  readMcpTransportAssertion,
} from '@vrpkit/protocol';
import { isOnCanonicalDomain } from '../canonical-domain.js';
import {
  type AttestationStatus,
  type ReceiptErrorCode,
  type ReceiptVerificationResult,
  type ResolveReceiptJwks,
  verifyReceipt,
} from './verify.js';

/**
 * Binding codes of this check. They are vrpkit's, outside the receipt-v1 registry (which
 * covers envelope and signature checks only) and never emitted by `verifyReceipt`.
 * `malformed_attestation` is the registry's own code, used here for an assertion payload that
 * is not a profile 1.0 transport assertion.
 */
export type McpReceiptBindingCode =
  | 'receipt_missing' // the result carries no receipt under RECEIPT_META_KEY
  | 'layer_missing' // the receipt has no attestation for this layer
  | 'duplicate_layer' // more than one attestation for this layer: which one binds is ambiguous
  | 'malformed_attestation'
  | 'tool_call_mismatch' // the assertion names another tool or another arguments digest
  | 'issuer_mismatch' // assertion issuer ≠ offer canonical_domain, or the surface host is not on it
  | 'offer_ref_mismatch' // assertion offer_ref absent or ≠ the offer attestation's ref
  | 'served_at_mismatch' // the signed served_at is not within the served offer's own generated_at..valid_until
  | 'offer_mismatch' // the offer attestation signs another offer than the envelope received
  | 'offer_request_mismatch'; // the signed offer's `request` is not the call's arguments (another stay or party size)

export interface McpReceiptLayerReport {
  status: AttestationStatus;
  /** Registry code from `verifyReceipt`, or a binding code; null only when `verified`. */
  code: ReceiptErrorCode | McpReceiptBindingCode | null;
  /** Index in `attestations[]`, null when the layer is missing. */
  index: number | null;
  kid: string | null;
  /** The attestation's own status as `verifyReceipt` gave it (signature + window), before binding. */
  signature_status: AttestationStatus | null;
}

export interface McpReceiptCheck {
  receipt_present: boolean;
  /** The `verifyReceipt` result, untouched; null when there was no receipt. */
  receipt: ReceiptVerificationResult | null;
  offer: McpReceiptLayerReport & {
    signature_matches_envelope: boolean;
    /** The signed offer's `request` echoes exactly the call's arguments (after alias normalisation). */
    request_matches_call: boolean;
  };
  transport: McpReceiptLayerReport & {
    /** `assertionMatchesToolCall` over the sent call with aliases normalised (profile, argument key casing). */
    bound: boolean;
    tool_matches: boolean;
    arguments_match: boolean;
    /** The decoded assertion, only when its signature verified (status `verified` or `expired`). */
    assertion: McpTransportAssertion | null;
  };
  offer_ref_matches: boolean;
  issuer_matches: boolean;
  /** True only when the receipt is fully verified and every binding holds. */
  verified: boolean;
}

export interface CheckMcpCallReceiptParams {
  /** The `tools/call` result as the MCP client returned it (its `_meta` carries the receipt). */
  callResult: unknown;
  /** The call the agent sent: tool name and the exact `arguments` object. */
  sentCall: { tool: string; arguments: unknown };
  /** The offer envelope the same result carried. */
  envelope: unknown;
  /** Host name of the MCP endpoint the agent called (Node Tool Binding §6). */
  surfaceHost: string;
  resolveJwks: ResolveReceiptJwks;
  now: number;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The receipt a node put in a `tools/call` result, or undefined. */
export function receiptFromCallResult(callResult: unknown): unknown {
  if (!isRecord(callResult) || !isRecord(callResult._meta)) return undefined;
  return callResult._meta[RECEIPT_META_KEY];
}

/** The JSON payload of a compact JWS (undefined when it has none); the signature is checked elsewhere. */
function decodeJsonPayload(jws: unknown): unknown {
  const parsed = parseCompactJws(jws);
  const text = parsed.ok ? decodeJwsPayload(parsed.jws.payloadSegment) : null;
  try {
    return text === null ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The sent arguments as the profile hashes them (aliases normalised), or undefined when they cannot bind. */
function sentArgumentsDigestInput(args: unknown): unknown {
  try {
    return normalizeToolArguments(args);
  } catch {
    return undefined; // not an object, or conflicting aliases
  }
}

function hashArgumentsOrNull(args: unknown): string | null {
  try {
    return hashArguments(args);
  } catch {
    return null;
  }
}

/** The members a node echoes from the call's arguments into the signed `request` (Core §4, §5). */
const ECHOED_ARGUMENTS = ['check_in', 'check_out', 'guests', 'language'] as const;

/**
 * Whether the signed offer's `request` is the call's arguments: every argument the call carried
 * (aliases normalised; profile, argument key casing) is echoed with the same value, and the
 * request echoes none the call did not carry. Derived members (`nights`, weekdays) are ignored.
 */
function requestAnswersCall(request: unknown, args: unknown): boolean {
  const sent = sentArgumentsDigestInput(args);
  if (!isRecord(request) || !isRecord(sent)) return false;
  if (!Object.keys(sent).every((k) => (ECHOED_ARGUMENTS as readonly string[]).includes(k))) return false;
  return ECHOED_ARGUMENTS.every((k) => request[k] === sent[k]);
}

type Located = { index: number; attestation: Record<string, unknown> } | { missing: 'layer_missing' | 'duplicate_layer' };

function locate(receipt: unknown, layer: string): Located {
  const all = isRecord(receipt) && Array.isArray(receipt.attestations) ? receipt.attestations : [];
  const hits = all.flatMap((a, index) => (isRecord(a) && a.layer === layer ? [{ index, attestation: a }] : []));
  if (hits.length === 0) return { missing: 'layer_missing' };
  if (hits.length > 1) return { missing: 'duplicate_layer' };
  return hits[0]!;
}

const signatureValid = (s: AttestationStatus | null): boolean => s === 'verified' || s === 'expired';

/**
 * Verify the receipt of one MCP `tools/call` result and bind it to the call that was sent.
 * The transport layer is `verified` only when its signature and window verified AND the
 * assertion names the sent tool and argument digest, its issuer is the offer's
 * `canonical_domain` with the surface host on it, and its `offer_ref` is the offer
 * attestation's `ref`. The offer layer is `verified` only when it verified AND signs exactly
 * the envelope received (`signature` byte-equal to `envelope.signature.jws`).
 */
export async function checkMcpCallReceipt(params: CheckMcpCallReceiptParams): Promise<McpReceiptCheck> {
  const { sentCall, envelope, surfaceHost } = params;
  const envelopeJws = isRecord(envelope) && isRecord(envelope.signature) ? envelope.signature.jws : undefined;
  // The canonical_domain the offer JWS signs, not the unsigned `envelope.offer` copy beside it.
  const signedOffer = decodeJsonPayload(envelopeJws);
  const offerDomain = isRecord(signedOffer) ? signedOffer.canonical_domain : undefined;

  const receiptDoc = receiptFromCallResult(params.callResult);
  const blank = (status: AttestationStatus, code: ReceiptErrorCode | McpReceiptBindingCode): McpReceiptLayerReport => ({
    status,
    code,
    index: null,
    kid: null,
    signature_status: null,
  });
  const unbound = { bound: false, tool_matches: false, arguments_match: false, assertion: null };
  if (receiptDoc === undefined) {
    return {
      receipt_present: false,
      receipt: null,
      offer: { ...blank('unverifiable', 'receipt_missing'), signature_matches_envelope: false, request_matches_call: false },
      transport: { ...blank('unverifiable', 'receipt_missing'), ...unbound },
      offer_ref_matches: false,
      issuer_matches: false,
      verified: false,
    };
  }

  const receipt = await verifyReceipt(receiptDoc, { resolveJwks: params.resolveJwks, now: params.now });
  if (!receipt.receipt_valid) {
    // A version we do not speak cannot be checked; a malformed envelope is a failed check.
    const code = receipt.errors[0] ?? 'malformed_receipt';
    const status: AttestationStatus = code === 'unsupported_version' ? 'unverifiable' : 'invalid';
    return {
      receipt_present: true,
      receipt,
      offer: { ...blank(status, code), signature_matches_envelope: false, request_matches_call: false },
      transport: { ...blank(status, code), ...unbound },
      offer_ref_matches: false,
      issuer_matches: false,
      verified: false,
    };
  }

  const layerReport = (found: Located): McpReceiptLayerReport => {
    if ('missing' in found) return blank(found.missing === 'layer_missing' ? 'unverifiable' : 'invalid', found.missing);
    const r = receipt.attestations[found.index]!;
    return { status: r.status, code: r.error, index: found.index, kid: r.kid, signature_status: r.status };
  };

  // Offer layer: it must sign exactly the envelope this result carried.
  const offerFound = locate(receiptDoc, OFFER_LAYER);
  const offer = { ...layerReport(offerFound), signature_matches_envelope: false, request_matches_call: false };
  if ('attestation' in offerFound) {
    offer.signature_matches_envelope = typeof envelopeJws === 'string' && offerFound.attestation.signature === envelopeJws;
    offer.request_matches_call = isRecord(signedOffer) && requestAnswersCall(signedOffer.request, sentCall.arguments);
    if (offer.status === 'verified' && !offer.signature_matches_envelope)
      Object.assign(offer, { status: 'invalid', code: 'offer_mismatch' });
    // `offer_ref` names only the dates: without this, a genuine offer for another party size could ride on this call's assertion.
    else if (offer.status === 'verified' && !offer.request_matches_call)
      Object.assign(offer, { status: 'invalid', code: 'offer_request_mismatch' });
  }

  // Transport layer: decoded only once its signature verified (binding an unsigned claim means nothing).
  const transportFound = locate(receiptDoc, MCP_TRANSPORT_LAYER);
  const transport = { ...layerReport(transportFound), ...unbound } as McpReceiptCheck['transport'];
  let offerRefMatches = false;
  let issuerMatches = false;
  if ('attestation' in transportFound && signatureValid(transport.signature_status)) {
    const assertion = readMcpTransportAssertion(decodeJsonPayload(transportFound.attestation.signature));
    if (!assertion) {
      Object.assign(transport, { status: 'invalid', code: 'malformed_attestation' });
    } else {
      const args = sentArgumentsDigestInput(sentCall.arguments);
      transport.assertion = assertion;
      transport.tool_matches = assertion.tool === sentCall.tool;
      transport.arguments_match = args !== undefined && assertion.arguments_sha256 === hashArgumentsOrNull(args);
      transport.bound = args !== undefined && assertionMatchesToolCall(assertion, { tool: sentCall.tool, arguments: args });
      // Node Tool Binding §6: the surface is on the offer's canonical_domain, and that domain signed the assertion.
      issuerMatches = assertion.issuer === offerDomain && isOnCanonicalDomain(surfaceHost, assertion.issuer);
      offerRefMatches =
        typeof assertion.offer_ref === 'string' && 'attestation' in offerFound && offerFound.attestation.ref === assertion.offer_ref;
      // The attestation window and `ref` are unsigned; the signed `served_at` must fall within the
      // life of the (signed, byte-identical) offer this call returned, so an assertion signed for
      // an earlier call cannot be carried onto this one.
      const servedAt = Date.parse(assertion.served_at);
      const offerFrom =
        isRecord(signedOffer) && typeof signedOffer.generated_at === 'string' ? Date.parse(signedOffer.generated_at) : Number.NaN;
      const offerUntil =
        isRecord(signedOffer) && typeof signedOffer.valid_until === 'string' ? Date.parse(signedOffer.valid_until) : Number.NaN;
      const servedDuringOffer = servedAt >= offerFrom && servedAt <= offerUntil;
      if (transport.status === 'verified') {
        const failure: McpReceiptBindingCode | null = !transport.bound
          ? 'tool_call_mismatch'
          : !issuerMatches
            ? 'issuer_mismatch'
            : !offerRefMatches
              ? 'offer_ref_mismatch'
              : !servedDuringOffer
                ? 'served_at_mismatch'
                : null;
        if (failure) Object.assign(transport, { status: 'invalid', code: failure });
      }
    }
  }

  return {
    receipt_present: true,
    receipt,
    offer,
    transport,
    offer_ref_matches: offerRefMatches,
    issuer_matches: issuerMatches,
    verified: receipt.fully_verified && offer.status === 'verified' && transport.status === 'verified',
  };
}
