/**
 * The documents a node serves match the protocol's zod schemas (`@vrpkit/protocol` owns the
 * shapes) as well as the official JSON Schemas: discovery (Core VRP v0.1 §2), JWKS (§3) and the
 * signed offer envelope (§4–§5) with its payload.
 */
import {
  DISCOVERY_PATH,
  DiscoveryDocumentSchema,
  JWKS_PATH,
  OFFER_ENDPOINT_PATH,
  OfferEnvelopeSchema,
  OfferPayloadSchema,
  VrpJwksSchema,
} from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, schemaErrors, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('shapes');
let served: Awaited<ReturnType<typeof serveTestNode>>;
let client: NodeClient;

beforeAll(async () => {
  served = await serveTestNode('shapes-node.example', `${tmp.dir}/node`, clock);
  client = served.client;
});

afterAll(() => closeTestNode(served ?? {}, tmp));

describe('node documents and the protocol schemas', () => {
  it('discovery, JWKS and the offer envelope parse with the zod schemas and validate against the official ones', async () => {
    const discovery = JSON.parse((await client.get(DISCOVERY_PATH)).text);
    const jwks = JSON.parse((await client.get(JWKS_PATH)).text);
    const envelope = JSON.parse((await client.get(`${OFFER_ENDPOINT_PATH}?check_in=2027-03-01&check_out=2027-03-05&guests=2`)).text);
    expect(DiscoveryDocumentSchema.safeParse(discovery).error).toBeUndefined();
    expect(VrpJwksSchema.safeParse(jwks).error).toBeUndefined();
    expect(OfferEnvelopeSchema.safeParse(envelope).error).toBeUndefined();
    expect(OfferPayloadSchema.strict().safeParse(envelope.offer).error).toBeUndefined();
    expect(schemaErrors('discovery', discovery)).toEqual([]);
    expect(schemaErrors('jwks', jwks)).toEqual([]);
    expect(schemaErrors('offer', envelope)).toEqual([]);
  });

  it('a payload the official schema refuses is refused by the zod schema too (a missing signed field)', async () => {
    const envelope = JSON.parse((await client.get(`${OFFER_ENDPOINT_PATH}?check_in=2027-03-01&check_out=2027-03-05&guests=2`)).text);
    const { agent_permission: _dropped, ...offer } = envelope.offer;
    expect(schemaErrors('offer', { ...envelope, offer })).not.toEqual([]);
    expect(OfferEnvelopeSchema.safeParse({ ...envelope, offer }).success).toBe(false);
  });
});
