import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHardenedFetch, verifyReceipt } from '@vrpkit/agent';
import { decodeJwsPayload, fixedClock, parseCompactJws, toUtcSecond } from '@vrpkit/core';
import {
  createOfferService,
  initNode,
  issueMcpReceipt,
  NodeStore,
  type OfferService,
  offerFor,
  rotateKey,
  type ServedNode,
  serveNode,
  storeTargetFor,
} from '@vrpkit/node';
import { BOUND_TOOL_NAME, hashArguments, type OfferEnvelope, officialSchema, readMcpTransportAssertion } from '@vrpkit/protocol';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { compactVerify, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'villa.example';
const T0 = Date.parse('2026-06-24T12:00:07.250Z');
const ARGS = { check_in: '2026-09-02', check_out: '2026-09-05', guests: 4 };

let dir: string;
let dataDir: string;
let node: ServedNode;
let service: OfferService;
let envelope: OfferEnvelope;
let jwks: { keys: JWK[] };
/** The node's current instant (epoch ms), moved by the rotation test. */
let t = T0;

/** The node's published JWKS at its current clock, read over its real https origin. */
async function publishedJwks(): Promise<{ keys: JWK[] }> {
  const fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem! });
  try {
    return (await (await fetch(service.jwksUrl)).json()) as { keys: JWK[] };
  } finally {
    await fetch.close();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-receipt-node-'));
  dataDir = join(dir, 'node');
  await initNode({ domain: DOMAIN, dataDir, clock: fixedClock(T0) });
  node = await serveNode({ dataDir, dev: true, port: 0, clock: { now: () => t } });
  service = node.service;
  const outcome = await offerFor(service, ARGS, { fresh: true });
  if (!outcome.ok) throw new Error(`offer failed: ${outcome.error.code}`);
  envelope = outcome.envelope;
  jwks = await publishedJwks();
});

afterAll(async () => {
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

function transportAssertion(receipt: ReturnType<typeof issueMcpReceipt>) {
  const parsed = parseCompactJws(receipt.attestations[1]?.signature);
  if (!parsed.ok) throw new Error('transport signature is not a compact JWS');
  return { header: parsed.jws.header, assertion: readMcpTransportAssertion(JSON.parse(decodeJwsPayload(parsed.jws.payloadSegment)!)) };
}

describe('issueMcpReceipt (node side, real key ring)', () => {
  it('assembles the receipt in the vectors shape and validates against the official receipt schema', () => {
    const receipt = issueMcpReceipt({ service, tool: BOUND_TOOL_NAME, arguments: ARGS, envelope });
    const ref = 'offer:villa.example:2026-09-02/05';
    const lifetimeMs = Date.parse(envelope.offer.valid_until) - Date.parse(envelope.offer.generated_at);
    expect(lifetimeMs).toBeGreaterThan(0);
    const source = 'https://villa.example/.well-known/jwks.json';
    expect(JSON.stringify(receipt)).toBe(
      JSON.stringify({
        vrp_receipt_version: '1.0',
        subject: { property: DOMAIN, stay: '2026-09-02/2026-09-05' },
        issuer: { node: DOMAIN },
        attestations: [
          {
            layer: 'offer',
            source,
            signature: envelope.signature.jws,
            ref,
            valid_from: envelope.offer.generated_at,
            valid_until: envelope.offer.valid_until,
          },
          {
            layer: 'transport',
            source,
            signature: receipt.attestations[1]?.signature,
            ref,
            valid_from: '2026-06-24T12:00:07Z',
            valid_until: toUtcSecond(Date.parse('2026-06-24T12:00:07Z') + lifetimeMs),
          },
        ],
      }),
    );
    const ajv = new Ajv({ strict: false });
    addFormats.default(ajv);
    expect(ajv.validate(officialSchema('receipt') as object, receipt), ajv.errorsText()).toBe(true);
  });

  it('signs the profile assertion with the offer key, and the receipt verifies fully against the node JWKS', async () => {
    const receipt = issueMcpReceipt({ service, tool: BOUND_TOOL_NAME, arguments: ARGS, envelope });
    const { header, assertion } = transportAssertion(receipt);
    expect(header).toEqual({ alg: 'EdDSA', typ: 'JWT', kid: envelope.signature.kid });
    expect(JSON.stringify(assertion)).toBe(
      JSON.stringify({
        vrp_mcp_profile_version: '1.0',
        type: 'vrp.mcp.transport.1',
        tool: BOUND_TOOL_NAME,
        arguments_sha256: hashArguments(ARGS),
        served_at: '2026-06-24T12:00:07Z',
        issuer: DOMAIN,
        offer_ref: 'offer:villa.example:2026-09-02/05',
      }),
    );
    // Cross-check the transport JWS with an independent implementation (jose).
    const jwk = jwks.keys.find((k) => k.kid === envelope.signature.kid)!;
    await expect(compactVerify(receipt.attestations[1]!.signature, await importJWK(jwk, 'EdDSA'))).resolves.toBeTruthy();

    const result = await verifyReceipt(receipt, { resolveJwks: (source) => (source === service.jwksUrl ? jwks : null), now: T0 });
    expect(result).toEqual({
      receipt_valid: true,
      fully_verified: true,
      errors: [],
      attestations: [
        { index: 0, layer: 'offer', status: 'verified', error: null, kid: envelope.signature.kid },
        { index: 1, layer: 'transport', status: 'verified', error: null, kid: envelope.signature.kid },
      ],
    });
  });

  it('both windows stay verifiable across a key rotation: the rotated key is published until they end', async () => {
    const receipt = issueMcpReceipt({ service, tool: BOUND_TOOL_NAME, arguments: ARGS, envelope });
    const oldKid = envelope.signature.kid;
    await rotateKey({ dataDir, clock: fixedClock(T0) });
    const windowEnd = Math.max(...receipt.attestations.map((a) => Date.parse(a.valid_until as string)));
    try {
      t = windowEnd; // inclusive bound: still inside both windows
      const atEnd = await publishedJwks();
      expect(atEnd.keys.map((k) => k.kid)).toContain(oldKid);
      const r = await verifyReceipt(receipt, { resolveJwks: () => atEnd, now: t });
      expect(r.attestations.map((a) => [a.status, a.kid])).toEqual([
        ['verified', oldKid],
        ['verified', oldKid],
      ]);
      t = windowEnd + 1000; // both windows over, and the rotated key has left the JWKS
      const after = await publishedJwks();
      expect(after.keys.map((k) => k.kid)).not.toContain(oldKid);
      expect((await verifyReceipt(receipt, { resolveJwks: () => after, now: t })).fully_verified).toBe(false);
      // The node now signs transport assertions with the new key.
      const fresh = issueMcpReceipt({ service, tool: BOUND_TOOL_NAME, arguments: ARGS, envelope });
      expect(transportAssertion(fresh).header.kid).not.toBe(oldKid);
    } finally {
      t = T0;
    }
  });

  it('hashes the arguments as carried after alias normalisation: camelCase = snake_case, language included, session id kept', () => {
    const camel = issueMcpReceipt({
      service,
      tool: BOUND_TOOL_NAME,
      arguments: { checkIn: '2026-09-02', checkOut: '2026-09-05', guests: 4 },
      envelope,
    });
    expect(transportAssertion(camel).assertion?.arguments_sha256).toBe(hashArguments(ARGS));
    const withLanguage = issueMcpReceipt({
      service,
      tool: BOUND_TOOL_NAME,
      arguments: { ...ARGS, language: 'sv' },
      envelope,
      sessionId: 's-1',
    });
    const a = transportAssertion(withLanguage).assertion;
    expect(a?.arguments_sha256).toBe(hashArguments({ ...ARGS, language: 'sv' }));
    expect(a?.arguments_sha256).not.toBe(hashArguments(ARGS));
    expect(a?.session_id).toBe('s-1');
  });

  it('an assertion repeated within its second gets the same signature without signing again; the next second or other arguments sign anew', async () => {
    // A second service on the same store and keys, counting every Ed25519 signature it makes.
    let now = T0;
    let signatures = 0;
    const store = await NodeStore.open(storeTargetFor(dataDir));
    try {
      const counted = await createOfferService({
        store,
        keys: join(dataDir, 'keys'),
        clock: { now: () => now },
        onSignature: () => {
          signatures++;
        },
      });
      const offer = await offerFor(counted, ARGS, { fresh: true });
      if (!offer.ok) throw new Error(offer.error.code);
      const issue = (args: unknown) =>
        issueMcpReceipt({ service: counted, tool: BOUND_TOOL_NAME, arguments: args, envelope: offer.envelope });
      signatures = 0;
      const first = issue(ARGS);
      // camelCase keys normalise to the same canonical arguments: the same assertion (MCP composition profile, argument key casing).
      const again = issue({ checkIn: ARGS.check_in, checkOut: ARGS.check_out, guests: ARGS.guests });
      expect(signatures).toBe(1);
      expect(JSON.stringify(again)).toBe(JSON.stringify(first));
      const other = issue({ ...ARGS, language: 'sv' });
      expect(signatures).toBe(2);
      expect(transportAssertion(other).assertion?.arguments_sha256).toBe(hashArguments({ ...ARGS, language: 'sv' }));
      now = T0 + 1000;
      const next = issue(ARGS);
      expect(signatures).toBe(3);
      expect(transportAssertion(next).assertion?.served_at).toBe(toUtcSecond(T0 + 1000));
      // A rotation within the second: the new key signs the same assertion afresh (the memo is per signer).
      await rotateKey({ dataDir, clock: fixedClock(now) });
      await counted.jwks(); // the key ring follows the store
      const rotated = issue(ARGS);
      expect(signatures).toBe(4);
      expect(transportAssertion(rotated).header.kid).not.toBe(transportAssertion(next).header.kid);
      expect(transportAssertion(rotated).assertion).toEqual(transportAssertion(next).assertion);
      // A remembered signature is the one signing would give: every receipt verifies against the node's JWKS.
      const published = await publishedJwks();
      for (const receipt of [first, again, other, next, rotated]) {
        const r = await verifyReceipt(receipt, { resolveJwks: (source) => (source === counted.jwksUrl ? published : null), now });
        expect(r.fully_verified).toBe(true);
      }
    } finally {
      await store.close();
    }
  });

  it('refuses an envelope that is not this node’s offer', () => {
    const foreign = { ...envelope, offer: { ...envelope.offer, canonical_domain: 'other.example' } };
    expect(() => issueMcpReceipt({ service, tool: BOUND_TOOL_NAME, arguments: ARGS, envelope: foreign })).toThrow(
      expect.objectContaining({ code: 'receipt_unbuildable' }),
    );
  });
});
