/**
 * The A2A surface's direct answer (surfaces/a2a/direct.ts) against the official `@a2a-js/sdk`'s
 * path, which stays the reference: for every body the direct path takes, its answer must be, byte
 * for byte, what the SDK writes for the same call (Node Tool Binding v0.1 §5: the envelope,
 * unmodified, as the reply's data part), once the ids the SDK makes at random per reply are
 * masked. The SDK's own answer is obtained by adding an empty `metadata` to the request's params,
 * which keeps a call on the SDK's path and does not change its reply. Everything else — refused
 * stays, errors, unknown methods, streaming requests, bad params — must not take the direct path
 * and is answered by the SDK. A real node on a fixed clock over TLS, with and without the
 * signed-offer cache.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type AgentCard, Role, SendMessageRequest } from '@a2a-js/sdk';
import { Client, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { createHardenedFetch } from '@vrpkit/agent';
import { fixedClock } from '@vrpkit/core';
import { type ServedNode, serveNode } from '@vrpkit/node';
import { A2A_JSONRPC_PATH, AGENT_CARD_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, nodeClient, serveTestNode, tempDir } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type A2aEra, directSendMessage } from '../src/surfaces/a2a/direct.js';

const DOMAIN = 'a2a-direct-node.example';
const NOW = Date.now();
const day = (offset: number) => new Date(NOW + offset * 86_400_000).toISOString().slice(0, 10);

const tmp = tempDir('a2a-direct');
/** The node with the signed-offer cache (testkit's harness), and a second server of the same store without it. */
let cached: { node?: ServedNode; client?: NodeClient } = {};
let fresh: { node?: ServedNode; client?: NodeClient } = {};
let viaCached: NodeClient;
let viaFresh: NodeClient;

beforeAll(async () => {
  const clock = fixedClock(NOW);
  cached = await serveTestNode(DOMAIN, join(tmp.dir, 'node'), clock);
  const node = await serveNode({ dataDir: join(tmp.dir, 'node'), dev: true, port: 0, clock, offerCacheMaxAgeSeconds: 0 });
  fresh = { node, client: nodeClient(DOMAIN, node.port, node.caPem as string) };
  viaCached = cached.client as NodeClient;
  viaFresh = fresh.client as NodeClient;
});

afterAll(async () => {
  await closeTestNode(fresh, { cleanup: () => {} });
  await closeTestNode(cached, tmp);
});

/** Per binding: the `A2A-Version` header (none is 0.3, the SDK's rule) and the plain call a client sends. */
const BINDINGS = {
  v1: {
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    call: (id: unknown, data: unknown, message: Record<string, unknown> = {}) => ({
      jsonrpc: '2.0',
      id,
      method: 'SendMessage',
      params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ data, mediaType: 'application/json' }], ...message } },
    }),
  },
  legacy: {
    headers: { 'content-type': 'application/json' },
    call: (id: unknown, data: unknown, message: Record<string, unknown> = {}) => ({
      jsonrpc: '2.0',
      id,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'data', data }], ...message } },
    }),
  },
} as const;

async function post(client: NodeClient, body: unknown, headers: Record<string, string>) {
  const res = await client.request('POST', A2A_JSONRPC_PATH, { headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), text: res.text };
}

/** A header that keeps any call on the SDK's path (an extension the card does not offer; the SDK filters it out). */
const SDK_HELD = { 'A2A-Extensions': 'https://example.com/ext/v1' };

/** The same call kept on the SDK's path: an empty `metadata` in its params, which the reply never carries. */
const onSdkPath = (body: { params: Record<string, unknown> }) => ({ ...body, params: { ...body.params, metadata: {} } });

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** The ids the SDK makes at random per reply (message, context, task); with `signatures`, also what a fresh signature changes. */
function mask(text: string, signatures: boolean): string {
  let masked = text.replace(new RegExp(`"(messageId|contextId|id)":"${UUID}"`, 'g'), '"$1":"<random>"');
  if (signatures) masked = masked.replace(/ey[\w-]+\.[\w-]+\.[\w-]+/g, '<jws>').replace(new RegExp(UUID, 'g'), '<offer-id>');
  return masked;
}

const STAYS = [
  { check_in: day(30), check_out: day(33), guests: 2 },
  { check_in: day(40), check_out: day(47), guests: 1, language: 'sv' },
  { checkIn: day(50), checkOut: day(52), guests: 3 },
  // A signed negative (too many guests): still an offer, so still the direct path.
  { check_in: day(60), check_out: day(63), guests: 99 },
];
const ERAS: A2aEra[] = ['v1', 'legacy'];

describe.each(ERAS)('A2A direct answer on the %s binding', (era) => {
  const { headers, call } = BINDINGS[era];
  const cases = STAYS.flatMap((stay, i) =>
    (['cache on', 'cache off'] as const).map((mode) => [i, stay, mode, i % 2 ? `call-"${i}"\u2028` : i] as const),
  );

  it.each(cases)('stay %i (%o, %s, id %j): the direct path answers the SDK’s bytes', async (_i, stay, mode, id) => {
    const body = call(id, stay);
    // The body takes the direct path; the SDK-held variant does not.
    expect(directSendMessage(body, era)).toEqual({ id, args: stay, contextId: undefined, era });
    expect(directSendMessage(onSdkPath(body), era)).toBeNull();
    const f = mode === 'cache on' ? viaCached : viaFresh;
    const sdk = await post(f, onSdkPath(body), headers);
    const direct = await post(f, body, headers);
    expect(direct.status).toBe(200);
    expect(direct.type).toBe(sdk.type);
    expect(direct.text).toContain('"signed_verified_stay_offer"');
    expect(mask(direct.text, mode === 'cache off')).toBe(mask(sdk.text, mode === 'cache off'));
    // Each reply gets its own message id and, without a context given, its own context id.
    expect(direct.text).not.toBe(sdk.text);
  });

  it('a message naming its context is answered in that context, as the SDK does', async () => {
    const body = call(5, STAYS[0], { contextId: 'ctx-"7"' });
    expect(directSendMessage(body, era)?.contextId).toBe('ctx-"7"');
    const direct = await post(viaCached, body, headers);
    const sdk = await post(viaCached, onSdkPath(body), headers);
    expect(mask(direct.text, false)).toBe(mask(sdk.text, false));
    expect(direct.text).toContain('"contextId":"ctx-\\"7\\""');
  });

  it('the envelope in the reply is the offer endpoint body, byte for byte (cache on)', async () => {
    const stay = STAYS[0] as { check_in: string; check_out: string; guests: number };
    const endpoint = await viaCached.get(`${OFFER_ENDPOINT_PATH}?check_in=${stay.check_in}&check_out=${stay.check_out}&guests=2`);
    const { text } = await post(viaCached, call(1, stay), headers);
    expect(text).toContain(`"data":${endpoint.text}`);
  });

  // A plain-shaped call whose stay is refused: the direct path declines after the offer service
  // refuses, and the SDK answers the failed task (§5) with the reason.
  it.each([
    ['guests 0', { check_in: day(30), check_out: day(33), guests: 0 }],
    ['no guests', { check_in: day(30), check_out: day(33) }],
    ['an unknown argument', { check_in: day(30), check_out: day(33), guests: 2, pets: true }],
    ['an own __proto__ argument', JSON.parse(`{"__proto__":{"guests":1},"check_in":"${day(30)}","check_out":"${day(33)}","guests":2}`)],
  ])('a refused stay (%s) is the SDK’s failed task', async (_label, stay) => {
    const body = call(3, stay);
    expect(directSendMessage(body, era)).not.toBeNull();
    const direct = await post(viaCached, body, headers);
    const sdk = await post(viaCached, onSdkPath(body), headers);
    expect(mask(direct.text, false)).toBe(mask(sdk.text, false));
    expect(direct.text).toMatch(era === 'v1' ? /"TASK_STATE_FAILED"/ : /"state":"failed"/);
    expect(direct.text).not.toContain('signed_verified_stay_offer');
  });
});

const ARGS = STAYS[0];
/** Bodies the direct path must leave to the SDK, per binding: a shape it does not take, or a call the SDK refuses. */
const DECLINED: Record<A2aEra, [string, unknown][]> = {
  v1: [
    ['an unknown method', { jsonrpc: '2.0', id: 1, method: 'SendMessages', params: BINDINGS.v1.call(1, ARGS).params }],
    ['a streaming request', { ...BINDINGS.v1.call(1, ARGS), method: 'SendStreamingMessage' }],
    ['the 0.3 method on 1.0', BINDINGS.legacy.call(1, ARGS)],
    ['params an array', { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: [] }],
    ['no messageId', BINDINGS.v1.call(1, ARGS, { messageId: '' })],
    ['the agent role', BINDINGS.v1.call(1, ARGS, { role: 'ROLE_AGENT' })],
    ['a task id', BINDINGS.v1.call(1, ARGS, { taskId: 'task-1' })],
    ['a text part', BINDINGS.v1.call(1, ARGS, { parts: [{ text: 'two guests please' }] })],
    ['two data parts', BINDINGS.v1.call(1, ARGS, { parts: [{ data: ARGS }, { data: ARGS }] })],
    ['a data part that is no object', BINDINGS.v1.call(1, ARGS, { parts: [{ data: [ARGS] }] })],
    ['a media type the card does not accept', BINDINGS.v1.call(1, ARGS, { parts: [{ data: ARGS, mediaType: 'text/plain' }] })],
    ['a tenant', { ...BINDINGS.v1.call(1, ARGS), params: { ...BINDINGS.v1.call(1, ARGS).params, tenant: 'other' } }],
    ['a non-integer id', BINDINGS.v1.call(1.5, ARGS)],
    ['a null id', BINDINGS.v1.call(null, ARGS)],
    ['no id', { jsonrpc: '2.0', method: 'SendMessage', params: BINDINGS.v1.call(1, ARGS).params }],
    ['jsonrpc 2.1', { ...BINDINGS.v1.call(1, ARGS), jsonrpc: '2.1' }],
  ],
  legacy: [
    ['an unknown method', { ...BINDINGS.legacy.call(1, ARGS), method: 'message/sent' }],
    ['a streaming request', { ...BINDINGS.legacy.call(1, ARGS), method: 'message/stream' }],
    ['the 1.0 method on 0.3', BINDINGS.v1.call(1, ARGS)],
    ['no kind', BINDINGS.legacy.call(1, ARGS, { kind: undefined })],
    ['the agent role', BINDINGS.legacy.call(1, ARGS, { role: 'agent' })],
    ['a part without kind', BINDINGS.legacy.call(1, ARGS, { parts: [{ data: ARGS }] })],
    ['a part with metadata', BINDINGS.legacy.call(1, ARGS, { parts: [{ kind: 'data', data: ARGS, metadata: { a: 1 } }] })],
    ['a configuration', { ...BINDINGS.legacy.call(1, ARGS), params: { ...BINDINGS.legacy.call(1, ARGS).params, configuration: {} } }],
    ['a string id with a null params', { jsonrpc: '2.0', id: 'x', method: 'message/send', params: null }],
  ],
};

describe.each(ERAS)('on the %s binding, the SDK answers everything else', (era) => {
  it.each(DECLINED[era])('%s: not the direct path; answered as the SDK answers it', async (_label, body) => {
    const sent = JSON.parse(JSON.stringify(body));
    expect(directSendMessage(sent, era)).toBeNull();
    // Whatever the SDK makes of it (an error, a failed task, an offer it accepts in this shape too),
    // it is the SDK's own JSON-RPC answer: the same as with the call held on the SDK's path.
    const res = await post(viaCached, sent, BINDINGS[era].headers);
    const held = await post(viaCached, sent, { ...BINDINGS[era].headers, ...SDK_HELD });
    expect(res.text.startsWith('{"jsonrpc":"2.0"')).toBe(true);
    expect([res.status, mask(res.text, false)]).toEqual([held.status, mask(held.text, false)]);
  });

  // Malformed JSON-RPC close to the plain call: refused before either path, alike on both.
  const plain = JSON.stringify(BINDINGS[era].call(7, ARGS));
  it.each([
    ['truncated JSON', plain.slice(0, -2)],
    ['a batch holding the plain call', `[${plain}]`],
    ['null', 'null'],
    ['the plain call with "jsonrpc": "1.0"', plain.replace('"2.0"', '"1.0"')],
  ])('%s: the same JSON-RPC error as on the SDK’s path', async (_label, text) => {
    const res = await post(viaCached, text, BINDINGS[era].headers);
    const held = await post(viaCached, text, { ...BINDINGS[era].headers, ...SDK_HELD });
    expect(res.text).toMatch(/^\{"jsonrpc":"2\.0","id":(7|null),"error":\{"code":-32[0-9]{3}/);
    expect([res.status, res.text]).toEqual([held.status, held.text]);
  });

  it('the direct path is never taken when the client asks for extensions (the SDK filters them per request)', async () => {
    const body = BINDINGS[era].call(4, ARGS);
    const res = await post(viaCached, body, { ...BINDINGS[era].headers, ...SDK_HELD });
    const sdk = await post(viaCached, onSdkPath(body), BINDINGS[era].headers);
    expect(mask(res.text, false)).toBe(mask(sdk.text, false));
  });
});

describe('the SDK-held answers the direct path must not change', () => {
  it('a version the card does not list is the SDK’s refusal, never a direct answer', async () => {
    const res = await post(viaCached, BINDINGS.v1.call(6, ARGS), { ...BINDINGS.v1.headers, 'A2A-Version': '2.0' });
    expect(res.text).not.toContain('signed_verified_stay_offer');
    expect((JSON.parse(res.text) as { error?: { message: string } }).error?.message).toMatch(/version '2\.0' is not supported/);
  });

  it.each([
    ['an unknown method is -32601', { jsonrpc: '2.0', id: 1, method: 'SendMessages', params: {} }, -32601],
    [
      'a streaming request is refused (the card declares no streaming)',
      { ...BINDINGS.v1.call(2, ARGS), method: 'SendStreamingMessage' },
      -32004,
    ],
    ['params that are no object are -32602', { jsonrpc: '2.0', id: 3, method: 'SendMessage', params: [] }, -32602],
    ['a message without messageId is -32602', BINDINGS.v1.call(4, ARGS, { messageId: '' }), -32602],
  ])('%s', async (_label, body, code) => {
    const res = await post(viaCached, body, BINDINGS.v1.headers);
    expect((JSON.parse(res.text) as { error?: { code: number } }).error?.code).toBe(code);
  });
});

describe('the official A2A client', () => {
  it('sends the plain call the direct path takes, and reads its reply as the signed envelope', async () => {
    const node = cached.node as ServedNode;
    const fetchImpl = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem as string });
    const card: AgentCard = await new DefaultAgentCardResolver({ fetchImpl: fetchImpl as typeof fetch }).resolve(
      `https://${DOMAIN}${AGENT_CARD_PATH}`,
      '',
    );
    const endpoint = card.supportedInterfaces.find((i) => i.protocolVersion === '1.0')!;
    const client = new Client(await new JsonRpcTransportFactory({ fetchImpl: fetchImpl as typeof fetch }).create(endpoint.url, card), card);
    const request: SendMessageRequest = {
      tenant: '',
      message: {
        messageId: randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [{ content: { $case: 'data', value: ARGS }, metadata: undefined, filename: '', mediaType: 'application/json' }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    };
    // The request's JSON as the client's transport writes it is a plain call.
    expect(
      directSendMessage({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: SendMessageRequest.toJSON(request) }, 'v1'),
    ).not.toBeNull();
    const reply = await client.sendMessage(request);
    expect('messageId' in reply && reply.role).toBe(Role.ROLE_AGENT);
    const part = 'parts' in reply ? reply.parts[0] : undefined;
    expect(part?.content?.$case === 'data' && part.content.value.kind).toBe('signed_verified_stay_offer');
    await fetchImpl.close();
  });
});
