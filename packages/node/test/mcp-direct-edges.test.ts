/**
 * Edge inputs for the MCP node surface's direct `tools/call` answer (surfaces/mcp.ts): whatever
 * the JSON-RPC id, arguments or params, the direct answer must be exactly what the official SDK
 * answers for the same body (Node Tool Binding v0.1 §5). The SDK's own answer is obtained by
 * adding an empty `_meta`, which keeps a call on the SDK's path and does not change its result.
 * A real node on a fixed clock over TLS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { fixedClock } from '@vrpkit/core';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { BOUND_TOOL_NAME, MCP_ENDPOINT_PATH } from '@vrpkit/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'mcp-edges-node.example';
const ORIGIN = `https://${DOMAIN}`;
const NOW = Date.now();
const day = (offset: number) => new Date(NOW + offset * 86_400_000).toISOString().slice(0, 10);

let dir: string;
let node: ServedNode;
let f: HardenedFetch;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-mcp-edges-'));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
  node = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0, clock: fixedClock(NOW) });
  f = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem as string });
});

afterAll(async () => {
  await f?.close();
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function postRaw(text: string, headers: Record<string, string> = HEADERS) {
  const res = await f(`${ORIGIN}${MCP_ENDPOINT_PATH}`, { method: 'POST', headers, body: text });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

const ARGS = `{"check_in":"${day(30)}","check_out":"${day(33)}","guests":2}`;
/** A tools/call body as text, so ids JSON.stringify cannot write (1e400, -0) are sent as written. */
const body = (id: string | undefined, params: string) =>
  `{"jsonrpc":"2.0",${id === undefined ? '' : `"id":${id},`}"method":"tools/call","params":{${params}}}`;
const NAME = `"name":"${BOUND_TOOL_NAME}"`;

describe('MCP direct tools/call: edge inputs answer as the SDK does', () => {
  const ids = [
    '0',
    '-0',
    '1.5',
    '-7',
    '1e400',
    '12345678901234567890',
    '""',
    '"\\u0000\\u2028"',
    `"${'x'.repeat(60_000)}"`,
    'null',
    'true',
    '{}',
    '[1]',
  ];
  it.each(ids)('id %s', async (id) => {
    const direct = await postRaw(body(id, `${NAME},"arguments":${ARGS}`));
    const sdk = await postRaw(body(id, `${NAME},"arguments":${ARGS},"_meta":{}`));
    expect({ status: direct.status, type: direct.type, text: direct.text }).toEqual({ status: sdk.status, type: sdk.type, text: sdk.text });
  });

  const params = [
    `${NAME}`,
    `${NAME},"arguments":null`,
    `${NAME},"arguments":[]`,
    `${NAME},"arguments":{"__proto__":{"guests":1},"check_in":"${day(30)}","check_out":"${day(33)}","guests":2}`,
    `${NAME},"arguments":${ARGS},"unknown":1`,
    `"name":"${BOUND_TOOL_NAME} ","arguments":${ARGS}`,
    `"name":"other","arguments":${ARGS}`,
    `"name":"${BOUND_TOOL_NAME}","name":"other","arguments":${ARGS}`,
    `"name":"other","name":"${BOUND_TOOL_NAME}","arguments":${ARGS}`,
  ];
  it.each(params)('params {%s}', async (p) => {
    const direct = await postRaw(body('9', p));
    const sdk = await postRaw(body('9', `${p},"_meta":{}`));
    expect(direct).toEqual(sdk);
  });

  // Whole bodies around the plainest call (the one the surface recognises without the SDK's schemas).
  const bodies = [
    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{${NAME},"arguments":${ARGS}},"extra":1}`,
    `{"jsonrpc":"2.1","id":3,"method":"tools/call","params":{${NAME},"arguments":${ARGS}}}`,
    `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{${NAME},"arguments":${ARGS}}}`,
    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{${NAME},"arguments":${ARGS},"task":{}}}`,
    `{"params":{"arguments":${ARGS},${NAME}},"method":"tools/call","id":"x","jsonrpc":"2.0"}`,
  ];
  it.each(bodies)('body %s', async (text) => {
    const direct = await postRaw(text);
    // The SDK's own answer: the same body with an empty `_meta` first in its params.
    const sdk = await postRaw(text.replace(/"params":\{/, '"params":{"_meta":{},'));
    expect(direct).toEqual(sdk);
  });

  it('a notification (no id) is not answered with a result', async () => {
    const res = await postRaw(body(undefined, `${NAME},"arguments":${ARGS}`));
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
  });

  it('without JSON content-type, or Accept missing text/event-stream, the SDK refuses', async () => {
    expect((await postRaw(body('1', `${NAME},"arguments":${ARGS}`), { ...HEADERS, 'content-type': 'text/plain' })).status).toBe(415);
    expect((await postRaw(body('1', `${NAME},"arguments":${ARGS}`), { ...HEADERS, accept: 'text/event-stream' })).status).toBe(406);
    expect((await postRaw(body('1', `${NAME},"arguments":${ARGS}`), { ...HEADERS, accept: '*/*' })).status).toBe(406);
  });
});
