/**
 * JSON-RPC messages the tool surfaces refuse before their SDKs see them (issue 36), over real
 * https (dev CA): on A2A 1.0 a body that is no JSON-RPC 2.0 request is -32600 Invalid Request
 * and a message without parts -32602 Invalid params (defect 14); on MCP a batch is -32600 with
 * HTTP 400 from revision 2025-06-18 on, and capped at `MCP_MAX_BATCH_ITEMS` messages before it
 * (defect 12: a 16 KB batch of 100 calls drew a 1.8 MB answer).
 */
import { join } from 'node:path';
import { MCP_MAX_BATCH_ITEMS, systemClock } from '@vrpkit/core';
import { A2A_JSONRPC_PATH, BOUND_TOOL_NAME, MCP_ENDPOINT_PATH } from '@vrpkit/protocol';
import { closeTestNode, dayAfter, type NodeClient, serveTestNode, tempDir } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'jsonrpc-refusals.example';
const tmp = tempDir('jsonrpc-refusals');
let served: { node?: Awaited<ReturnType<typeof serveTestNode>>['node']; client?: NodeClient } = {};

beforeAll(async () => {
  served = await serveTestNode(DOMAIN, join(tmp.dir, 'node'), systemClock);
});

afterAll(() => closeTestNode(served, tmp));

async function post(path: string, headers: Record<string, string>, body: unknown) {
  const res = await served.client!.request('POST', path, {
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    bytes: res.text.length,
    body: JSON.parse(res.text) as Record<string, unknown> & { error?: { code: number } },
  };
}

const A2A = { 'A2A-Version': '1.0' };
const ARGS = { check_in: dayAfter(Date.now(), 30), check_out: dayAfter(Date.now(), 33), guests: 2 };
const dataPart = { data: ARGS, mediaType: 'application/json' };
const sendMessage = (parts: unknown[]) => ({ message: { messageId: 'm-1', role: 'ROLE_USER', parts } });

describe('A2A 1.0 error mapping (issue 36 defect 14, regression)', () => {
  it.each([
    ['jsonrpc "1.0"', { jsonrpc: '1.0', id: 7, method: 'SendMessage', params: sendMessage([dataPart]) }],
    ['no method', { jsonrpc: '2.0', id: 7, params: sendMessage([dataPart]) }],
    ['an empty method', { jsonrpc: '2.0', id: 7, method: '', params: sendMessage([dataPart]) }],
  ])('%s is -32600 Invalid Request', async (_name, body) => {
    const res = await post(A2A_JSONRPC_PATH, A2A, body);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } });
    expect(res.body.result).toBeUndefined();
  });

  it('a message with an empty parts array is -32602 Invalid params, not a failed task', async () => {
    const res = await post(A2A_JSONRPC_PATH, A2A, { jsonrpc: '2.0', id: 8, method: 'SendMessage', params: sendMessage([]) });
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 8, error: { code: -32602 } });
    expect(res.body.result).toBeUndefined();
  });

  it('a well-formed message still gets its offer', async () => {
    const res = await post(A2A_JSONRPC_PATH, A2A, { jsonrpc: '2.0', id: 9, method: 'SendMessage', params: sendMessage([dataPart]) });
    expect(res.body.error).toBeUndefined();
    expect(res.body.result).toHaveProperty('message');
  });
});

const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };
const calls = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: { name: BOUND_TOOL_NAME, arguments: ARGS },
  }));

describe('MCP batches (issue 36 defect 12, regression)', () => {
  it.each(['2025-06-18', '2025-11-25'])(
    'MCP %s: a batch of 100 tools/call is one -32600 error, HTTP 400, and nothing runs',
    async (version) => {
      const res = await post(MCP_ENDPOINT_PATH, { ...MCP_ACCEPT, 'mcp-protocol-version': version }, calls(100));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(res.bytes).toBeLessThan(400);
    },
  );

  it.each([
    ['2025-03-26', { 'mcp-protocol-version': '2025-03-26' }],
    ['no MCP-Protocol-Version (2025-03-26 assumed)', {}],
  ])('%s: a batch over the cap is refused, one at the cap is answered', async (_name, version) => {
    const over = await post(MCP_ENDPOINT_PATH, { ...MCP_ACCEPT, ...version }, calls(100));
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ error: { code: -32600 } });
    const at = await served.client!.request('POST', MCP_ENDPOINT_PATH, {
      headers: { 'content-type': 'application/json', ...MCP_ACCEPT, ...version },
      body: JSON.stringify(calls(MCP_MAX_BATCH_ITEMS)),
    });
    expect(at.status).toBe(200);
    expect((JSON.parse(at.text) as unknown[]).length).toBe(MCP_MAX_BATCH_ITEMS);
  });

  it('an empty batch is -32600 under every revision', async () => {
    const res = await post(MCP_ENDPOINT_PATH, MCP_ACCEPT, []);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: -32600 } });
  });
});
