/**
 * End to end over real https: a vrpkit node (`serveNode`, dev CA) answers an MCP `tools/call`
 * from the official SDK `Client` (Streamable HTTP through the agent's hardened fetch); the
 * receipt in the result's `_meta` verifies fully through the production resolver (JWKS cache on
 * the issuer's domain) and binds to that call — and to no other.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  checkMcpCallReceipt,
  createHardenedFetch,
  createReceiptJwksResolver,
  createSignerJwksResolver,
  getOfferVia,
  type HardenedFetch,
  JwksCache,
  receiptFromCallResult,
} from '@vrpkit/agent';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { BOUND_TOOL_NAME, JWKS_PATH, MCP_ENDPOINT_PATH, offerRef, RECEIPT_META_KEY } from '@vrpkit/protocol';
import { mcpApp, serveSurface, type TestSurface, tool } from '@vrpkit/testkit/surfaces';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'receipts.example';
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const ARGS = { check_in: day(40), check_out: day(43), guests: 2 };

let dir: string;
let node: ServedNode;
let fetch: HardenedFetch;
let connectTo: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-receipt-e2e-'));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
  node = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0 });
  connectTo = [`${DOMAIN}:443:127.0.0.1:${node.port}`];
  fetch = createHardenedFetch({ connectTo, ca: node.caPem! });
});

afterAll(async () => {
  await fetch?.close();
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function callTool(args: Record<string, unknown>): Promise<CallToolResult> {
  const client = new Client({ name: 'vrpkit-receipt-e2e', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`https://${DOMAIN}${MCP_ENDPOINT_PATH}`), { fetch }));
  try {
    return (await client.callTool({ name: BOUND_TOOL_NAME, arguments: args })) as CallToolResult;
  } finally {
    await client.close();
  }
}

function check(result: CallToolResult, sentCall: { tool: string; arguments: unknown }) {
  const cache = new JwksCache({ fetch });
  return checkMcpCallReceipt({
    callResult: result,
    sentCall,
    envelope: result.structuredContent,
    surfaceHost: DOMAIN,
    resolveJwks: createReceiptJwksResolver({ issuerDomain: DOMAIN, cache }),
    resolveSignerJwks: createSignerJwksResolver({ fetch, cache }),
    now: Date.now(),
  });
}

describe('MCP receipt end to end (https, SDK client, serveNode)', () => {
  it('a call yields a receipt that verifies fully and binds to that call; the envelope stays unmodified', async () => {
    const result = await callTool(ARGS);
    expect(result.isError).toBeFalsy();
    const text = (result.content[0] as { text: string }).text;
    expect(JSON.parse(text)).toEqual(result.structuredContent); // the envelope, not wrapped or annotated
    expect(text).not.toContain(RECEIPT_META_KEY);
    const receipt = receiptFromCallResult(result) as { attestations: { layer: string; signature: string }[] };
    expect(receipt.attestations.map((a) => a.layer)).toEqual(['offer', 'transport']);
    expect(receipt.attestations[0]?.signature).toBe((result.structuredContent as { signature: { jws: string } }).signature.jws);

    const r = await check(result, { tool: BOUND_TOOL_NAME, arguments: ARGS });
    expect(r.receipt).toMatchObject({ receipt_valid: true, fully_verified: true, errors: [] });
    expect(r.transport).toMatchObject({ status: 'verified', code: null, bound: true, tool_matches: true, arguments_match: true });
    expect(r.offer).toMatchObject({ status: 'verified', signature_matches_envelope: true });
    expect(r).toMatchObject({ offer_ref_matches: true, issuer_matches: true, verified: true });
    expect(r.transport.assertion).toMatchObject({
      issuer: DOMAIN,
      tool: BOUND_TOOL_NAME,
      offer_ref: offerRef(DOMAIN, ARGS.check_in, ARGS.check_out),
    });
  });

  it('replaying the receipt against a different call does not bind', async () => {
    const result = await callTool(ARGS);
    const otherGuests = await check(result, { tool: BOUND_TOOL_NAME, arguments: { ...ARGS, guests: 3 } });
    expect(otherGuests.receipt?.fully_verified).toBe(true); // the signatures are fine …
    expect(otherGuests.transport).toMatchObject({ status: 'invalid', code: 'tool_call_mismatch', bound: false, arguments_match: false });
    expect(otherGuests.verified).toBe(false); // … but it is not this call's receipt
    const otherTool = await check(result, { tool: 'get_verified_stay_offer_v1', arguments: ARGS });
    expect(otherTool.transport).toMatchObject({ status: 'invalid', code: 'tool_call_mismatch', tool_matches: false });
    const otherDates = await check(result, { tool: BOUND_TOOL_NAME, arguments: { ...ARGS, check_out: day(44) } });
    expect(otherDates.verified).toBe(false);
  });

  it('a camelCase call binds once normalised, on both sides', async () => {
    const camel = { checkIn: ARGS.check_in, checkOut: ARGS.check_out, guests: ARGS.guests };
    const result = await callTool(camel);
    expect(result.isError).toBeFalsy();
    expect((await check(result, { tool: BOUND_TOOL_NAME, arguments: camel })).verified).toBe(true);
    expect((await check(result, { tool: BOUND_TOOL_NAME, arguments: ARGS })).verified).toBe(true);
  });

  it('an isError result carries no receipt, and the check reports it as unverifiable, not verified', async () => {
    const result = await callTool({ check_in: 'tomorrow', check_out: ARGS.check_out, guests: 2 });
    expect(result.isError).toBe(true);
    expect(result._meta?.[RECEIPT_META_KEY]).toBeUndefined();
    const r = await check(result, { tool: BOUND_TOOL_NAME, arguments: ARGS });
    expect(r.transport).toMatchObject({ status: 'unverifiable', code: 'receipt_missing' });
  });

  it("the agent's MCP surface report carries the layered receipt result", async () => {
    const report = await getOfferVia('mcp', `https://${DOMAIN}`, ARGS, { network: { connectTo, ca: node.caPem! } });
    expect(report.classification).toBe('node_tool');
    expect(report.receipt).toMatchObject({ verified: true, transport: { status: 'verified', bound: true }, offer: { status: 'verified' } });
  });
});

describe('receipt keys are pinned to the jwks_url of the node discovery document (Node Tool Binding v0.1 §6)', () => {
  // Same host, same keys, another URL: only the pin to the discovery document's jwks_url refuses it.
  const OTHER_SOURCE = `https://${DOMAIN}${JWKS_PATH}?from=receipt`;
  let relay: TestSurface;

  /** The node's own tools/call result, with every attestation's (unsigned) `source` pointed at OTHER_SOURCE. */
  async function resourcedCall(args: Record<string, unknown>): Promise<CallToolResult> {
    const result = await callTool(args);
    const receipt = receiptFromCallResult(result) as { attestations: { source: string }[] };
    for (const a of receipt.attestations) a.source = OTHER_SOURCE;
    return result;
  }

  beforeAll(async () => {
    const ca = { certPem: node.caPem!, keyPem: readFileSync(join(dir, 'node', 'tls', 'ca-key.pem'), 'utf8') };
    // A surface on a subdomain of the node (origin-bound) relaying the node's result with the rewritten sources.
    relay = await serveSurface(
      `mcp.${DOMAIN}`,
      ca,
      mcpApp([tool(BOUND_TOOL_NAME)], (_name, args) => resourcedCall(args)),
    );
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('a source on the issuer domain other than the discovery jwks_url resolves without the pin, and not with it', async () => {
    const result = await resourcedCall(ARGS);
    // The control: unpinned, the rewritten source serves the node's keys and everything verifies.
    expect((await check(result, { tool: BOUND_TOOL_NAME, arguments: ARGS })).verified).toBe(true);

    const report = await getOfferVia('mcp', `https://mcp.${DOMAIN}`, ARGS, {
      network: { connectTo: [...connectTo, relay.connectTo], ca: node.caPem! },
    });
    expect(report).toMatchObject({ classification: 'node_tool', safe_to_quote: true, verification: { status: 'verified' } });
    expect(report.receipt).toMatchObject({
      receipt_present: true,
      verified: false,
      offer: { status: 'unverifiable', code: 'key_unresolvable' },
      transport: { status: 'unverifiable', code: 'key_unresolvable', bound: false },
    });
  });
});
