/**
 * Key rotation and revocation end to end over real https (Core VRP v0.1 §3.1), with an injected clock:
 * rotation publishes the new key beside the old one and signs with it; the old key stays in
 * the JWKS until every offer it signed has passed `valid_until`, then drops out by itself;
 * revocation removes a key at once so its offers stop verifying. Private keys are 0600 files,
 * never served.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Jwks, safeToQuote, verifyOffer } from '@vacationrentalprotocol/vrp-verify';
import { listKeys, revokeKey, rotateKey, type ServedNode } from '@vrpkit/node';
import { JWKS_PATH, OFFER_ENDPOINT_PATH, type OfferEnvelope, type VrpJwks } from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'keys-node.example';
const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('keys');
const dataDir = join(tmp.dir, 'node');
const keysDir = join(dataDir, 'keys');
const K1 = `${DOMAIN}-2027-02-01-01`;
const K2 = `${DOMAIN}-2027-02-01-02`;
const K3 = `${DOMAIN}-2027-02-01-03`;
let node: ServedNode;
const internalErrors: unknown[] = [];
let client: NodeClient;

beforeAll(async () => {
  ({ node, client } = await serveTestNode(DOMAIN, dataDir, clock, { onError: (e) => internalErrors.push(e) }));
});

afterAll(() => closeTestNode({ node, client }, tmp));

async function jwksKids(): Promise<string[]> {
  const res = await client.get(JWKS_PATH);
  expect(res.text).not.toMatch(/"d"\s*:/);
  return (JSON.parse(res.text) as VrpJwks).keys.map((k) => k.kid);
}

async function fetchOffer(): Promise<OfferEnvelope> {
  const res = await client.get(`${OFFER_ENDPOINT_PATH}?check_in=2027-03-01&check_out=2027-03-05&guests=2`);
  expect(res.status).toBe(200);
  return JSON.parse(res.text) as OfferEnvelope;
}

/** Verify as an agent would right now: against the JWKS the node serves now, at the node's clock. */
async function verifyNow(envelope: OfferEnvelope) {
  const jwks = JSON.parse((await client.get(JWKS_PATH)).text) as VrpJwks;
  return verifyOffer({
    envelope: envelope as unknown as Record<string, unknown>,
    jwks: jwks as unknown as Jwks,
    now: new Date(clock.now()),
  });
}

const mode = (p: string) => statSync(p).mode & 0o777;

describe('key custody', () => {
  it('keeps the first private key in a 0600 file under a 0700 directory, never in the JWKS', async () => {
    expect(mode(keysDir)).toBe(0o700);
    // Beside the key, the secret the node's form tokens are made with (http/forms.ts), as private.
    expect(readdirSync(keysDir).sort()).toEqual([`${K1}.jwk`, 'form-token.secret'].sort());
    expect(mode(join(keysDir, `${K1}.jwk`))).toBe(0o600);
    expect(mode(join(keysDir, 'form-token.secret'))).toBe(0o600);
    const privateJwk = JSON.parse(readFileSync(join(keysDir, `${K1}.jwk`), 'utf8')) as { d: string };
    expect((await client.get(JWKS_PATH)).text).not.toContain(privateJwk.d);
    expect(await jwksKids()).toEqual([K1]);
  });
});

describe('rotation and revocation over https', () => {
  let offerK1: OfferEnvelope;
  let offerK2: OfferEnvelope;

  it('rotation publishes the new key beside the old one and signs new offers with it', async () => {
    offerK1 = await fetchOffer();
    expect(offerK1.signature.kid).toBe(K1);
    clock.advance(5 * 60_000); // 09:05; offerK1 is valid until 09:15
    const r = await rotateKey({ dataDir, clock });
    expect(r).toEqual({ kid: K2, activates_at: '2027-02-01T09:05:00.000Z', retired: [K1], retain_until: '2027-02-01T09:20:00.000Z' });
    expect(await jwksKids()).toEqual([K1, K2]);
    offerK2 = await fetchOffer();
    expect(offerK2.signature.kid).toBe(K2);
    expect(node.service.activeSigner().kid).toBe(K2);
    // The retired private key is gone: it never signs again.
    expect(existsSync(join(keysDir, `${K1}.jwk`))).toBe(false);
    expect(mode(join(keysDir, `${K2}.jwk`))).toBe(0o600);
  });

  it('an offer signed with the retired key still verifies until it expires', async () => {
    clock.advance(9 * 60_000); // 09:14
    const v = await verifyNow(offerK1);
    expect(v.status).toBe('verified');
    expect(safeToQuote(v)).toBe(true);
  });

  it('the retired key drops out of the JWKS by itself once every offer it signed has passed valid_until', async () => {
    clock.set('2027-02-01T09:19:59Z');
    expect(await jwksKids()).toEqual([K1, K2]);
    clock.set('2027-02-01T09:20:00Z');
    expect(await jwksKids()).toEqual([K2]);
    const keys = await listKeys({ dataDir, clock });
    expect(keys.map((k) => [k.kid, k.status, k.published])).toEqual([
      [K1, 'retired', false],
      [K2, 'active', true],
    ]);
  });

  it('revocation removes a key at once: its offers stop verifying, and a fresh key takes over signing', async () => {
    const before = await verifyNow(offerK2);
    expect(before.status).toBe('expired'); // 09:20 > 09:20 valid_until of offerK2 issued 09:05
    const fresh = await fetchOffer();
    expect(fresh.signature.kid).toBe(K2);
    expect((await verifyNow(fresh)).status).toBe('verified');

    const r = await revokeKey({ dataDir, kid: K2, clock });
    expect(r).toMatchObject({ kid: K2, new_active_kid: K3 });
    expect(await jwksKids()).toEqual([K3]);
    const after = await verifyNow(fresh);
    expect(after).toMatchObject({ status: 'unverifiable', code: 'kid_not_in_jwks' });
    expect(safeToQuote(after)).toBe(false);
    expect(existsSync(join(keysDir, `${K2}.jwk`))).toBe(false);

    const next = await fetchOffer();
    expect(next.signature.kid).toBe(K3);
    expect((await verifyNow(next)).status).toBe('verified');
  });

  it('refuses to revoke an unknown or already revoked key with stable codes, changing nothing', async () => {
    await expect(revokeKey({ dataDir, kid: 'nope', clock })).rejects.toMatchObject({ code: 'unknown_kid' });
    await expect(revokeKey({ dataDir, kid: K2, clock })).rejects.toMatchObject({ code: 'already_revoked' });
    expect(await jwksKids()).toEqual([K3]);
  });

  it('fails closed with an opaque 500 when the active private key is missing (no offer is signed, no path leaks)', async () => {
    const r = await rotateKey({ dataDir, clock });
    rmSync(join(keysDir, `${r.kid}.jwk`));
    const res = await client.get(`${OFFER_ENDPOINT_PATH}?check_in=2027-03-01&check_out=2027-03-05&guests=2`);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'internal_error', message: expect.any(String) } });
    expect(res.text).not.toContain(keysDir);
    expect(internalErrors).toEqual([expect.objectContaining({ code: 'private_key_missing' })]);
  });
});
