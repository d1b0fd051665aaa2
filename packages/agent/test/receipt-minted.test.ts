import {
  checkMcpCallReceipt,
  createReceiptJwksResolver,
  isReceiptSourceOnIssuerDomain,
  JwksCache,
  receiptIssuerDomain,
  verifyReceipt,
} from '@vrpkit/agent';
import { createJwsSigner, generateEd25519Jwk } from '@vrpkit/core';
import { assertionMatchesToolCall, hashArguments, normalizeToolArguments } from '@vrpkit/protocol';
import { describe, expect, it } from 'vitest';
import {
  callResultWith,
  DOMAIN,
  mintEnvelope,
  mintReceipt,
  NOW,
  RECEIPT_TEST_KID,
  receiptTestJwks,
  receiptTestKey,
  SENT,
} from './receipt-helpers.js';

const now = Date.parse(NOW);
const inline = () => receiptTestJwks;

async function check(receipt: unknown, overrides: Partial<Parameters<typeof checkMcpCallReceipt>[0]> = {}) {
  const envelope = (overrides.envelope as ReturnType<typeof mintEnvelope>) ?? mintEnvelope();
  return checkMcpCallReceipt({
    callResult: callResultWith(receipt, envelope),
    sentCall: SENT,
    envelope,
    surfaceHost: DOMAIN,
    resolveJwks: inline,
    resolveSignerJwks: inline,
    now,
    ...overrides,
  });
}

describe('minted receipts: the receipt test key', () => {
  it('is the key of the official vectors (seed 0x07)', () => {
    expect(receiptTestKey.x).toBe('6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw');
  });

  it('a node-shaped receipt verifies fully and binds to the call', async () => {
    const { receipt } = mintReceipt();
    const r = await check(receipt);
    expect(JSON.stringify(r.receipt)).toBe(
      JSON.stringify({
        receipt_valid: true,
        fully_verified: true,
        errors: [],
        attestations: [
          { index: 0, layer: 'offer', status: 'verified', error: null, kid: RECEIPT_TEST_KID },
          { index: 1, layer: 'transport', status: 'verified', error: null, kid: RECEIPT_TEST_KID },
        ],
      }),
    );
    expect(r.verified).toBe(true);
    expect(r.transport).toMatchObject({ status: 'verified', code: null, bound: true, tool_matches: true, arguments_match: true });
    expect(r.offer).toMatchObject({ status: 'verified', signature_matches_envelope: true });
    expect(r).toMatchObject({ offer_ref_matches: true, issuer_matches: true });
  });
});

describe('minted receipts: failure cases', () => {
  it('tampered assertion: the payload changed under the old signature → sig_invalid, never bound', async () => {
    const { receipt } = mintReceipt();
    const t = receipt.attestations[1]!;
    const [h, , s] = t.signature.split('.');
    const forged = { ...JSON.parse(Buffer.from(t.signature.split('.')[1]!, 'base64url').toString()), tool: 'book_stay' };
    t.signature = `${h}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${s}`;
    const v = await verifyReceipt(receipt, { resolveJwks: inline, now });
    expect(v.attestations[1]).toEqual({ index: 1, layer: 'transport', status: 'invalid', error: 'sig_invalid', kid: null });
    const r = await check(receipt);
    expect(r.transport).toMatchObject({ status: 'invalid', code: 'sig_invalid', bound: false, assertion: null });
    expect(r.verified).toBe(false);
  });

  it('wrong tool: a validly signed assertion about another tool does not bind', async () => {
    const { receipt, assertion } = mintReceipt({ call: { tool: 'search_stays', arguments: SENT.arguments } });
    expect(assertionMatchesToolCall(assertion, SENT)).toBe(false);
    const r = await check(receipt);
    expect(r.receipt?.fully_verified).toBe(true); // the signature layer alone cannot see it
    expect(r.transport).toMatchObject({
      status: 'invalid',
      code: 'tool_call_mismatch',
      bound: false,
      tool_matches: false,
      arguments_match: true,
    });
    expect(r.verified).toBe(false);
  });

  it('camelCase arguments: bind only after normalisation', async () => {
    const camel = { checkIn: '2026-09-02', checkOut: '2026-09-05', guests: 4 };
    // The node saw camelCase and hashed the normalised form (profile, argument key casing).
    const { receipt, assertion } = mintReceipt({ call: { tool: SENT.tool, arguments: camel } });
    expect(assertion.arguments_sha256).toBe(hashArguments(SENT.arguments));
    expect(assertionMatchesToolCall(assertion, { tool: SENT.tool, arguments: camel })).toBe(false); // before
    expect(assertionMatchesToolCall(assertion, { tool: SENT.tool, arguments: normalizeToolArguments(camel) })).toBe(true); // after
    const r = await check(receipt, { sentCall: { tool: SENT.tool, arguments: camel } });
    expect(r.transport).toMatchObject({ status: 'verified', bound: true });

    // A node that hashed the camelCase keys verbatim does not conform: its assertion never binds.
    const raw = mintReceipt({ assertion: { arguments_sha256: hashArguments(camel) } });
    const r2 = await check(raw.receipt, { sentCall: { tool: SENT.tool, arguments: camel } });
    expect(r2.transport).toMatchObject({ status: 'invalid', code: 'tool_call_mismatch', arguments_match: false });
  });

  it('not-yet-valid window → expired / not_yet_valid, kid kept, and the layer is not verified', async () => {
    const { receipt } = mintReceipt({ transport: { valid_from: '2026-06-24T12:00:01Z', valid_until: '2026-06-24T13:00:00Z' } });
    const v = await verifyReceipt(receipt, { resolveJwks: inline, now });
    expect(v.attestations[1]).toEqual({ index: 1, layer: 'transport', status: 'expired', error: 'not_yet_valid', kid: RECEIPT_TEST_KID });
    const r = await check(receipt);
    expect(r.transport).toMatchObject({ status: 'expired', code: 'not_yet_valid', bound: true });
    expect(r.verified).toBe(false);
  });

  it('window bounds are inclusive (now == valid_until is verified), one ms later is sig_expired', async () => {
    const { receipt } = mintReceipt({ transport: { valid_from: NOW, valid_until: NOW } });
    expect((await verifyReceipt(receipt, { resolveJwks: inline, now })).attestations[1]?.status).toBe('verified');
    expect((await verifyReceipt(receipt, { resolveJwks: inline, now: now + 1 })).attestations[1]?.error).toBe('sig_expired');
  });

  it('unknown kid → invalid / sig_invalid (reference parity), never verified', async () => {
    const stranger = createJwsSigner(receiptTestKey, 'vrp-vectors-unknown-kid', { typ: 'JWT' });
    const { receipt } = mintReceipt({ signer: stranger });
    const v = await verifyReceipt(receipt, { resolveJwks: inline, now });
    expect(v.attestations[1]).toEqual({ index: 1, layer: 'transport', status: 'invalid', error: 'sig_invalid', kid: null });
    expect((await check(receipt)).transport.status).toBe('invalid');
  });

  it('a key that is not in the issuer JWKS (another key, same kid) → sig_invalid', async () => {
    const other = createJwsSigner((await generateEd25519Jwk()).privateJwk, RECEIPT_TEST_KID, { typ: 'JWT' });
    const { receipt } = mintReceipt({ signer: other });
    expect((await verifyReceipt(receipt, { resolveJwks: inline, now })).attestations[1]?.error).toBe('sig_invalid');
  });

  it("offer_ref that does not match the offer attestation's ref → offer_ref_mismatch", async () => {
    const { receipt } = mintReceipt({ assertion: { offer_ref: `offer:${DOMAIN}:2026-09-02/06` } });
    const r = await check(receipt);
    expect(r.receipt?.fully_verified).toBe(true);
    expect(r.offer_ref_matches).toBe(false);
    expect(r.transport).toMatchObject({ status: 'invalid', code: 'offer_ref_mismatch', bound: true });
    const { receipt: noRef } = mintReceipt({ assertion: { offer_ref: undefined } });
    expect((await check(noRef)).transport.code).toBe('offer_ref_mismatch');
  });

  it('an assertion signed for an earlier call (served_at outside the served offer) does not bind → served_at_mismatch', async () => {
    // The unsigned attestation window is widened to cover it; only the signed served_at tells.
    const { receipt } = mintReceipt({
      assertion: { served_at: '2020-01-01T00:00:00Z', session_id: 'someone-elses-session' },
      transport: { valid_from: '2020-01-01T00:00:00Z', valid_until: '2030-01-01T00:00:00Z' },
    });
    const r = await check(receipt);
    expect(r.receipt?.fully_verified).toBe(true);
    expect(r.transport).toMatchObject({ status: 'invalid', code: 'served_at_mismatch', bound: true });
    expect(r.verified).toBe(false);
  });

  it('issuer: the assertion issuer must be the offer canonical_domain and the surface host on it', async () => {
    const { receipt } = mintReceipt({ assertion: { issuer: 'operator.example' } });
    expect((await check(receipt)).transport).toMatchObject({ status: 'invalid', code: 'issuer_mismatch' });
    const ok = mintReceipt().receipt;
    expect((await check(ok, { surfaceHost: 'mcp.villa.example' })).transport.status).toBe('verified'); // §6 subdomain
    const r = await check(ok, { surfaceHost: 'operator.example' });
    expect(r).toMatchObject({ issuer_matches: false, verified: false });
    expect(r.transport.code).toBe('issuer_mismatch');
  });

  it('the issuer is compared with the canonical_domain the offer JWS signs, never the unsigned copy', async () => {
    const { receipt } = mintReceipt();
    const envelope = mintEnvelope();
    const relabelled = { ...envelope, offer: { ...envelope.offer, canonical_domain: 'operator.example' } };
    const r = await check(receipt, {
      envelope: relabelled,
      callResult: callResultWith(receipt, relabelled),
      surfaceHost: 'operator.example',
    });
    expect(r).toMatchObject({ issuer_matches: false, verified: false });
    expect(r.transport.code).toBe('issuer_mismatch');
    expect((await check(receipt, { envelope: relabelled, callResult: callResultWith(receipt, relabelled) })).issuer_matches).toBe(true);
  });

  it('an offer attestation over another offer than the envelope received → offer_mismatch', async () => {
    const { receipt } = mintReceipt({ envelope: mintEnvelope() });
    const envelope = mintEnvelope();
    envelope.offer.valid_until = '2026-06-24T12:09:00Z';
    envelope.signature.jws = createJwsSigner(receiptTestKey, RECEIPT_TEST_KID).sign(JSON.stringify(envelope.offer));
    const r = await check(receipt, { envelope, callResult: callResultWith(receipt, envelope) });
    expect(r.offer).toMatchObject({ status: 'invalid', code: 'offer_mismatch', signature_matches_envelope: false });
    expect(r.verified).toBe(false);
  });

  it('no receipt, an unsigned transport layer, a missing or duplicated layer: never verified', async () => {
    const none = await check(undefined);
    expect(none).toMatchObject({ receipt_present: false, verified: false });
    expect(none.transport).toMatchObject({ status: 'unverifiable', code: 'receipt_missing' });

    const { receipt: unsigned } = mintReceipt({ transport: { signature: undefined } });
    expect((await check(unsigned)).transport).toMatchObject({ status: 'unverifiable', code: 'layer_unverifiable' });

    const { receipt } = mintReceipt();
    const offerOnly = { ...receipt, attestations: [receipt.attestations[0]!] };
    expect((await check(offerOnly)).transport).toMatchObject({ status: 'unverifiable', code: 'layer_missing' });
    const doubled = { ...receipt, attestations: [...receipt.attestations, receipt.attestations[1]!] };
    expect((await check(doubled)).transport).toMatchObject({ status: 'invalid', code: 'duplicate_layer' });
  });

  it('a signed payload that is not a profile 1.0 assertion → malformed_attestation', async () => {
    const { receipt } = mintReceipt({ assertion: { type: 'vrp.mcp.transport.2' } });
    expect((await check(receipt)).transport).toMatchObject({ status: 'invalid', code: 'malformed_attestation' });
  });

  it('envelope-level failures propagate to both layers', async () => {
    const { receipt } = mintReceipt();
    const v09 = await check({ ...receipt, vrp_receipt_version: '0.9' });
    expect(v09.transport).toMatchObject({ status: 'unverifiable', code: 'unsupported_version' });
    const malformed = await check({ ...receipt, subject: [] });
    expect(malformed.transport).toMatchObject({ status: 'invalid', code: 'malformed_receipt' });
    expect(malformed.offer.status).toBe('invalid');
  });
});

describe('verifyReceipt: reference edge cases', () => {
  it('envelope check is presence-based; a missing version is unsupported; non-objects are malformed', async () => {
    const { receipt } = mintReceipt();
    const { vrp_receipt_version: _v, ...noVersion } = receipt;
    expect((await verifyReceipt(noVersion, { resolveJwks: inline, now })).errors).toEqual(['unsupported_version']);
    for (const bad of [null, 'x', 42])
      expect((await verifyReceipt(bad, { resolveJwks: inline, now })).errors).toEqual(['malformed_receipt']);
    const noWindow = { ...receipt, attestations: [{ layer: 'offer', signature: 'x', valid_from: NOW }] };
    expect((await verifyReceipt(noWindow, { resolveJwks: inline, now })).errors).toEqual(['malformed_receipt']);
    const emptyLayer = { ...receipt, attestations: [{ ...receipt.attestations[0], layer: '' }] };
    expect((await verifyReceipt(emptyLayer, { resolveJwks: inline, now })).errors).toEqual(['malformed_receipt']);
  });

  it('a resolver that returns a non-object or throws → unverifiable / key_unresolvable', async () => {
    const { receipt } = mintReceipt();
    for (const resolveJwks of [
      () => null,
      () => 'jwks',
      () => Promise.reject(new Error('down')),
      () => {
        throw new Error('boom');
      },
    ]) {
      const v = await verifyReceipt(receipt, { resolveJwks, now });
      expect(v.attestations.map((a) => a.error)).toEqual(['key_unresolvable', 'key_unresolvable']);
      expect(v.fully_verified).toBe(false);
    }
  });

  it('alg other than EdDSA, a non-object payload, or a non-string kid → sig_invalid', async () => {
    const { receipt } = mintReceipt();
    const signed = (header: Record<string, unknown>, payload: string) => {
      const s = createJwsSigner(receiptTestKey, RECEIPT_TEST_KID);
      const [, , sig] = s.sign(payload).split('.');
      return `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(payload).toString('base64url')}.${sig}`;
    };
    const arrayPayload = createJwsSigner(receiptTestKey, RECEIPT_TEST_KID).sign('[1,2]');
    const numericKid = createJwsSigner(receiptTestKey, 7 as unknown as string).sign('{}');
    for (const signature of [signed({ alg: 'none', kid: RECEIPT_TEST_KID }, '{}'), arrayPayload, numericKid, 'a.b']) {
      const r = await verifyReceipt(
        { ...receipt, attestations: [{ ...receipt.attestations[0], signature }] },
        { resolveJwks: inline, now },
      );
      expect(r.attestations[0]).toMatchObject({ status: 'invalid', error: 'sig_invalid' });
    }
  });

  it('a header without kid tries every Ed25519 key and reports kid null', async () => {
    const noKid = createJwsSigner(receiptTestKey, undefined as unknown as string).sign('{"a":1}');
    const { receipt } = mintReceipt();
    const r = await verifyReceipt(
      { ...receipt, attestations: [{ ...receipt.attestations[0], signature: noKid }] },
      { resolveJwks: inline, now },
    );
    expect(r.attestations[0]).toEqual({ index: 0, layer: 'offer', status: 'verified', error: null, kid: null });
  });
});

describe('production resolveJwks: only the issuer domain, only through the JWKS cache', () => {
  function cacheServing(jwks: unknown) {
    const fetched: string[] = [];
    const cache = new JwksCache({
      clock: { now: () => now },
      fetch: async (input) => {
        fetched.push(String(input));
        return new Response(JSON.stringify(jwks), { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    return { cache, fetched };
  }

  it('resolves a source on the issuer domain', async () => {
    const { cache, fetched } = cacheServing(receiptTestJwks);
    const { receipt } = mintReceipt();
    const v = await verifyReceipt(receipt, { resolveJwks: createReceiptJwksResolver({ issuerDomain: DOMAIN, cache }), now });
    expect(v.fully_verified).toBe(true);
    expect(fetched).toEqual([`https://${DOMAIN}/.well-known/jwks.json`]); // the second layer came from the cache
  });

  it('a source on another domain is refused → unverifiable / key_unresolvable, nothing fetched', async () => {
    const { cache, fetched } = cacheServing(receiptTestJwks);
    const { receipt } = mintReceipt({ transport: { source: 'https://keys.attacker.example/.well-known/jwks.json' } });
    const v = await verifyReceipt(receipt, { resolveJwks: createReceiptJwksResolver({ issuerDomain: DOMAIN, cache }), now });
    expect(v.attestations[1]).toEqual({ index: 1, layer: 'transport', status: 'unverifiable', error: 'key_unresolvable', kid: null });
    expect(fetched).not.toContain('https://keys.attacker.example/.well-known/jwks.json');
    expect((await check(receipt, { resolveJwks: createReceiptJwksResolver({ issuerDomain: DOMAIN, cache }) })).transport).toMatchObject({
      status: 'unverifiable',
      code: 'key_unresolvable',
      bound: false,
    });
  });

  it('the source rule: https, the issuer host itself, default port, no credentials; a pinned jwks_url is exact', async () => {
    const ok = `https://${DOMAIN}/.well-known/jwks.json`;
    expect(isReceiptSourceOnIssuerDomain(ok, 'Villa.Example')).toBe(true);
    for (const bad of [
      `http://${DOMAIN}/.well-known/jwks.json`,
      `https://${DOMAIN}:8443/.well-known/jwks.json`,
      `https://user@${DOMAIN}/.well-known/jwks.json`,
      `https://keys.${DOMAIN}/.well-known/jwks.json`,
      `https://${DOMAIN}.evil.example/.well-known/jwks.json`,
      'not a url',
      undefined,
    ]) {
      expect(isReceiptSourceOnIssuerDomain(bad, DOMAIN), String(bad)).toBe(false);
    }
    const { cache } = cacheServing(receiptTestJwks);
    const pinned = createReceiptJwksResolver({ issuerDomain: DOMAIN, jwksUrl: `https://${DOMAIN}/keys/jwks.json`, cache });
    expect(await pinned(ok, {})).toBeNull();
  });

  it('reads the issuer domain a receipt names', () => {
    expect(receiptIssuerDomain(mintReceipt().receipt)).toBe(DOMAIN);
    expect(receiptIssuerDomain({ issuer: { node: 'a.example:443' } })).toBeNull();
    expect(receiptIssuerDomain(null)).toBeNull();
  });
});
