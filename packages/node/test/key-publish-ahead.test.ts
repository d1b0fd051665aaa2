/**
 * `vrp node keys rotate --publish-ahead SECONDS` over real https (Core VRP v0.1 §3.1): the new key is in
 * the JWKS at once but the node keeps signing with the old key until the new one activates;
 * then offers carry the new kid. Agents whose JWKS cache was filled in between already hold the
 * new key when its first offer reaches them, so two rotations close together verify throughout.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Jwks, verifyOffer } from '@vacationrentalprotocol/vrp-verify';
import { listKeys, rotateKey, type ServedNode } from '@vrpkit/node';
import { JWKS_PATH, OFFER_ENDPOINT_PATH, type OfferEnvelope, type VrpJwks } from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'publish-ahead.example';
const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('publish-ahead');
const dataDir = join(tmp.dir, 'node');
const K1 = `${DOMAIN}-2027-02-01-01`;
const K2 = `${DOMAIN}-2027-02-01-02`;
let node: ServedNode;
let client: NodeClient;

beforeAll(async () => {
  ({ node, client } = await serveTestNode(DOMAIN, dataDir, clock));
});

afterAll(() => closeTestNode({ node, client }, tmp));

async function jwks(): Promise<VrpJwks> {
  return JSON.parse((await client.get(JWKS_PATH)).text) as VrpJwks;
}

/** A fresh offer, verified as an agent would with a JWKS fetched before the offer was signed. */
async function offerVerifiedWith(cached: VrpJwks): Promise<{ kid: string; status: string }> {
  const res = await client.get(`${OFFER_ENDPOINT_PATH}?check_in=2027-03-01&check_out=2027-03-05&guests=2`);
  expect(res.status).toBe(200);
  const envelope = JSON.parse(res.text) as OfferEnvelope;
  const v = await verifyOffer({
    envelope: envelope as unknown as Record<string, unknown>,
    jwks: cached as unknown as Jwks,
    now: new Date(clock.now()),
  });
  return { kid: envelope.signature.kid, status: v.status };
}

const keyStates = async () => (await listKeys({ dataDir, clock })).map((k) => [k.kid, k.status, k.published]);

describe('keys rotate --publish-ahead', () => {
  it('publishes the new key at once, lists it as pending, and keeps signing with the old kid until activation', async () => {
    const r = await rotateKey({ dataDir, clock, publishAheadSeconds: 60 });
    expect(r).toEqual({ kid: K2, activates_at: '2027-02-01T09:01:00.000Z', retired: [K1], retain_until: '2027-02-01T09:16:00.000Z' });
    const cached = await jwks();
    expect(cached.keys.map((k) => k.kid)).toEqual([K1, K2]);
    expect(await keyStates()).toEqual([
      [K1, 'active', true],
      [K2, 'pending', true],
    ]);
    expect(await offerVerifiedWith(cached)).toEqual({ kid: K1, status: 'verified' });
    // The old key still signs, so its private file is still there.
    expect(existsSync(join(dataDir, 'keys', `${K1}.jwk`))).toBe(true);
    clock.set('2027-02-01T09:00:59.999Z');
    expect(await offerVerifiedWith(cached)).toEqual({ kid: K1, status: 'verified' });
  });

  it('signs with the new kid from its activation on, and an agent holding the JWKS cached before then verifies it', async () => {
    const cachedBefore = await jwks();
    clock.set('2027-02-01T09:01:00Z');
    expect(await offerVerifiedWith(cachedBefore)).toEqual({ kid: K2, status: 'verified' });
    expect(node.service.activeSigner().kid).toBe(K2);
    expect(await keyStates()).toEqual([
      [K1, 'retired', true],
      [K2, 'active', true],
    ]);
    // The old key stays published until its last offer (signed before 09:01) expires.
    clock.set('2027-02-01T09:16:00Z');
    expect((await jwks()).keys.map((k) => k.kid)).toEqual([K2]);
  });

  it('the next key operation deletes the retired private key; out-of-range publish-ahead is refused, changing nothing', async () => {
    await expect(rotateKey({ dataDir, clock, publishAheadSeconds: -1 })).rejects.toMatchObject({ code: 'invalid_publish_ahead' });
    await expect(rotateKey({ dataDir, clock, publishAheadSeconds: 86_401 })).rejects.toMatchObject({
      code: 'invalid_publish_ahead',
    });
    expect((await listKeys({ dataDir, clock })).map((k) => k.kid)).toEqual([K1, K2]);
    await rotateKey({ dataDir, clock, publishAheadSeconds: 30 });
    expect(existsSync(join(dataDir, 'keys', `${K1}.jwk`))).toBe(false);
    expect(existsSync(join(dataDir, 'keys', `${K2}.jwk`))).toBe(true);
  });
});
