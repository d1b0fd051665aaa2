/**
 * The MCP `tools/call` answer is written from the signed offer's bytes (surfaces/mcp.ts): it
 * must be, byte for byte, what the official SDK writes for the same call, and its envelope the
 * offer endpoint's exact body (Node Tool Binding v0.1 §5: the envelope unmodified). A real node
 * on a fixed clock (so the per-call receipt signs the same `served_at` on every path), over TLS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { toUtcSecond } from '@vrpkit/core';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { BOUND_TOOL_NAME, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH, RECEIPT_META_KEY } from '@vrpkit/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'mcp-bytes-node.example';
const ORIGIN = `https://${DOMAIN}`;
const NOW = Date.now();
const day = (offset: number) => new Date(NOW + offset * 86_400_000).toISOString().slice(0, 10);

let dir: string;
let cached: ServedNode;
let fresh: ServedNode;
let fetchCached: HardenedFetch;
let fetchFresh: HardenedFetch;
/** The nodes' instant: fixed, so the per-call receipt signs the same `served_at` on every path, unless a test moves it. */
let now = NOW;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-mcp-bytes-'));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
  const clock = { now: () => now };
  cached = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0, clock });
  fresh = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0, clock, offerCacheMaxAgeSeconds: 0 });
  const to = (n: ServedNode) => createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${n.port}`], ca: n.caPem as string });
  fetchCached = to(cached);
  fetchFresh = to(fresh);
});

afterAll(async () => {
  await fetchCached?.close();
  await fetchFresh?.close();
  await cached?.close();
  await fresh?.close();
  rmSync(dir, { recursive: true, force: true });
});

const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};
/** MCP 2026-07-28: the standard request headers name what the body names, and `_meta` carries the per-request envelope. */
const MODERN_HEADERS = { ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': BOUND_TOOL_NAME };
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'mcp-bytes-test', version: '1.0.0' },
};
/**
 * Per revision: the headers, the `_meta` of a plain call (the direct path answers it) and of the
 * same call kept on the SDK's own path (one more `_meta` key, which does not change the result).
 */
const REVISIONS = [
  { revision: '2025-06-18', headers: MCP_HEADERS, plainMeta: {}, sdkMeta: { _meta: {} } },
  {
    revision: '2026-07-28',
    headers: MODERN_HEADERS,
    plainMeta: { _meta: ENVELOPE },
    sdkMeta: { _meta: { ...ENVELOPE, 'vrpkit.test/sdk-path': true } },
  },
] as const;

/** POST one JSON-RPC body to /mcp; the raw answer. */
async function post(f: HardenedFetch, body: unknown, headers: Record<string, string> = MCP_HEADERS) {
  const res = await f(`${ORIGIN}${MCP_ENDPOINT_PATH}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

const call = (id: number | string, args: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: BOUND_TOOL_NAME, arguments: args, ...extra },
});

describe.each(REVISIONS)('MCP tools/call bytes on $revision', ({ revision, headers, plainMeta, sdkMeta }) => {
  const stays = [
    { check_in: day(30), check_out: day(33), guests: 2 },
    { check_in: day(40), check_out: day(47), guests: 1, language: 'sv' },
    // Aliases, a signed negative (too many guests) and a refusal (no guests) take the same path.
    { checkIn: day(50), checkOut: day(52), guests: 3 },
    { check_in: day(60), check_out: day(63), guests: 99 },
    { check_in: day(60), check_out: day(63) },
  ];

  it.each(stays.flatMap((args, i) => [[i, args, 'cache on'] as const, [i, args, 'cache off'] as const]))(
    'stay %i (%o, %s): the answer equals the SDK-written one byte for byte',
    async (i, args, mode) => {
      const f = mode === 'cache on' ? fetchCached : fetchFresh;
      const id = i % 2 ? `call-"${i}"` : i;
      // `sdkMeta` on the call keeps it on the SDK's own path; it does not change the result.
      const sdk = await post(f, call(id, args, sdkMeta), headers);
      const direct = await post(f, call(id, args, plainMeta), headers);
      expect(direct.status).toBe(200);
      expect(direct.type).toBe(sdk.type);
      if (mode === 'cache on') {
        expect(direct.text).toBe(sdk.text);
      } else {
        // Without the cache every call signs a new offer (a new offer id, so new signatures): equal once those are masked.
        const mask = (t: string) =>
          t.replace(/ey[\w-]+\.[\w-]+\.[\w-]+/g, '<jws>').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
        expect(mask(direct.text)).toBe(mask(sdk.text));
      }
    },
  );

  it('the envelope in text and structuredContent is the offer endpoint body, byte for byte (cache on)', async () => {
    const args = { check_in: day(30), check_out: day(33), guests: 2 };
    const endpoint = await fetchCached(`${ORIGIN}${OFFER_ENDPOINT_PATH}?check_in=${args.check_in}&check_out=${args.check_out}&guests=2`);
    const endpointBody = await endpoint.text();
    const { text } = await post(fetchCached, call(1, args, plainMeta), headers);
    const parsed = JSON.parse(text) as { result: { content: { text: string }[]; _meta: Record<string, unknown> } };
    expect(parsed.result.content[0]?.text).toBe(endpointBody);
    // The result ends after the envelope (2025) or after the 2026 encoder's `resultType`.
    expect(text).toContain(`"structuredContent":${endpointBody}${revision === '2026-07-28' ? ',"resultType":"complete"}' : '}'}`);
    expect(parsed.result._meta[RECEIPT_META_KEY]).toBeDefined();
  });

  it('a call repeated in the same second gets the same receipt; the next second gets its own, still the SDK’s bytes', async () => {
    const args = { check_in: day(30), check_out: day(33), guests: 2 };
    const receiptOf = (text: string) => JSON.stringify((JSON.parse(text) as { result: { _meta: unknown } }).result._meta);
    const servedAt = (text: string) =>
      (JSON.parse(text) as { result: { _meta: Record<string, { attestations: { valid_from: string }[] }> } }).result._meta[RECEIPT_META_KEY]
        ?.attestations[1]?.valid_from;
    const first = await post(fetchCached, call(1, args, plainMeta), headers);
    const again = await post(fetchCached, call(2, args, plainMeta), headers);
    // The same arguments sent in another member order: the same canonical arguments, so the same assertion.
    const reordered = await post(
      fetchCached,
      call(3, { guests: 2, check_out: args.check_out, check_in: args.check_in }, plainMeta),
      headers,
    );
    expect(again.text).toBe(first.text.replace('"id":1}', '"id":2}'));
    expect(receiptOf(reordered.text)).toBe(receiptOf(first.text));
    try {
      now = NOW + 1000;
      const next = await post(fetchCached, call(4, args, plainMeta), headers);
      expect(servedAt(next.text)).toBe(toUtcSecond(NOW + 1000));
      expect(receiptOf(next.text)).not.toBe(receiptOf(first.text));
      const sdk = await post(fetchCached, call(4, args, sdkMeta), headers);
      expect(next.text).toBe(sdk.text);
    } finally {
      now = NOW;
    }
  });

  it.runIf(revision === '2026-07-28')(
    'the receipt sits beside the SDK’s serverInfo in `_meta`, and `resultType` closes the result',
    async () => {
      const args = { check_in: day(30), check_out: day(33), guests: 2 };
      const { text } = await post(fetchCached, call(1, args, plainMeta), headers);
      const { result } = JSON.parse(text) as { result: { _meta: Record<string, unknown>; resultType: string } };
      expect(Object.keys(result._meta)).toEqual([RECEIPT_META_KEY, 'io.modelcontextprotocol/serverInfo']);
      expect(result.resultType).toBe('complete');
    },
  );

  it.runIf(revision === '2026-07-28')(
    'a call the 2026-07-28 rules refuse is the SDK’s refusal, never an offer: headers not matching the body, no version header, a malformed envelope',
    async () => {
      const args = { check_in: day(30), check_out: day(33), guests: 2 };
      const { 'mcp-protocol-version': _v, ...noVersion } = MODERN_HEADERS;
      const cases = [
        post(fetchCached, call(1, args, plainMeta), { ...MODERN_HEADERS, 'mcp-name': 'another_tool' }),
        post(fetchCached, call(2, args, plainMeta), { ...MODERN_HEADERS, 'mcp-method': 'tools/list' }),
        post(fetchCached, call(3, args, plainMeta), noVersion),
        post(fetchCached, call(4, args, { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': 'all' } }), headers),
        post(fetchCached, call(5, args, { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } }), headers),
      ];
      for (const answer of await Promise.all(cases)) {
        expect(answer.text).not.toContain('signed_verified_stay_offer');
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
      }
    },
  );

  it('an own "__proto__" member in the arguments is refused on the SDK’s path too (the handler reads the arguments as sent)', async () => {
    const args = JSON.parse(`{"check_in":"${day(30)}","check_out":"${day(33)}","guests":2,"__proto__":{"guests":3}}`) as unknown;
    for (const meta of [plainMeta, sdkMeta]) {
      const { text } = await post(fetchCached, call(1, args, meta), headers);
      expect(text).toContain('error[unknown_parameter]');
      expect(text).not.toContain('signed_verified_stay_offer');
    }
  });

  it.runIf(revision === '2025-06-18')(
    'a batch (where MCP 2025-03-26 allows one), a version the SDK does not support and a missing Accept are still the SDK’s answers',
    async () => {
      const args = { check_in: day(30), check_out: day(33), guests: 2 };
      // From MCP 2025-06-18 on a batch is refused before the SDK (jsonrpc-refusals.test.ts).
      const batch = await post(fetchCached, [call(1, args), call(2, args)], { ...MCP_HEADERS, 'mcp-protocol-version': '2025-03-26' });
      expect(batch.status).toBe(200);
      expect((JSON.parse(batch.text) as unknown[]).length).toBe(2);
      const badVersion = await post(fetchCached, call(3, args), { ...MCP_HEADERS, 'mcp-protocol-version': '1999-01-01' });
      expect(badVersion.status).toBe(400);
      const noAccept = await post(fetchCached, call(4, args), { ...MCP_HEADERS, accept: 'application/json' });
      expect(noAccept.status).toBe(406);
    },
  );
});
