/**
 * Regression tests for defects found by an independent attack on the verifier, each `describe`
 * named after the defect.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  assessFacts,
  checkMcpCallReceipt,
  createHardenedFetch,
  createReceiptJwksResolver,
  createSignerJwksResolver,
  fetchVerifiedStayOffer,
  JwksCache,
  quoteChecks,
  receiptIssuerDomain,
  safeToQuote,
  verifyMcpReceipt,
  verifyOffer,
  verifyReceipt,
} from '@vrpkit/agent';
import { systemClock } from '@vrpkit/core';
import { initNode, rotateKey, serveNode } from '@vrpkit/node';
import { baseOffer, envelopeWithJws, FRESH_NOW, TEST_JWKS, testSigner } from '@vrpkit/testkit/minted';
import { describe, expect, it } from 'vitest';
import { callResultWith, DOMAIN, mintReceipt, mintEnvelope as mintReceiptEnvelope, NOW, receiptTestJwks, SENT } from './receipt-helpers.js';

/** Sign the official payload with `price.public_total` and `agent_total` written as `literal`, byte for byte. */
function offerWithTotalsWritten(literal: string) {
  const text = JSON.stringify(baseOffer())
    .replaceAll('"public_total":123400', `"public_total":${literal}`)
    .replaceAll('"agent_total":123400', `"agent_total":${literal}`);
  expect(text).toContain(`"agent_total":${literal}`);
  return envelopeWithJws(testSigner.sign(text), JSON.parse(text));
}

describe('a rounded price is quoted as exact', () => {
  for (const literal of ['9007199254740993', '1e308', '123.0000000000000001', '9007199254740991.4', '1e2', '1E2', '100.0', '-0']) {
    it(`a signed total of ${literal} is not exact, so not safe to quote`, () => {
      const v = verifyOffer({ envelope: offerWithTotalsWritten(literal), jwks: TEST_JWKS, now: FRESH_NOW });
      expect(v.status).toBe('verified');
      expect(quoteChecks(v).failures).toEqual(['price_not_exact']);
      expect(safeToQuote(v)).toBe(false);
      expect(assessFacts({ discovered: null, verification: v, safeToQuote: false }).facts.price.value).toBe('unknown');
    });
  }

  it('the largest safe integer, written plainly, is still exact', () => {
    const v = verifyOffer({ envelope: offerWithTotalsWritten('9007199254740991'), jwks: TEST_JWKS, now: FRESH_NOW });
    expect(safeToQuote(v)).toBe(true);
  });

  it('plain totals are exact beside fractional or negative numbers elsewhere in the offer', () => {
    // Other numbers that are not plain integers (and a look-alike inside a string) make the
    // verifier read the totals' own literals rather than answer for the whole text at once.
    const text = JSON.stringify({ ...baseOffer(), rating: 4.5, offset: -2, note: 'ratio:1.5e3' });
    const v = verifyOffer({ envelope: envelopeWithJws(testSigner.sign(text), JSON.parse(text)), jwks: TEST_JWKS, now: FRESH_NOW });
    expect(safeToQuote(v)).toBe(true);
    const rounded = text.replace('"agent_total":123400', '"agent_total":123400.0');
    const r = verifyOffer({ envelope: envelopeWithJws(testSigner.sign(rounded), JSON.parse(rounded)), jwks: TEST_JWKS, now: FRESH_NOW });
    expect(quoteChecks(r).failures).toEqual(['price_not_exact']);
  });

  it('a duplicate member is read as JSON.parse reads it (the last one)', () => {
    const text = JSON.stringify(baseOffer()).replace('"public_total":123400', '"public_total":1.5,"public_total":123400');
    const v = verifyOffer({ envelope: envelopeWithJws(testSigner.sign(text), JSON.parse(text)), jwks: TEST_JWKS, now: FRESH_NOW });
    expect(safeToQuote(v)).toBe(true);
    const reversed = JSON.stringify(baseOffer()).replace(
      '"public_total":123400',
      '"public_total":123400,"public_total":123400.00000000000001',
    );
    const w = verifyOffer({ envelope: envelopeWithJws(testSigner.sign(reversed), JSON.parse(reversed)), jwks: TEST_JWKS, now: FRESH_NOW });
    expect(quoteChecks(w).failures).toEqual(['price_not_exact']);
  });
});

describe('checkMcpCallReceipt binds a call to the wrong offer', () => {
  const twoGuests = { tool: SENT.tool, arguments: { ...SENT.arguments, guests: 2 } };
  const check = (envelope: unknown, receipt: unknown, sentCall: { tool: string; arguments: unknown } = twoGuests) =>
    checkMcpCallReceipt({
      callResult: callResultWith(receipt, envelope),
      sentCall,
      envelope,
      surfaceHost: DOMAIN,
      resolveJwks: () => receiptTestJwks,
      resolveSignerJwks: () => receiptTestJwks,
      now: Date.parse(NOW),
    });

  it('a 2-guest call answered with a genuine 3-guest offer and a genuine 2-guest transport attestation is not verified', async () => {
    const threeGuestOffer = mintReceiptEnvelope(undefined, DOMAIN, { guests: 3 });
    // The node really served both: a 3-guest offer (its receipt's offer layer) and a 2-guest call (its assertion).
    const { receipt } = mintReceipt({ envelope: threeGuestOffer, call: twoGuests });
    const r = await check(threeGuestOffer, receipt);
    expect(r.transport).toMatchObject({ status: 'verified', bound: true }); // the assertion alone cannot tell
    expect(r.offer).toMatchObject({ status: 'invalid', code: 'offer_request_mismatch', request_matches_call: false });
    expect(r.verified).toBe(false);
  });

  it('the same receipt binds when the offer answers the call; camelCase aliases and an echoed language still bind', async () => {
    const twoGuestOffer = mintReceiptEnvelope(undefined, DOMAIN, { guests: 2 });
    const { receipt } = mintReceipt({ envelope: twoGuestOffer, call: twoGuests });
    expect((await check(twoGuestOffer, receipt)).verified).toBe(true);
    const camel = { tool: SENT.tool, arguments: { checkIn: '2026-09-02', checkOut: '2026-09-05', guests: 2 } };
    expect((await check(twoGuestOffer, mintReceipt({ envelope: twoGuestOffer, call: camel }).receipt, camel)).verified).toBe(true);
    const sv = { tool: SENT.tool, arguments: { ...twoGuests.arguments, language: 'sv' } };
    const svOffer = mintReceiptEnvelope(undefined, DOMAIN, { guests: 2, language: 'sv' });
    expect((await check(svOffer, mintReceipt({ envelope: svOffer, call: sv }).receipt, sv)).verified).toBe(true);
    // An offer localised for a language the call did not ask for answers another call.
    expect((await check(svOffer, mintReceipt({ envelope: svOffer, call: twoGuests }).receipt)).offer.code).toBe('offer_request_mismatch');
  });
});

describe('receipt checks trust unsigned fields', () => {
  const now = Date.parse(NOW);
  const inline = () => receiptTestJwks;
  const verify = (receipt: unknown, at = now) => verifyMcpReceipt(receipt, { resolveJwks: inline, resolveSignerJwks: inline, now: at });
  type Attestations = ReturnType<typeof mintReceipt>['receipt']['attestations'];
  const withAttestations = (edit: (a: Attestations) => Attestations) => {
    const { receipt } = mintReceipt();
    return { ...receipt, attestations: edit(receipt.attestations) };
  };

  it('control: a node-shaped receipt is verified by its signed content, signed by the offer domain', async () => {
    const v = await verify(mintReceipt().receipt);
    expect(v).toMatchObject({ status: 'verified', verified: true, signer: DOMAIN, errors: [] });
    expect(v.reference.fully_verified).toBe(true);
  });

  it('edited valid_from/valid_until do not make a 48-hour-old receipt pass: the windows come from the signed times', async () => {
    const later = now + 48 * 3_600_000;
    const widened = withAttestations((all) =>
      all.map((a) => ({ ...a, valid_from: '2026-06-24T00:00:00Z', valid_until: '2026-06-30T00:00:00Z' })),
    );
    const v = await verify(widened, later);
    expect(v.reference.fully_verified).toBe(true); // the reference reads the edited windows: reported, not trusted
    expect(v.offer).toMatchObject({ status: 'expired', code: 'sig_expired' });
    expect(v.transport).toMatchObject({ status: 'expired', code: 'sig_expired' });
    expect(v.verified).toBe(false);
  });

  it('an offer layer and a transport layer of two calls (guests 3 vs 2, same stay) are invalid: arguments_mismatch (issue 36 defect 9, regression)', async () => {
    const threeGuests = mintReceiptEnvelope(undefined, DOMAIN, { ...SENT.arguments, guests: 3 });
    const twoGuests = { ...SENT, arguments: { ...SENT.arguments, guests: 2 } };
    const v = await verify(mintReceipt({ envelope: threeGuests, call: twoGuests }).receipt);
    expect(v).toMatchObject({ status: 'invalid', verified: false });
    expect(v.errors).toEqual(['arguments_mismatch']);
    // The same call in camelCase is the same call: the profile hashes the arguments with aliases normalised.
    const camel = { ...SENT, arguments: { checkIn: SENT.arguments.check_in, checkOut: SENT.arguments.check_out, guests: 3 } };
    expect(await verify(mintReceipt({ envelope: threeGuests, call: camel }).receipt)).toMatchObject({ status: 'verified', errors: [] });
  });

  it('a removed offer or transport layer leaves the receipt unverifiable (layer_missing)', async () => {
    const noOffer = await verify(withAttestations((all) => all.filter((a) => a.layer !== 'offer')));
    expect(noOffer).toMatchObject({ status: 'unverifiable', verified: false, offer: { code: 'layer_missing' } });
    const noTransport = await verify(withAttestations((all) => all.filter((a) => a.layer !== 'transport')));
    expect(noTransport).toMatchObject({ status: 'unverifiable', verified: false, transport: { code: 'layer_missing' } });
  });

  it('a second transport layer is invalid (duplicate_layer)', async () => {
    const v = await verify(withAttestations((all) => [...all, all[1]!]));
    expect(v).toMatchObject({ status: 'invalid', verified: false, transport: { status: 'invalid', code: 'duplicate_layer' } });
  });

  it('a rewritten subject, issuer.node or ref is invalid', async () => {
    const { receipt } = mintReceipt();
    const subject = await verify({ ...receipt, subject: { property: DOMAIN, stay: '2026-09-01/2026-09-05' } });
    expect(subject).toMatchObject({ status: 'invalid', errors: ['subject_mismatch'] });
    const issuer = await verify({ ...receipt, issuer: { node: 'operator.example' } });
    expect(issuer).toMatchObject({ status: 'invalid', errors: ['issuer_mismatch'] });
    const ref = await verify(withAttestations((all) => all.map((a) => ({ ...a, ref: `offer:${DOMAIN}:2026-09-02/06` }))));
    expect(ref).toMatchObject({ status: 'invalid', errors: ['offer_ref_mismatch'] });
    for (const v of [subject, issuer, ref]) expect(v.reference.fully_verified).toBe(true);
  });

  it('a receipt relabelled to a domain that republishes the node key set is refused; keys come only from the signing domain', async () => {
    const EVIL = 'keys-mirror.example';
    const { receipt } = mintReceipt();
    const relabelled = {
      ...receipt,
      subject: { ...receipt.subject, property: EVIL },
      issuer: { node: EVIL },
      attestations: receipt.attestations.map((a) => ({ ...a, source: `https://${EVIL}/.well-known/jwks.json` })),
    };
    // Both domains answer discovery and serve the node's key set (the mirror republishes it).
    const fetched: string[] = [];
    const fetch = async (input: string | URL | Request) => {
      const url = new URL(String(input));
      fetched.push(url.href);
      const body =
        url.pathname === '/.well-known/jwks.json'
          ? receiptTestJwks
          : {
              protocol: 'vacation-rental-protocol',
              protocol_version: '0.1',
              canonical_domain: url.hostname,
              jwks_url: `https://${url.hostname}/.well-known/jwks.json`,
              verified_stay_offer_endpoint: `https://${url.hostname}/api/verified-stay-offer`,
            };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const cache = new JwksCache({ fetch, clock: { now: () => now } });
    const resolveJwks = createReceiptJwksResolver({ issuerDomain: receiptIssuerDomain(relabelled) ?? '', cache });
    expect((await verifyReceipt(relabelled, { resolveJwks, now })).fully_verified).toBe(true); // the reference is fooled
    const v = await verifyMcpReceipt(relabelled, { resolveJwks, resolveSignerJwks: createSignerJwksResolver({ fetch, cache }), now });
    expect(v).toMatchObject({ status: 'invalid', verified: false, signer: DOMAIN });
    expect(v.errors).toEqual(expect.arrayContaining(['issuer_mismatch', 'subject_mismatch']));
    expect(fetched).toContain(`https://${DOMAIN}/.well-known/vacation-rental.json`);
    expect(fetched).not.toContain(`https://${EVIL}/.well-known/vacation-rental.json`);
  });
});

describe('two key rotations within ten seconds make verifications fail', () => {
  it('continuous verification across two rotations one second apart fails zero times (real node over https)', async () => {
    const DOMAIN_ROTATING = 'rotating.example';
    const dir = mkdtempSync(join(tmpdir(), 'vrpkit-rotations-'));
    const dataDir = join(dir, 'node');
    await initNode({ domain: DOMAIN_ROTATING, dataDir });
    const node = await serveNode({ dataDir, dev: true, port: 0 });
    const fetch = createHardenedFetch({ connectTo: [`${DOMAIN_ROTATING}:443:127.0.0.1:${node.port}`], ca: node.caPem! });
    try {
      const jwksCache = new JwksCache({ fetch });
      const stay = { check_in: new Date(Date.now() + 40 * 86_400_000).toISOString().slice(0, 10), guests: 2 } as const;
      const args = { ...stay, check_out: new Date(Date.now() + 43 * 86_400_000).toISOString().slice(0, 10) };
      const outcomes: { status: string; code: string | null; kid: unknown }[] = [];
      let stop = false;
      // Four agents verifying continuously through one cache, as in the attack.
      const agent = async () => {
        while (!stop) {
          const r = await fetchVerifiedStayOffer(DOMAIN_ROTATING, args, { fetch, clock: systemClock, jwksCache });
          outcomes.push({ status: r.status, code: r.code, kid: r.verification?.header?.kid });
        }
      };
      const agents = Array.from({ length: 4 }, agent);
      while (outcomes.length < 8) await sleep(50); // verifying steadily with the first key
      await rotateKey({ dataDir });
      await sleep(1_000);
      await rotateKey({ dataDir });
      await sleep(1_500);
      stop = true;
      await Promise.all(agents);
      expect(new Set(outcomes.map((o) => o.kid)).size).toBe(3); // the verifications spanned both rotations
      expect(outcomes.filter((o) => o.status !== 'verified')).toEqual([]);
    } finally {
      await fetch.close();
      await node.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
