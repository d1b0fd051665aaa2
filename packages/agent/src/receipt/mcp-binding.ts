/**
 * The agent's receipt check after an MCP `tools/call` (MCP Composition Profile, binding the
 * assertion to an observed call): vrpkit's verdict on the receipt the node put in the result's
 * `_meta` (`verifyMcpReceipt`: signed content only, the reference result beside it), then the
 * binding of its transport assertion to the call the agent actually sent, of its offer layer to
 * the envelope received and to the call's arguments, and of both to the origin the agent talked to.
 *
 * Every layer reports its own status. A transport layer that fails — unsigned, unresolvable,
 * bad signature, or signed but describing another call — is never `verified` (profile:
 * "never silently passes"). Like `verifyReceipt`, this never throws for a bad artifact.
 */
import { isRecord } from '@vrpkit/core';
import {
  assertionMatchesToolCall,
  hashArguments,
  type McpTransportAssertion,
  normalizeToolArguments,
  type ObservedToolCall,
  RECEIPT_META_KEY,
} from '@vrpkit/protocol';
import { isOnCanonicalDomain } from '../canonical-domain.js';
import {
  ECHOED_ARGUMENTS,
  type McpReceiptCode,
  type McpReceiptVerification,
  type ResolveSignerJwks,
  unverifiedJwsPayload,
  verifyMcpReceipt,
} from './mcp-receipt.js';
import type { AttestationStatus, ReceiptVerificationResult, ResolveReceiptJwks } from './verify.js';

/**
 * Binding codes of this check, beside `verifyMcpReceipt`'s. They are vrpkit's, outside the
 * VRP receipt envelope v1 registry (which covers envelope and signature checks only) and never emitted by
 * `verifyReceipt`.
 */
export type McpReceiptBindingCode =
  | McpReceiptCode
  | 'receipt_missing' // the result carries no receipt under RECEIPT_META_KEY
  | 'tool_call_mismatch' // the assertion names another tool or another arguments digest
  | 'offer_mismatch' // the offer attestation signs another offer than the envelope received
  | 'offer_request_mismatch'; // the signed offer's `request` is not the call's arguments (another stay or party size)

export interface McpReceiptLayerReport {
  status: AttestationStatus;
  /** Registry code, a `verifyMcpReceipt` code or a binding code; null only when `verified`. */
  code: McpReceiptBindingCode | null;
  /** Index in `attestations[]`, null when the layer is missing. */
  index: number | null;
  kid: string | null;
  /** The attestation's own status as `verifyReceipt` gave it (signature + window), before binding. */
  signature_status: AttestationStatus | null;
}

export interface McpReceiptCheck {
  receipt_present: boolean;
  /** The reference `verifyReceipt` result, untouched (parity; it reads unsigned members); null when there was no receipt. */
  receipt: ReceiptVerificationResult | null;
  /** `verifyMcpReceipt`'s receipt-level findings (labels that disagree with the signed payloads, layers outside the profile). */
  errors: McpReceiptCode[];
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
  /** Host name of the MCP endpoint the agent called (Node Tool Binding v0.1 §6). */
  surfaceHost: string;
  /** For the reference result: resolves an attestation's `source`. */
  resolveJwks: ResolveReceiptJwks;
  /** For vrpkit's verdict: the signing domain's own keys, from its own discovery document. */
  resolveSignerJwks: ResolveSignerJwks;
  now: number;
}

/** The receipt a node put in a `tools/call` result, or undefined. */
export function receiptFromCallResult(callResult: unknown): unknown {
  if (!isRecord(callResult) || !isRecord(callResult._meta)) return undefined;
  return callResult._meta[RECEIPT_META_KEY];
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

const blankLayer = (status: AttestationStatus, code: McpReceiptBindingCode): McpReceiptLayerReport => ({
  status,
  code,
  index: null,
  kid: null,
  signature_status: null,
});
const UNBOUND = { bound: false, tool_matches: false, arguments_match: false, assertion: null };
const UNMATCHED = { signature_matches_envelope: false, request_matches_call: false };

/** A binding failure is a failed check: it outranks expiry, never an unknown or another failure. */
const bindable = (s: AttestationStatus) => s === 'verified' || s === 'expired';

/** The report of a result that carried no receipt: nothing is known, nothing binds. */
function missingReceipt(): McpReceiptCheck {
  return {
    receipt_present: false,
    receipt: null,
    errors: [],
    offer: { ...blankLayer('unverifiable', 'receipt_missing'), ...UNMATCHED },
    transport: { ...blankLayer('unverifiable', 'receipt_missing'), ...UNBOUND },
    offer_ref_matches: false,
    issuer_matches: false,
    verified: false,
  };
}

/** A layer of the verdict with the reference's status of its signature beside it. */
function layerReport(v: McpReceiptVerification, l: McpReceiptVerification['offer']): McpReceiptLayerReport {
  return { ...l, signature_status: l.index === null ? null : (v.reference.attestations[l.index]?.status ?? null) };
}

/** The offer layer bound: it must sign exactly the envelope this result carried, and answer the call. */
function bindOfferLayer(
  v: McpReceiptVerification,
  attestation: Record<string, unknown> | undefined,
  envelopeJws: unknown,
  sentCall: ObservedToolCall,
) {
  const offer = { ...layerReport(v, v.offer), ...UNMATCHED };
  if (!attestation) return offer;
  offer.signature_matches_envelope = typeof envelopeJws === 'string' && attestation.signature === envelopeJws;
  offer.request_matches_call = v.signed_offer !== null && requestAnswersCall(v.signed_offer.request, sentCall.arguments);
  if (bindable(offer.status) && v.signed_offer !== null) {
    if (!offer.signature_matches_envelope) Object.assign(offer, { status: 'invalid', code: 'offer_mismatch' });
    // `offer_ref` names only the dates: without this, a genuine offer for another party size could ride on this call's assertion.
    else if (!offer.request_matches_call) Object.assign(offer, { status: 'invalid', code: 'offer_request_mismatch' });
  }
  return offer;
}

/** The transport layer bound, once its signature verified (binding an unsigned claim means nothing): the sent call, the issuer, the offer_ref, served_at. */
function bindTransportLayer(
  v: McpReceiptVerification,
  offerAttestation: Record<string, unknown> | undefined,
  offerDomain: unknown,
  params: CheckMcpCallReceiptParams,
) {
  const transport = { ...layerReport(v, v.transport), ...UNBOUND } as McpReceiptCheck['transport'];
  const { assertion } = v;
  if (!assertion) return { transport, offerRefMatches: false, issuerMatches: false };
  const { sentCall, surfaceHost } = params;
  const args = sentArgumentsDigestInput(sentCall.arguments);
  transport.assertion = assertion;
  transport.tool_matches = assertion.tool === sentCall.tool;
  transport.arguments_match = args !== undefined && assertion.arguments_sha256 === hashArgumentsOrNull(args);
  transport.bound = args !== undefined && assertionMatchesToolCall(assertion, { tool: sentCall.tool, arguments: args });
  // Node Tool Binding v0.1 §6: the surface is on the offer's canonical_domain, and that domain signed the assertion.
  const issuerMatches =
    assertion.issuer === offerDomain && isOnCanonicalDomain(surfaceHost, assertion.issuer) && !v.errors.includes('issuer_mismatch');
  const offerRefMatches =
    typeof assertion.offer_ref === 'string' && offerAttestation?.ref === assertion.offer_ref && !v.errors.includes('offer_ref_mismatch');
  if (bindable(transport.status)) {
    const failure: McpReceiptBindingCode | null = !transport.bound
      ? 'tool_call_mismatch'
      : !issuerMatches
        ? 'issuer_mismatch'
        : !offerRefMatches
          ? 'offer_ref_mismatch'
          : v.errors.includes('served_at_mismatch')
            ? 'served_at_mismatch'
            : null;
    if (failure) Object.assign(transport, { status: 'invalid', code: failure });
  }
  return { transport, offerRefMatches, issuerMatches };
}

/**
 * Verify the receipt of one MCP `tools/call` result and bind it to the call that was sent.
 * The transport layer is `verified` only when `verifyMcpReceipt` verified it AND the assertion
 * names the sent tool and argument digest, its issuer is the offer's `canonical_domain` with
 * the surface host on it, its `offer_ref` is the signed offer's, and its `served_at` falls within
 * the signed offer's life. The offer layer is `verified` only when it verified AND signs exactly
 * the envelope received (`signature` byte-equal to `envelope.signature.jws`) AND its signed
 * `request` is the call's arguments. A binding failure is `invalid`, even on an expired layer.
 */
export async function checkMcpCallReceipt(params: CheckMcpCallReceiptParams): Promise<McpReceiptCheck> {
  const { envelope } = params;
  const envelopeJws = isRecord(envelope) && isRecord(envelope.signature) ? envelope.signature.jws : undefined;
  // The canonical_domain the offer JWS signs, not the unsigned `envelope.offer` copy beside it.
  const envelopeOffer = unverifiedJwsPayload(envelopeJws);
  const offerDomain = isRecord(envelopeOffer) ? envelopeOffer.canonical_domain : undefined;
  const receiptDoc = receiptFromCallResult(params.callResult);
  if (receiptDoc === undefined) return missingReceipt();
  const v = await verifyMcpReceipt(receiptDoc, {
    resolveJwks: params.resolveJwks,
    resolveSignerJwks: params.resolveSignerJwks,
    now: params.now,
  });
  const all = isRecord(receiptDoc) && Array.isArray(receiptDoc.attestations) ? receiptDoc.attestations : [];
  const at = v.offer.index === null ? undefined : all[v.offer.index];
  const offerAttestation = isRecord(at) ? at : undefined;
  const offer = bindOfferLayer(v, offerAttestation, envelopeJws, params.sentCall);
  const { transport, offerRefMatches, issuerMatches } = bindTransportLayer(v, offerAttestation, offerDomain, params);
  return {
    receipt_present: true,
    receipt: v.reference,
    errors: v.errors,
    offer,
    transport,
    offer_ref_matches: offerRefMatches,
    issuer_matches: issuerMatches,
    verified: v.verified && offer.status === 'verified' && transport.status === 'verified',
  };
}
