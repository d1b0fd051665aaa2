/**
 * Deeply nested JSON bodies on the tool surfaces: refused before an SDK walks them, with a
 * JSON-RPC invalid-params error and a stable code, and without a stack trace on stderr.
 * Real node over https (dev CA), raw bodies so the nesting reaches the node as sent.
 */
import { join } from 'node:path';
import { createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { systemClock } from '@vrpkit/core';
import { MAX_JSON_DEPTH } from '@vrpkit/node';
import { MCP_ENDPOINT_PATH } from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, serveTestNode, tempDir } from '@vrpkit/testkit/node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

const DOMAIN = 'deep-nesting.example';
const ORIGIN = `https://${DOMAIN}`;
const tmp = tempDir('deep-nesting');
let served: { node?: Awaited<ReturnType<typeof serveTestNode>>['node']; client?: NodeClient } = {};
let fetch: HardenedFetch;
const internalErrors: unknown[] = [];
let stderr: string[] = [];

/** `{"a":{"a":…}}` with `levels` objects: the text of a value nested `levels` deep. */
const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
/** A stack trace as Node prints one: "    at fn (file:line:col)". */
const STACK_FRAME = /^\s+at .+/m;

const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};
const A2A_HEADERS = { 'content-type': 'application/json', 'A2A-Version': '1.0' };

/** An MCP tools/call and an A2A SendMessage whose arguments (the data part) are `argsJson`. */
const mcpCall = (argsJson: string) =>
  `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"get_verified_stay_offer","arguments":${argsJson}}}`;
const a2aCall = (dataJson: string) =>
  `{"jsonrpc":"2.0","id":42,"method":"SendMessage","params":{"message":{"messageId":"m-deep","role":"ROLE_USER","parts":[{"data":${dataJson},"mediaType":"application/json"}]}}}`;

async function post(path: string, headers: Record<string, string>, body: string) {
  const res = await fetch(`${ORIGIN}${path}`, { method: 'POST', headers, body });
  return {
    status: res.status,
    body: (await res.json()) as { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } },
  };
}

beforeAll(async () => {
  served = await serveTestNode(DOMAIN, join(tmp.dir, 'node'), systemClock, { onError: (e) => internalErrors.push(e) });
  fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${served.node!.port}`], ca: served.node!.caPem as string });
});

afterAll(async () => {
  await fetch?.close();
  await closeTestNode(served, tmp);
});

beforeEach(() => {
  stderr = [];
  internalErrors.length = 0;
  // The node runs in this process: whatever it (or an SDK inside it) prints goes through here.
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('deep nesting in an A2A data part is an internal error (regression)', () => {
  it.each([
    ['MCP tools/call arguments', MCP_ENDPOINT_PATH, MCP_HEADERS, mcpCall(nested(10_000)), 41],
    ['A2A SendMessage data part', '/a2a/jsonrpc', A2A_HEADERS, a2aCall(nested(10_000)), 42],
  ])(
    '%s nested 10,000 deep: JSON-RPC invalid params (json_too_deep), no internal error, no stack trace on stderr',
    async (_label, path, headers, body, id) => {
      const r = await post(path, headers, body);
      expect(r.body.error).toEqual({
        code: -32602,
        message: `Invalid params: the request nests deeper than ${MAX_JSON_DEPTH} levels`,
        data: { code: 'json_too_deep', max_depth: MAX_JSON_DEPTH },
      });
      expect(r.body.id).toBe(id);
      expect(r.body.result).toBeUndefined();
      expect(internalErrors).toEqual([]);
      expect(stderr.join('')).not.toMatch(STACK_FRAME);
      expect(stderr.join('')).not.toMatch(/Maximum call stack/);
    },
  );

  it('the limit counts the whole body: one level under it still reaches the surface (a refused argument, not json_too_deep)', async () => {
    // The envelopes around the arguments: MCP {…params:{…arguments:X}} is 2 levels, A2A {params:{message:{parts:[{data:X}]}}} is 5.
    const mcp = await post(MCP_ENDPOINT_PATH, MCP_HEADERS, mcpCall(nested(MAX_JSON_DEPTH - 2)));
    expect(mcp.body.error).toBeUndefined();
    expect((mcp.body.result as { isError: boolean }).isError).toBe(true);
    const a2a = await post('/a2a/jsonrpc', A2A_HEADERS, a2aCall(nested(MAX_JSON_DEPTH - 5)));
    expect(a2a.body.error).toBeUndefined();
    expect(JSON.stringify(a2a.body.result)).toContain('TASK_STATE_FAILED');
    // One more level on either is refused.
    expect((await post(MCP_ENDPOINT_PATH, MCP_HEADERS, mcpCall(nested(MAX_JSON_DEPTH - 1)))).body.error?.code).toBe(-32602);
    expect((await post('/a2a/jsonrpc', A2A_HEADERS, a2aCall(nested(MAX_JSON_DEPTH - 4)))).body.error?.code).toBe(-32602);
    expect(stderr.join('')).not.toMatch(STACK_FRAME);
  });
});
