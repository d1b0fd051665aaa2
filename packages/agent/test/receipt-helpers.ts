/**
 * Minting receipts for tests with the public receipt test key (the public receipt test key of the VRP receipt vectors:
 * seed = 32 bytes of 0x07, kid `vrp-vectors-2026-01-01-01` — the key of the official vectors).
 * Ed25519 is deterministic, so every minted vector is reproducible byte for byte.
 */
import { createJwsSigner, ed25519PrivateJwkFromSeed, type JwsSigner, publicJwkOf } from '@vrpkit/core';
import {
  BOUND_TOOL_NAME,
  buildMcpTransportAssertion,
  JWKS_PATH,
  MCP_TRANSPORT_LAYER,
  type McpTransportAssertion,
  OFFER_LAYER,
  offerRef,
  type VrpReceipt,
} from '@vrpkit/protocol';

export const RECEIPT_TEST_KID = 'vrp-vectors-2026-01-01-01';
export const receiptTestKey = ed25519PrivateJwkFromSeed(Buffer.alloc(32, 0x07));
export const receiptTestJwks = { keys: [publicJwkOf(receiptTestKey, RECEIPT_TEST_KID)] };
export const receiptTestSigner = createJwsSigner(receiptTestKey, RECEIPT_TEST_KID, { typ: 'JWT' });

export const DOMAIN = 'villa.example';
export const NOW = '2026-06-24T12:00:00Z';
export const SENT = { tool: BOUND_TOOL_NAME, arguments: { check_in: '2026-09-02', check_out: '2026-09-05', guests: 4 } };

/** A signed offer envelope (only the members the receipt check reads are meaningful). */
export function mintEnvelope(signer: JwsSigner = receiptTestSigner, domain = DOMAIN, request: Record<string, unknown> = SENT.arguments) {
  const offer = {
    kind: 'verified_stay_offer',
    protocol_version: '0.1',
    canonical_domain: domain,
    generated_at: '2026-06-24T11:55:00Z',
    valid_until: '2026-06-24T12:10:00Z',
    request: { check_in: '2026-09-02', check_out: '2026-09-05', guests: 4, ...request },
  };
  const jws = signer.sign(JSON.stringify(offer));
  return {
    kind: 'signed_verified_stay_offer',
    protocol_version: '0.1',
    offer,
    signature: { format: 'jws_compact', alg: 'EdDSA', kid: signer.kid, jws },
  };
}

export interface MintOptions {
  envelope?: ReturnType<typeof mintEnvelope>;
  signer?: JwsSigner;
  /** Overrides for the signed assertion (after it is built from `call`). */
  assertion?: Record<string, unknown>;
  /** The call the node saw. */
  call?: { tool: string; arguments: unknown };
  /** Overrides for the transport attestation (unsigned members). */
  transport?: Record<string, unknown>;
  offerAttestation?: Record<string, unknown>;
}

/** A receipt shaped as a vrpkit node issues one: offer attestation + signed transport assertion. */
export function mintReceipt(opts: MintOptions = {}): { receipt: VrpReceipt; assertion: McpTransportAssertion } {
  const envelope = opts.envelope ?? mintEnvelope();
  const signer = opts.signer ?? receiptTestSigner;
  const call = opts.call ?? SENT;
  const { canonical_domain: domain, request } = envelope.offer;
  const ref = offerRef(domain, request.check_in, request.check_out);
  const source = `https://${domain}${JWKS_PATH}`;
  const assertion = {
    ...buildMcpTransportAssertion({
      tool: call.tool,
      arguments: call.arguments,
      servedAt: '2026-06-24T11:59:00Z',
      issuer: domain,
      offerRef: ref,
    }),
    ...opts.assertion,
  } as McpTransportAssertion;
  const receipt: VrpReceipt = {
    vrp_receipt_version: '1.0',
    subject: { property: domain, stay: `${request.check_in}/${request.check_out}` },
    issuer: { node: domain },
    attestations: [
      {
        layer: OFFER_LAYER,
        source,
        signature: envelope.signature.jws,
        ref,
        valid_from: envelope.offer.generated_at,
        valid_until: envelope.offer.valid_until,
        ...opts.offerAttestation,
      },
      {
        layer: MCP_TRANSPORT_LAYER,
        source,
        signature: signer.sign(JSON.stringify(assertion)),
        ref,
        valid_from: '2026-06-24T11:59:00Z',
        valid_until: '2026-06-24T12:59:00Z',
        ...opts.transport,
      },
    ],
  };
  return { receipt, assertion };
}

/** A `tools/call` result as the MCP client returns it, the receipt under the profile `_meta` key. */
export function callResultWith(receipt: unknown, envelope: unknown) {
  return {
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    structuredContent: envelope,
    ...(receipt === undefined ? {} : { _meta: { 'vrp/receipt': receipt } }),
  };
}
