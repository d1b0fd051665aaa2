/**
 * Both MCP revisions on `/mcp`, a node and a platform tenant alike (issue 32, acceptance): the
 * official SDK v2 client pinned to 2026-07-28 and the official SDK v1 client on 2025-11-25 each
 * list and call `get_verified_stay_offer`, and the agent verifies the offer and the receipt of
 * each call. The agent's own client negotiates: 2026-07-28 with a node that offers it, 2025-11-25
 * with an old node (a relay on the SDK v1 server, the way every node answered before). Real
 * servers over https (dev CAs), real clients through the agent's hardened fetch.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  checkMcpCallReceipt,
  createHardenedFetch,
  createReceiptJwksResolver,
  createSignerJwksResolver,
  getOfferVia,
  type HardenedFetch,
  JwksCache,
  verifyEnvelopeFromNode,
} from '@vrpkit/agent';
import { initNode, type ServedNode, sampleProperty, serveNode } from '@vrpkit/node';
import {
  generateMasterKeyText,
  OPERATOR_TOOL_NAME,
  PlatformStore,
  parseMasterKey,
  type ServedPlatform,
  servePlatform,
} from '@vrpkit/platform';
import { BOUND_TOOL_NAME, MCP_ENDPOINT_PATH, RECEIPT_META_KEY } from '@vrpkit/protocol';
import { mcpApp, serveSurface, type TestSurface, tool } from '@vrpkit/testkit/surfaces';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const NODE = 'rev-node.example';
const TENANT = 'rev-tenant.example';
const OPERATOR = 'platform.example';
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const ARGS = { check_in: day(30), check_out: day(33), guests: 2 };

const dir = mkdtempSync(join(tmpdir(), 'vrpkit-mcp-revisions-'));
let node: ServedNode;
let store: PlatformStore;
let platform: ServedPlatform;
let oldNode: TestSurface;
/** Per target domain, a fetch that reaches it (the node and the platform each have their own dev CA). */
const fetches: Record<string, HardenedFetch> = {};

beforeAll(async () => {
  await initNode({ domain: NODE, dataDir: join(dir, 'node') });
  node = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0 });
  const master = parseMasterKey(generateMasterKeyText());
  store = await PlatformStore.open(`sqlite:${join(dir, 'p.sqlite')}`);
  await store.init(master, OPERATOR);
  await store.addTenants(master, [{ domain: TENANT, property: sampleProperty(Date.now()) }]);
  platform = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(dir, 'dev-tls') } });
  // The old node: a 2025-only MCP server (SDK v1) on the node's own domain, answering with what the node answered a 2025 client.
  const ca = { certPem: node.caPem as string, keyPem: readFileSync(join(dir, 'node', 'tls', 'ca-key.pem'), 'utf8') };
  oldNode = await serveSurface(
    `old.${NODE}`,
    ca,
    mcpApp([tool(BOUND_TOOL_NAME)], (_name, args) => callV1(NODE, args)),
  );
  fetches[NODE] = createHardenedFetch({ connectTo: [`${NODE}:443:127.0.0.1:${node.port}`, oldNode.connectTo], ca: node.caPem as string });
  fetches[TENANT] = createHardenedFetch({
    connectTo: [TENANT, OPERATOR].map((h) => `${h}:443:127.0.0.1:${platform.port}`),
    ca: platform.caPem as string,
  });
  fetches[OPERATOR] = fetches[TENANT];
});

afterAll(async () => {
  for (const f of new Set(Object.values(fetches))) await f.close();
  await oldNode?.close();
  await platform?.close();
  await store?.close();
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

const endpoint = (domain: string) => new URL(`https://${domain}${MCP_ENDPOINT_PATH}`);

/** The SDK v1 client (2025-11-25, its latest): tools listed and the call's result. */
async function callV1(domain: string, args: Record<string, unknown>) {
  const client = new ClientV1({ name: 'rev-v1', version: '1.0.0' });
  await client.connect(new TransportV1(endpoint(domain), { fetch: fetches[domain] }));
  try {
    return (await client.callTool({ name: BOUND_TOOL_NAME, arguments: args })) as CallToolResult;
  } finally {
    await client.close();
  }
}

function checkReceipt(domain: string, result: CallToolResult) {
  const fetch = fetches[domain] as HardenedFetch;
  const cache = new JwksCache({ fetch });
  return checkMcpCallReceipt({
    callResult: result,
    sentCall: { tool: BOUND_TOOL_NAME, arguments: ARGS },
    envelope: result.structuredContent,
    surfaceHost: domain,
    resolveJwks: createReceiptJwksResolver({ issuerDomain: domain, cache }),
    resolveSignerJwks: createSignerJwksResolver({ fetch, cache }),
    now: Date.now(),
  });
}

describe.each([
  ['a node', NODE],
  ['a platform tenant', TENANT],
])('MCP on %s', (_label, domain) => {
  it('an SDK v2 client pinned to 2026-07-28 lists and calls the tool; the receipt sits beside serverInfo and verifies', async () => {
    const client = new ClientV2({ name: 'rev-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new TransportV2(endpoint(domain), { fetch: fetches[domain] }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([BOUND_TOOL_NAME]);
      const result = (await client.callTool({ name: BOUND_TOOL_NAME, arguments: ARGS })) as unknown as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result._meta?.[RECEIPT_META_KEY]).toBeDefined();
      const check = await checkReceipt(domain, result);
      expect(check).toMatchObject({ receipt_present: true, verified: true });
    } finally {
      await client.close();
    }
  });

  it('an SDK v1 client on 2025-11-25 lists and calls the tool; the receipt verifies', async () => {
    const client = new ClientV1({ name: 'rev-v1', version: '1.0.0' });
    const transport = new TransportV1(endpoint(domain), { fetch: fetches[domain] });
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe('2025-11-25');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([BOUND_TOOL_NAME]);
      const result = (await client.callTool({ name: BOUND_TOOL_NAME, arguments: ARGS })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const check = await checkReceipt(domain, result);
      expect(check).toMatchObject({ receipt_present: true, verified: true });
    } finally {
      await client.close();
    }
  });

  it('the agent speaks 2026-07-28 to it and verifies the offer and the receipt', async () => {
    const report = await getOfferVia('mcp', `https://${domain}`, ARGS, { fetch: fetches[domain] });
    expect(report).toMatchObject({
      mcp_protocol_version: '2026-07-28',
      classification: 'node_tool',
      safe_to_quote: true,
      verification: { status: 'verified' },
      receipt: { receipt_present: true, verified: true },
    });
  });
});

it('the agent falls back to 2025-11-25 with an old node and still verifies the offer and the receipt', async () => {
  const report = await getOfferVia('mcp', `https://old.${NODE}`, ARGS, { fetch: fetches[NODE] });
  expect(report).toMatchObject({
    mcp_protocol_version: '2025-11-25',
    classification: 'node_tool',
    safe_to_quote: true,
    verification: { status: 'verified' },
    receipt: { receipt_present: true, verified: true },
  });
});

describe('an unknown tool is refused with one "MCP error -32602" prefix (issue 32 item 7, regression)', () => {
  /** The error message a client shows for a call of an unlisted tool. */
  async function refusal(client: {
    callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
    close(): Promise<void>;
  }) {
    try {
      return await client.callTool({ name: 'nope', arguments: {} }).then(
        () => 'no error',
        (e: Error) => e.message,
      );
    } finally {
      await client.close();
    }
  }
  const once = (message: string) => {
    expect(message).toContain('unknown tool: nope');
    expect(message.match(/MCP error -32602/g)?.length ?? 0).toBeLessThanOrEqual(1);
  };

  it('on 2025-11-25 (SDK v1 client)', async () => {
    const v1 = new ClientV1({ name: 'rev-v1', version: '1.0.0' });
    await v1.connect(new TransportV1(endpoint(NODE), { fetch: fetches[NODE] }));
    once(await refusal(v1));
  });

  it('on 2026-07-28 (SDK v2 client)', async () => {
    const v2 = new ClientV2({ name: 'rev-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await v2.connect(new TransportV2(endpoint(NODE), { fetch: fetches[NODE] }));
    once(await refusal(v2));
  });
});

/**
 * The platform's operator surface (Node Tool Binding v0.1 §7, §14) on SDK v2, both revisions
 * (issue 32 item 1): each client lists only the operator-namespaced tool, the relayed envelope
 * verifies against the tenant's own JWKS, and the arguments reach the offer parser as sent.
 */
describe.each([
  ['an SDK v2 client pinned to 2026-07-28', '2026-07-28'],
  ['an SDK v1 client on 2025-11-25', '2025-11-25'],
] as const)('the operator endpoint with %s', (_label, revision) => {
  type AnyClient = {
    listTools(): Promise<{ tools: { name: string }[]; ttlMs?: number; cacheScope?: string }>;
    callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
    close(): Promise<void>;
  };
  let client: AnyClient;
  let negotiated: () => string | undefined;
  beforeAll(async () => {
    if (revision === '2026-07-28') {
      const v2 = new ClientV2({ name: 'op-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await v2.connect(new TransportV2(endpoint(OPERATOR), { fetch: fetches[OPERATOR] }));
      negotiated = () => v2.getNegotiatedProtocolVersion();
      client = v2 as unknown as AnyClient;
    } else {
      const v1 = new ClientV1({ name: 'op-v1', version: '1.0.0' });
      const transport = new TransportV1(endpoint(OPERATOR), { fetch: fetches[OPERATOR] });
      await v1.connect(transport);
      negotiated = () => transport.protocolVersion;
      client = v1 as unknown as AnyClient;
    }
  });
  afterAll(async () => {
    await client?.close();
  });

  it('lists only the operator tool and relays the tenant’s envelope, which verifies against the tenant’s JWKS', async () => {
    expect(negotiated()).toBe(revision);
    const list = await client.listTools();
    // §7: the operator never lists the bound name.
    expect(list.tools.map((t) => t.name)).toEqual([OPERATOR_TOOL_NAME]);
    // The same one tool for every client: a shared cache may keep the 2026-07-28 list for five minutes.
    if (revision === '2026-07-28') expect(list).toMatchObject({ ttlMs: 300_000, cacheScope: 'public' });
    const result = (await client.callTool({ name: OPERATOR_TOOL_NAME, arguments: { domain: TENANT, ...ARGS } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const text = (result.content[0] as { text: string }).text;
    expect(result.structuredContent).toEqual(JSON.parse(text));
    const fetch = fetches[OPERATOR] as HardenedFetch;
    const verdict = await verifyEnvelopeFromNode(JSON.parse(text), ARGS, { fetch, jwksCache: new JwksCache({ fetch }) });
    expect(verdict).toMatchObject({ canonical_domain: TENANT, verification: { status: 'verified' } });
  });

  it('refuses an unknown tenant, a string guests and an own "__proto__" argument; an unknown tool has one error prefix', async () => {
    const refused = async (args: Record<string, unknown>) => {
      const r = (await client.callTool({ name: OPERATOR_TOOL_NAME, arguments: args })) as CallToolResult;
      expect(r.isError).toBe(true);
      return (r.content[0] as { text: string }).text;
    };
    expect(await refused({ domain: 'nobody.example', ...ARGS })).toMatch(/^error\[unknown_tenant\]/);
    expect(await refused({ domain: TENANT, ...ARGS, guests: '2' })).toMatch(/^error\[invalid_guests\]/);
    // Parsed with JSON.parse, so "__proto__" is an own member, as it is on the wire.
    const proto = JSON.parse(
      `{"domain":"${TENANT}","check_in":"${ARGS.check_in}","check_out":"${ARGS.check_out}","guests":2,"__proto__":{"x":1}}`,
    );
    expect(await refused(proto)).toMatch(/^error\[unknown_parameter\]/);
    const message = await client.callTool({ name: 'nope', arguments: {} }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(message).toContain('unknown tool: nope');
    expect(message.match(/MCP error -32602/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
});

it('the agent speaks 2026-07-28 to the operator endpoint and classifies it as an operator tool', async () => {
  const report = await getOfferVia('mcp', `https://${OPERATOR}`, ARGS, { fetch: fetches[OPERATOR] });
  expect(report.mcp_protocol_version).toBe('2026-07-28');
  expect(report.classification).not.toBe('node_tool');
  expect(report.safe_to_quote).toBe(false);
});
