/**
 * The node's receipt for one MCP `tools/call` (MCP Composition Profile on the
 * VRP receipt envelope v1). The node signs an assertion about the interaction — never the
 * transport (MCP Composition Profile, the core rule: "sign the assertion, not the transport"; VRP receipt envelope v1, D6) — with the same
 * Ed25519 key as its offers, and pairs it with an `offer` attestation over the served offer.
 * Decisions (what each layer signs, `ref`, windows, hashed arguments) are in docs/receipts.md.
 */
import { type JwsSigner, toUtcSecond } from '@vrpkit/core';
import {
  buildMcpTransportAssertion,
  MCP_TRANSPORT_LAYER,
  OFFER_LAYER,
  type OfferEnvelope,
  offerRef,
  RECEIPT_VERSION,
  type ReceiptAttestation,
  type VrpReceipt,
} from '@vrpkit/protocol';
import { NodeError } from './errors.js';
import type { OfferService } from './service/index.js';

/** Most assertions `signAssertion` remembers within one second, all signers together (about a kilobyte each). */
const SIGNED_ASSERTIONS_MAX = 4096;
/** The second (`served_at`) the remembered signatures were made in, and them, by signer and assertion text. */
let signedSecond = '';
let signedCount = 0;
const signedAssertions = new Map<JwsSigner, Map<string, string>>();

/**
 * The compact JWS over a transport assertion's text, with the offers' key and the profile
 * reference's header shape ({alg, typ:"JWT", kid}). Ed25519 is deterministic (RFC 8032 §5.1.6):
 * one key over one assertion always gives the same signature, so an assertion that repeats one
 * signed earlier in the same `served_at` second (same tool, canonical arguments, offer_ref and
 * issuer) gets those exact bytes back instead of a second computation. Every call still receives
 * the signature over its own assertion; only identical work is not redone. The second is part of
 * the assertion, so nothing from an earlier second can match: the memo is emptied when it moves.
 */
function signAssertion(signer: JwsSigner, servedAt: string, assertion: string): string {
  if (servedAt !== signedSecond) {
    signedSecond = servedAt;
    signedAssertions.clear();
    signedCount = 0;
  }
  const bySigner = signedAssertions.get(signer) ?? new Map<string, string>();
  let jws = bySigner.get(assertion);
  if (jws === undefined) {
    jws = signer.sign(assertion, { typ: 'JWT' });
    if (signedCount < SIGNED_ASSERTIONS_MAX) {
      bySigner.set(assertion, jws);
      signedAssertions.set(signer, bySigner);
      signedCount++;
    }
  }
  return jws;
}

export interface IssueMcpReceiptInput {
  service: Pick<OfferService, 'canonicalDomain' | 'jwksUrl' | 'activeSigner' | 'now'>;
  /** The `name` of the `tools/call`. */
  tool: string;
  /** The call's `arguments` exactly as received (aliases are normalised before hashing). */
  arguments: unknown;
  /** The envelope the call returns, unmodified (Node Tool Binding v0.1 §5). */
  envelope: OfferEnvelope;
  /** The MCP session id, when the transport has one (the vrpkit MCP surface is stateless). */
  sessionId?: string;
}

/**
 * Build and sign the receipt `{vrp_receipt_version, subject, issuer, attestations:[offer, transport]}`:
 * - `offer`: `signature` is the offer's own compact JWS verbatim (byte-identical to
 *   `envelope.signature.jws`), window = the offer's `generated_at`..`valid_until`;
 * - `transport`: the signed profile assertion, window = `served_at`..`served_at` + the offer's lifetime;
 * - both carry `source` = the node's JWKS URL and `ref` = the assertion's `offer_ref`.
 * Throws `receipt_unbuildable` when the envelope is not this node's offer (a programmer error).
 */
export function issueMcpReceipt(input: IssueMcpReceiptInput): VrpReceipt {
  const { service, envelope } = input;
  const offer = envelope.offer;
  const domain = service.canonicalDomain;
  if (offer.canonical_domain !== domain || !offer.request) {
    throw new NodeError('receipt_unbuildable', { problem: 'it is not an offer of this node with a request echo' });
  }
  const { check_in, check_out } = offer.request;
  const ref = offerRef(domain, check_in, check_out);
  // The transport window lasts as long as the offer does: a rotated key stays published for one
  // offer lifetime after rotation (Core VRP v0.1 §3.1), so a transport layer signed before the rotation
  // stays verifiable for its whole window (receipt-v1 D2).
  const lifetimeMs = Date.parse(offer.valid_until) - Date.parse(offer.generated_at);
  if (!(lifetimeMs > 0))
    throw new NodeError('receipt_unbuildable', { problem: 'the offer has no positive generated_at..valid_until lifetime' });
  const servedAt = toUtcSecond(service.now());
  const assertion = buildMcpTransportAssertion({
    tool: input.tool,
    arguments: input.arguments,
    servedAt,
    issuer: domain,
    offerRef: ref,
    sessionId: input.sessionId,
  });
  const transportJws = signAssertion(service.activeSigner(), servedAt, JSON.stringify(assertion));
  const offerAttestation: ReceiptAttestation = {
    layer: OFFER_LAYER,
    source: service.jwksUrl,
    signature: envelope.signature.jws,
    ref,
    valid_from: offer.generated_at,
    valid_until: offer.valid_until,
  };
  const transportAttestation: ReceiptAttestation = {
    layer: MCP_TRANSPORT_LAYER,
    source: service.jwksUrl,
    signature: transportJws,
    ref,
    valid_from: servedAt,
    valid_until: toUtcSecond(Date.parse(servedAt) + lifetimeMs),
  };
  return {
    vrp_receipt_version: RECEIPT_VERSION,
    subject: { property: domain, stay: `${check_in}/${check_out}` },
    issuer: { node: domain },
    attestations: [offerAttestation, transportAttestation],
  };
}
