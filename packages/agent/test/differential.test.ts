/**
 * Differential test against the reference verifier `@vacationrentalprotocol/vrp-verify`: on a
 * generated corpus of signed and mutated envelopes, both verifiers agree on status and code
 * wherever both define the case. The only disagreements allowed are the cases where vrpkit is
 * deliberately stricter (README "Stricter than the reference"), and in every one of them vrpkit
 * is the one refusing: it never verifies what the reference rejects.
 */

import * as reference from '@vacationrentalprotocol/vrp-verify';
import { verifyOffer } from '@vrpkit/agent';
import { base64urlDecode } from '@vrpkit/core';
import type { Loose } from '@vrpkit/testkit/minted';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildEnvelope, jwksVariants, mutationArb, nowArb, offerArb } from './support/corpus.js';

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON a base64url JWS segment decodes to, or undefined when it is not JSON. */
function segmentJson(segment: string): unknown {
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The documented stricter cases, recognised from the input alone. */
function stricterCase(env: Loose): string | null {
  const jws = env.signature?.jws;
  if (typeof jws !== 'string') return null;
  const parts = jws.split('.');
  if (parts.length !== 3) return null;
  // 1. Strict, canonical base64url in every segment (the reference decodes leniently).
  if (parts.some((p) => base64urlDecode(p) === null) || parts[0] === '') return 'strict_base64url';
  const header = segmentJson(parts[0] as string);
  if (header === undefined) return null;
  // 2. The protected header must be a JSON object.
  if (!isObject(header)) return 'header_not_object';
  const h = header as Record<string, unknown>;
  // 3. The unsigned envelope signature metadata must agree with the signed header.
  if (env.signature.alg !== 'EdDSA' || env.signature.kid !== h.kid) return 'envelope_signature_metadata';
  const payload = segmentJson(parts[1] as string);
  if (payload === undefined) return null;
  // 4. The signed payload must be a JSON object.
  if (!isObject(payload)) return 'payload_not_object';
  // 5. valid_until must be RFC 3339 UTC (the reference accepts anything Date.parse accepts).
  const vu = (payload as Record<string, unknown>).valid_until;
  if (typeof vu === 'string' && !RFC3339_UTC.test(vu) && Number.isFinite(Date.parse(vu))) return 'valid_until_rfc3339';
  return null;
}

describe('differential: vrpkit verifyOffer vs @vacationrentalprotocol/vrp-verify', () => {
  it('agrees on status and code wherever both define the case', () => {
    const tally = { agree: 0, stricter: {} as Record<string, number>, referenceThrew: 0 };
    fc.assert(
      fc.property(offerArb, mutationArb, fc.nat(jwksVariants.length - 1), nowArb, (offer, mutation, j, now) => {
        const envelope = buildEnvelope(offer, mutation);
        const jwks = jwksVariants[j];
        const ours = verifyOffer({ envelope, jwks, now });
        let ref: reference.OfferVerificationResult;
        try {
          ref = reference.verifyOffer({ envelope, jwks: jwks as reference.Jwks, now });
        } catch {
          // The reference throws on some inputs (e.g. a `null` header): it does not define the case.
          tally.referenceThrew++;
          expect(ours.status).not.toBe('verified');
          return;
        }
        if (ours.status === ref.status && ours.code === ref.code) {
          tally.agree++;
          expect(ours.fresh).toBe(ref.fresh);
          return;
        }
        const why = stricterCase(envelope);
        expect(
          why,
          `undocumented disagreement: ours ${ours.status}/${ours.code}, reference ${ref.status}/${ref.code}, ${JSON.stringify(mutation)}`,
        ).not.toBeNull();
        // Stricter means refusing: never verified where the reference is not.
        expect(ours.status).not.toBe('verified');
        tally.stricter[why as string] = (tally.stricter[why as string] ?? 0) + 1;
      }),
      { numRuns: 3000, seed: 20261129 },
    );
    console.info('differential tally', JSON.stringify(tally));
    // The corpus must exercise agreement broadly, not only the documented deviations.
    expect(tally.agree).toBeGreaterThan(1500);
    expect(Object.keys(tally.stricter).sort()).toEqual(
      expect.arrayContaining(['envelope_signature_metadata', 'strict_base64url', 'valid_until_rfc3339']),
    );
  });
});
