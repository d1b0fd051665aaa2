/**
 * The node's tool surfaces on the wire (Node Tool Binding v0.1 §3–§6), against a real node
 * (`serveNode`, dev CA, https on 127.0.0.1 reached as https://{domain}). The requests here are
 * raw protocol messages so the node's exact answers are asserted; the official SDK clients
 * and Chromium drive the same node in packages/agent/test/surfaces.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { initNode, propertyDocument, type ServedNode, sampleProperty, serveNode } from '@vrpkit/node';
import { AGENT_CARD_PATH, BOUND_TOOL_NAME, JWKS_PATH, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'surfaces-node.example';
const ORIGIN = `https://${DOMAIN}`;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const ARGS = { check_in: day(30), check_out: day(33), guests: 2 };
/** Property text that would break out of HTML or a script block if it were not escaped. */
const HOSTILE_NAME = 'Villa </script><script>alert(1)</script> & "Sea"';

let dir: string;
let node: ServedNode;
let fetch: HardenedFetch;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-surfaces-node-'));
  const propertyFile = join(dir, 'property.json');
  writeFileSync(propertyFile, JSON.stringify(propertyDocument({ ...sampleProperty(Date.now()), name: HOSTILE_NAME })));
  await initNode({ domain: DOMAIN, dataDir: join(dir, 'node'), propertyFile });
  node = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0 });
  fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem as string });
});

afterAll(async () => {
  await fetch?.close();
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** POST a body in chunks without Content-Length (chunked transfer encoding), over the node's real TLS. */
function chunkedPost(
  path: string,
  chunk: string,
  times: number,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: node.port,
        servername: DOMAIN,
        ca: node.caPem,
        method: 'POST',
        path,
        headers: { host: DOMAIN, ...headers },
      },
      (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', (e) => (/EPIPE|ECONNRESET/.test(String(e)) ? resolve({ status: -1, body: '' }) : reject(e)));
    for (let i = 0; i < times; i++) req.write(chunk);
    req.end();
  });
}

let rpcId = 0;
async function mcp(method: string, params: Record<string, unknown> = {}) {
  const res = await fetch(`${ORIGIN}${MCP_ENDPOINT_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } },
  };
}

async function endpointOffer(query: string) {
  const res = await fetch(`${ORIGIN}${OFFER_ENDPOINT_PATH}?${query}`);
  return JSON.parse(await res.text());
}

/** The offer minus what identifies one issuance (time stamps and the offer id), for comparing two fresh offers. */
function stable(envelope: { offer: Record<string, unknown> }) {
  const text = JSON.stringify(envelope.offer).replace(/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"/g, '"<t>"');
  const offerId = (envelope.offer.booking as { offer_id: string }).offer_id;
  return JSON.parse(text.split(offerId).join('<id>'));
}

describe('MCP surface /mcp', () => {
  it('lists exactly one tool named get_verified_stay_offer with the §4 schema, a §5 description and read-only annotations', async () => {
    const { status, body } = await mcp('tools/list');
    expect(status).toBe(200);
    const tools = body.result?.tools as {
      name: string;
      description: string;
      inputSchema: { required: string[]; properties: Record<string, { type: string }> };
      annotations: Record<string, unknown>;
    }[];
    expect(tools.map((t) => t.name)).toEqual([BOUND_TOOL_NAME]);
    const [tool] = tools;
    expect(tool?.inputSchema.required).toEqual(['check_in', 'check_out', 'guests']);
    expect(tool?.inputSchema.properties.guests?.type).toBe('integer');
    // The optional `language` the node has always accepted is advertised too (generated from the protocol's OfferRequestSchema).
    expect(Object.keys(tool?.inputSchema.properties ?? {}).sort()).toEqual([
      'checkIn',
      'checkOut',
      'check_in',
      'check_out',
      'guests',
      'language',
    ]);
    expect(tool?.description).toContain('does NOT verify');
    expect(tool?.description).toContain(`${ORIGIN}${JWKS_PATH}`);
    expect(tool?.description).not.toMatch(/\bis verified\b/i);
    expect(tool?.annotations.readOnlyHint).toBe(true);
  });

  it('tools/call returns the endpoint body as text and the same envelope as structuredContent', async () => {
    const { body } = await mcp('tools/call', { name: BOUND_TOOL_NAME, arguments: ARGS });
    const result = body.result as {
      content: { type: string; text: string }[];
      structuredContent: { offer: Record<string, unknown> };
      isError?: boolean;
    };
    expect(result.isError).toBeFalsy();
    expect(result.content).toHaveLength(1);
    expect(JSON.parse(result.content[0]?.text ?? 'null')).toEqual(result.structuredContent);
    expect(result.structuredContent.offer.canonical_domain).toBe(DOMAIN);
    // §10.3: the same offer the endpoint returns for the same arguments (modulo issuance time and id).
    const fromEndpoint = await endpointOffer(`check_in=${ARGS.check_in}&check_out=${ARGS.check_out}&guests=${ARGS.guests}`);
    expect(stable(result.structuredContent)).toEqual(stable(fromEndpoint));
  });

  it('accepts the camelCase aliases without the snake_case keys (§4)', async () => {
    const { body } = await mcp('tools/call', {
      name: BOUND_TOOL_NAME,
      arguments: { checkIn: ARGS.check_in, checkOut: ARGS.check_out, guests: 2 },
    });
    const result = body.result as { isError?: boolean; structuredContent: { offer: { request: { check_in: string } } } };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.offer.request.check_in).toBe(ARGS.check_in);
  });

  it.each([
    ['guests missing', { check_in: ARGS.check_in, check_out: ARGS.check_out }],
    ['guests zero', { ...ARGS, guests: 0 }],
    ['guests as a word', { ...ARGS, guests: 'two' }],
    ['not a date', { ...ARGS, check_in: '2026-02-30' }],
    ['check_out before check_in', { ...ARGS, check_in: ARGS.check_out, check_out: ARGS.check_in }],
  ])('invalid arguments (%s) give isError with the code and no offer', async (_label, args) => {
    const { body } = await mcp('tools/call', { name: BOUND_TOOL_NAME, arguments: args });
    const result = body.result as { isError?: boolean; structuredContent?: unknown; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content[0]?.text).toMatch(/^error\[[a-z_]+\]: /);
    expect(result.content[0]?.text).not.toContain('signed_verified_stay_offer');
  });

  describe('MCP silently drops a __proto__ argument and signs an offer and receipt over the rest, where HTTP and A2A refuse it as unknown_parameter', () => {
    // Own "__proto__" members, as a JSON text carries them (a JS object literal would set the prototype instead).
    const withProto = [
      JSON.parse(`{"check_in":"${ARGS.check_in}","check_out":"${ARGS.check_out}","guests":2,"__proto__":{"guests":3}}`),
      JSON.parse(`{"check_in":"${ARGS.check_in}","check_out":"${ARGS.check_out}","guests":2,"__proto__":"x"}`),
    ];

    it.each(withProto)('tools/call refuses it as unknown_parameter, with no offer and no receipt (%#)', async (args) => {
      expect(Object.keys(args)).toContain('__proto__');
      const { body } = await mcp('tools/call', { name: BOUND_TOOL_NAME, arguments: args });
      const result = body.result as { isError?: boolean; structuredContent?: unknown; _meta?: unknown; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toMatch(/^error\[unknown_parameter\]: /);
      expect(result.structuredContent).toBeUndefined();
      expect(result._meta).toBeUndefined();
    });

    it('the offer endpoint and A2A answer the same code', async () => {
      const http = await fetch(
        `${ORIGIN}${OFFER_ENDPOINT_PATH}?check_in=${ARGS.check_in}&check_out=${ARGS.check_out}&guests=2&__proto__=x`,
      );
      expect(((await http.json()) as { error: { code: string } }).error.code).toBe('unknown_parameter');
      const res = await fetch(`${ORIGIN}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'proto-1', role: 'ROLE_USER', parts: [{ data: withProto[0], mediaType: 'application/json' }] } },
        }),
      });
      const task = ((await res.json()) as { result: { task: { metadata: { error_code: string } } } }).result.task;
      expect(task.metadata.error_code).toBe('unknown_parameter');
    });
  });

  it('an unknown tool name is a JSON-RPC error, never the offer', async () => {
    const { body } = await mcp('tools/call', { name: `acme_${BOUND_TOOL_NAME}`, arguments: ARGS });
    expect(body.result).toBeUndefined();
    expect(body.error?.code).toBe(-32602);
  });

  it('answers a non-JSON body with 415 and malformed JSON with a -32700 parse error, as the SDK does', async () => {
    const post = (type: string, body: string) =>
      fetch(`${ORIGIN}${MCP_ENDPOINT_PATH}`, {
        method: 'POST',
        headers: { 'content-type': type, accept: 'application/json, text/event-stream' },
        body,
      });
    expect((await post('text/plain', 'hello')).status).toBe(415);
    const bad = await post('application/json', '{"jsonrpc":');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('answers non-POST with 405 Allow: POST and an oversized body with 413, both as JSON', async () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const res = await fetch(`${ORIGIN}${MCP_ENDPOINT_PATH}`, { method, headers: { accept: 'application/json, text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/POST/);
    }
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(70 * 1024) } });
    const res = await fetch(`${ORIGIN}${MCP_ENDPOINT_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32000);
  });
});

describe('bodies without a declared length (chunked)', () => {
  it('are streamed and cut off at the cap: MCP and A2A answer 413', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'A2A-Version': '1.0' };
    for (const path of [MCP_ENDPOINT_PATH, '/a2a/jsonrpc']) {
      const r = await chunkedPost(path, `{"pad":"${'x'.repeat(8 * 1024)}`, 10, headers);
      expect({ path, status: r.status }).toEqual({ path, status: 413 });
    }
  });

  it('are still served when small', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const r = await chunkedPost(MCP_ENDPOINT_PATH, body, 1, {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).result.tools[0].name).toBe(BOUND_TOOL_NAME);
  });
});

describe('A2A surface', () => {
  it('serves a 1.0 card with exactly one skill get_verified_stay_offer and interfaces on the canonical origin', async () => {
    const res = await fetch(`${ORIGIN}${AGENT_CARD_PATH}`, { headers: { 'A2A-Version': '1.0' } });
    expect(res.status).toBe(200);
    const card = (await res.json()) as {
      skills: { id: string; description: string }[];
      supportedInterfaces: { url: string; protocolVersion: string; protocolBinding: string }[];
    };
    expect(card.skills.map((s) => s.id)).toEqual([BOUND_TOOL_NAME]);
    expect(card.skills[0]?.description).toContain('does NOT verify');
    expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion]).sort()).toEqual([
      ['JSONRPC', '0.3'],
      ['JSONRPC', '1.0'],
    ]);
    for (const i of card.supportedInterfaces) expect(new URL(i.url).origin).toBe(ORIGIN);
  });

  it('serves the 0.3 card shape to a client without A2A-Version', async () => {
    const card = (await (await fetch(`${ORIGIN}${AGENT_CARD_PATH}`)).json()) as {
      url: string;
      protocolVersion: string;
      preferredTransport: string;
      skills: { id: string }[];
    };
    expect(card.protocolVersion).toBe('0.3');
    expect(card.preferredTransport).toBe('JSONRPC');
    expect(new URL(card.url).origin).toBe(ORIGIN);
    expect(card.skills.map((s) => s.id)).toEqual([BOUND_TOOL_NAME]);
  });

  async function a2a(version: '1.0' | null, body: unknown) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (version) headers['A2A-Version'] = version;
    const res = await fetch(`${ORIGIN}/a2a/jsonrpc`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('1.0 SendMessage with one data part returns the envelope as the reply data part', async () => {
    const { body } = await a2a('1.0', {
      jsonrpc: '2.0',
      id: 7,
      method: 'SendMessage',
      params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ data: ARGS, mediaType: 'application/json' }] } },
    });
    const message = (body.result as { message: { role: string; parts: { data: { kind: string; offer: { canonical_domain: string } } }[] } })
      .message;
    expect(message.role).toBe('ROLE_AGENT');
    expect(message.parts).toHaveLength(1);
    expect(message.parts[0]?.data.kind).toBe('signed_verified_stay_offer');
    expect(message.parts[0]?.data.offer.canonical_domain).toBe(DOMAIN);
  });

  it('0.3 message/send returns the envelope as a data part', async () => {
    const { body } = await a2a(null, {
      jsonrpc: '2.0',
      id: 8,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: 'm-2', role: 'user', parts: [{ kind: 'data', data: ARGS }] } },
    });
    const result = body.result as { kind: string; parts: { kind: string; data: { kind: string } }[] };
    expect(result.kind).toBe('message');
    expect(result.parts.map((p) => [p.kind, p.data.kind])).toEqual([['data', 'signed_verified_stay_offer']]);
  });

  it.each([
    ['a text part only', [{ text: 'two guests next week please' }]],
    ['two data parts', [{ data: ARGS }, { data: ARGS }]],
    ['a data part with bad arguments', [{ data: { ...ARGS, guests: 0 } }]],
  ])('a message with %s is a failed task with the reason, never a guessed offer', async (_label, parts) => {
    const { body } = await a2a('1.0', {
      jsonrpc: '2.0',
      id: 9,
      method: 'SendMessage',
      params: { message: { messageId: `m-${_label}`, role: 'ROLE_USER', parts } },
    });
    const task = (body.result as { task: { status: { state: string; message: { parts: { text: string }[] } }; artifacts?: unknown } }).task;
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.status.message.parts[0]?.text).toMatch(/^error\[[a-z_]+\]: /);
    expect(JSON.stringify(body)).not.toContain('signed_verified_stay_offer');
  });

  it('rejects invalid JSON, a wrong content type and an oversized body without reaching the executor', async () => {
    const bad = await fetch(`${ORIGIN}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":',
    });
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const type = await fetch(`${ORIGIN}/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(type.status).toBe(415);
    const big = await fetch(`${ORIGIN}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(70 * 1024) }),
    });
    expect(big.status).toBe(413);
  });
});

describe('WebMCP property page /', () => {
  it('is a guest page with the property, rates, calendar, quote form and booking button, registering the tool from /webmcp.js', async () => {
    const res = await fetch(`${ORIGIN}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).toContain('<form id="quote-form"');
    expect(html).toContain('id="book"');
    expect(html).toContain('<table class="cal">');
    expect(html).toContain('Nightly rates');
    expect(html).toContain('<script type="module" src="/webmcp.js"></script>');
    const toolJson = /<script type="application\/json" id="vrp-tool">(.*?)<\/script>/s.exec(html)?.[1];
    const tool = JSON.parse(toolJson ?? 'null') as { name: string; endpoint: string; inputSchema: { required: string[] } };
    expect(tool.name).toBe(BOUND_TOOL_NAME);
    expect(tool.endpoint).toBe(OFFER_ENDPOINT_PATH);
    expect(tool.inputSchema.required).toEqual(['check_in', 'check_out', 'guests']);
    const script = await fetch(`${ORIGIN}/webmcp.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain('document.modelContext ?? navigator.modelContext');
  });

  it('escapes property text everywhere: no injected markup reaches the page', async () => {
    const html = await (await fetch(`${ORIGIN}/`)).text();
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('Villa &#60;/script&#62;&#60;script&#62;alert(1)&#60;/script&#62; &#38; &#34;Sea&#34;');
    // Exactly the two script elements the page means to have.
    expect(html.match(/<script\b/g)).toHaveLength(2);
  });
});
