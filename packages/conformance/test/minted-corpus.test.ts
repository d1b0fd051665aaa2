/**
 * vrpkit's own offer vectors (examples/conformance/offer-vrpkit/), in the official vector format
 * and signed with the official vectors' public test key: each file is rebuilt here byte for byte
 * (so what is published is what this code makes), its `expected` block is what the reference
 * verifier `@vacationrentalprotocol/vrp-verify` returns, and `vrp conformance vectors` over the
 * corpus writes a schema-valid report where every vector is as expected.
 * VRPKIT_WRITE_MINTED_VECTORS=1 (re)writes the files.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as reference from '@vacationrentalprotocol/vrp-verify';
import type { ConformanceReport } from '@vrpkit/conformance';
import { createJwsSigner } from '@vrpkit/core';
import { officialSchema } from '@vrpkit/protocol';
import { repoRoot, runVrpInProcess } from '@vrpkit/testkit/cli';
import {
  baseOffer,
  envelopeWithJws,
  FRESH_NOW,
  hs256WithPublicKey,
  mintEnvelope,
  rawJws,
  TEST_JWKS,
  TEST_KID,
  TEST_PRIVATE_JWK,
} from '@vrpkit/testkit/minted';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';

const DIR = join(repoRoot, 'examples/conformance/offer-vrpkit');

function minted(): Record<string, { description: string; clock: string; input: unknown }> {
  const offer = baseOffer();
  const payload = JSON.stringify(offer);
  const valid = mintEnvelope(offer);
  const [h, p, s] = (valid.signature.jws as string).split('.');
  const flipped = `${(s as string).slice(0, -2)}${(s as string).endsWith('AA') ? 'BA' : 'AA'}`;
  const edited = structuredClone(valid);
  edited.offer.price.public_total = 1;
  const otherKid = createJwsSigner(TEST_PRIVATE_JWK, 'not-published-kid', { typ: 'JWT' }).sign(payload);
  return {
    '01-valid-fresh-minted.json': { description: 'A correctly signed offer, evaluated while fresh.', clock: FRESH_NOW, input: valid },
    '02-valid-expired-minted.json': {
      description: 'The same offer evaluated after valid_until.',
      clock: '2026-06-02T12:10:00Z',
      input: valid,
    },
    '03-tampered-signature-minted.json': {
      description: 'The signature segment altered: must fail with signature_mismatch.',
      clock: FRESH_NOW,
      input: { ...valid, signature: { ...valid.signature, jws: `${h}.${p}.${flipped}` } },
    },
    '04-offer-copy-edited.json': {
      description: 'The unsigned offer copy differs from the signed payload.',
      clock: FRESH_NOW,
      input: edited,
    },
    '05-alg-none.json': {
      description: 'An unsigned JWS (alg none): a downgrade, never verified.',
      clock: FRESH_NOW,
      input: envelopeWithJws(rawJws({ alg: 'none', typ: 'JWT', kid: TEST_KID }, payload), offer),
    },
    '06-hs256-key-confusion.json': {
      description: 'HS256 keyed with the public key bytes: algorithm confusion, never verified.',
      clock: FRESH_NOW,
      input: envelopeWithJws(hs256WithPublicKey(payload), offer),
    },
    '07-kid-not-in-jwks-minted.json': {
      description: 'Signed by the published key under a kid the JWKS does not list.',
      clock: FRESH_NOW,
      input: envelopeWithJws(otherKid, offer, 'not-published-kid'),
    },
    '08-malformed-jws.json': {
      description: 'A signature that is not a compact JWS.',
      clock: FRESH_NOW,
      input: envelopeWithJws('not-a-jws', offer),
    },
  };
}

function asVector(name: string, v: { description: string; clock: string; input: unknown }) {
  const ref = reference.verifyOffer({ envelope: v.input as never, jwks: TEST_JWKS as reference.Jwks, now: v.clock });
  return {
    name: name.replace(/\.json$/, ''),
    description: v.description,
    clock: v.clock,
    jwks: TEST_JWKS,
    input: v.input,
    // The reference verifier's verdict, in the official vectors' expected shape.
    expected: { verified: ref.status === 'verified' || ref.status === 'expired', reason: ref.code ?? null, fresh: ref.fresh ?? null },
  };
}

describe('vrpkit minted offer vectors', () => {
  const built = Object.entries(minted()).map(([file, v]) => [file, `${JSON.stringify(asVector(file, v), null, 2)}\n`] as const);
  if (process.env.VRPKIT_WRITE_MINTED_VECTORS === '1') {
    mkdirSync(DIR, { recursive: true });
    for (const [file, text] of built) writeFileSync(join(DIR, file), text);
  }

  it('the published files are exactly what this code mints, expected = the reference verifier', () => {
    expect(
      readdirSync(DIR)
        .filter((f) => f.endsWith('.json'))
        .sort(),
    ).toEqual(built.map(([f]) => f).sort());
    for (const [file, text] of built) expect(readFileSync(join(DIR, file), 'utf8'), file).toBe(text);
  });

  it('vrp conformance vectors: every minted vector as expected, a schema-valid discriminating report', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'vrpkit-minted-report-')), 'report.json');
    const r = await runVrpInProcess([
      'conformance',
      'vectors',
      '--corpus',
      DIR,
      '--corpus-path',
      'examples/conformance/offer-vrpkit',
      '--report',
      out,
    ]);
    const report = JSON.parse(readFileSync(out, 'utf8')) as ConformanceReport;
    expect(new Ajv2020({ strict: false }).validate(officialSchema('conformanceReport'), report)).toBe(true);
    expect(report.results.filter((x) => x.outcome !== 'pass' && x.outcome !== 'reject-as-required')).toEqual([]);
    expect(report.results.filter((x) => x.outcome === 'pass').map((x) => x.vector.split('/').pop())).toEqual([
      '01-valid-fresh-minted.json',
      '02-valid-expired-minted.json',
    ]);
    expect(report.must_fail_controls).toMatchObject([
      { vector: 'examples/conformance/offer-vrpkit/03-tampered-signature-minted.json', observed: 'reject-as-required' },
    ]);
    expect(r.code).toBe(0);
    rmSync(join(out, '..'), { recursive: true, force: true });
  });
});
