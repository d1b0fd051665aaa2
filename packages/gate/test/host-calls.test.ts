/**
 * Host-side calls through the gate, with the real parts they wrap: the Stripe SDK (pointed at a
 * local fake of its HTTP API on 127.0.0.1, never the network), Node's fetch against real HTTP
 * servers, and a memory store. Each deny is counted at the far side: nothing arrives.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AgentCandidateAct,
  candidateActId,
  GateError,
  gatedFetch,
  gateMemoryWrite,
  gatePaymentIntents,
  type PolicyDocument,
} from '@vrpkit/gate';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hostContext, openTestGate, TEST_POLICY, type TestGate } from './scenarios-gate.js';

/** A real HTTP server recording every request that reaches it. */
interface Recorder {
  url: string;
  origin: string;
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

async function startRecorder(respond: (path: string, body: string) => { status: number; body: string; headers?: Record<string, string> }) {
  const requests: Recorder['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const r = respond(req.url ?? '', body);
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(r.body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/`,
    origin,
    requests,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  } satisfies Recorder;
}

let t: TestGate | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function approver(asked: AgentCandidateAct[], answer = true) {
  return async (act: AgentCandidateAct): Promise<boolean> => {
    asked.push(act);
    return answer;
  };
}

describe('payments: a PaymentCandidateAct is enforced before the PSP SDK (Stripe paymentIntents.create)', () => {
  let psp: Recorder;
  let stripe: Stripe;
  const POLICY: PolicyDocument = {
    ...TEST_POLICY,
    policy_id: 'payments-v1',
    limits: [
      {
        tool: 'payment_intents.create',
        amounts: [{ amount: 'payment.amount', currency: 'payment.currency', max: { EUR: 50_000 } }],
        arguments: [{ argument: 'payment.payee', values: ['acct_host*'] }],
      },
    ],
  };
  beforeAll(async () => {
    let n = 0;
    psp = await startRecorder((_path, body) => {
      const p = new URLSearchParams(body);
      return {
        status: 200,
        body: JSON.stringify({ id: `pi_${++n}`, object: 'payment_intent', amount: Number(p.get('amount')), currency: p.get('currency') }),
      };
    });
    const { port } = new URL(psp.origin);
    stripe = new Stripe('sk_test_not_a_real_key', { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
  });
  afterAll(() => psp.close());

  const params = (over: Partial<Stripe.PaymentIntentCreateParams> = {}): Stripe.PaymentIntentCreateParams => ({
    amount: 42_000,
    currency: 'eur',
    transfer_data: { destination: 'acct_host_1' },
    ...over,
  });

  it('a payment within the envelope is approved by a person, sent once, and a retry returns the recorded payment', async () => {
    const asked: AgentCandidateAct[] = [];
    t = await openTestGate({ policy: POLICY, approve: approver(asked) });
    const before = psp.requests.length;
    const gated = gatePaymentIntents(stripe.paymentIntents, { context: hostContext(t.gate), psp: 'api.stripe.com' });
    const pi = await gated.create(params(), { idempotencyKey: 'booking-7f3a-deposit' });
    expect(pi).toMatchObject({ object: 'payment_intent', amount: 42_000, currency: 'eur' });
    expect(asked.map((a) => [a.act_type, a.consequence_class, a.destination?.destination_id])).toEqual([
      ['PAYMENT_REQUEST', 'FINANCIAL', 'api.stripe.com'],
    ]);
    expect(psp.requests.length).toBe(before + 1);
    const sent = psp.requests.at(-1)!;
    expect(sent.path).toBe('/v1/payment_intents');
    expect(sent.headers['idempotency-key']).toBe('booking-7f3a-deposit');
    expect(new URLSearchParams(sent.body).get('transfer_data[destination]')).toBe('acct_host_1');
    // The same key and request again: the recorded payment, no second request.
    expect(await gated.create(params(), { idempotencyKey: 'booking-7f3a-deposit' })).toMatchObject({ id: (pi as { id: string }).id });
    expect(psp.requests.length).toBe(before + 1);
    // The same key with another amount is not a retry: denied, nothing sent.
    await expect(gated.create(params({ amount: 42_001 }), { idempotencyKey: 'booking-7f3a-deposit' })).rejects.toMatchObject({
      code: 'EF_005',
    });
    expect(psp.requests.length).toBe(before + 1);
  });

  it.each([
    ['above the envelope (EUR 600.00 > 500.00)', params({ amount: 60_000 }), 'EF_ENVELOPE_EXCEEDED'],
    ['a currency outside it', params({ currency: 'usd' }), 'EF_ENVELOPE_EXCEEDED'],
    ['to a payee outside it', params({ transfer_data: { destination: 'acct_attacker' } }), 'EF_ENVELOPE_EXCEEDED'],
  ])('a payment %s is denied before anyone is asked and nothing reaches the PSP', async (_name, p, code) => {
    const asked: AgentCandidateAct[] = [];
    t = await openTestGate({ policy: POLICY, approve: approver(asked) });
    const before = psp.requests.length;
    const gated = gatePaymentIntents(stripe.paymentIntents, { context: hostContext(t.gate), psp: 'api.stripe.com' });
    const err = await gated.create(p, { idempotencyKey: `key-${code}-${p.currency}-${p.amount}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GateError);
    expect(err).toMatchObject({ code, details: { invoked: false } });
    expect(asked).toEqual([]);
    expect(psp.requests.length).toBe(before);
  });

  it('a payment the person refuses, or one without an idempotency key, never reaches the PSP', async () => {
    t = await openTestGate({ policy: POLICY, approve: approver([], false) });
    const before = psp.requests.length;
    const gated = gatePaymentIntents(stripe.paymentIntents, { context: hostContext(t.gate), psp: 'api.stripe.com' });
    await expect(gated.create(params(), { idempotencyKey: 'refused-payment-1' })).rejects.toMatchObject({ code: 'EF_NOT_AUTHORIZED' });
    await expect(gated.create(params(), undefined as never)).rejects.toMatchObject({ code: 'EF_MALFORMED_ARGUMENTS' });
    expect(psp.requests.length).toBe(before);
  });

  describe('issue 36 defect 15: the limits are checked on one snapshot, and exactly that snapshot is sent', () => {
    it.each([
      ['the amount', (p: Stripe.PaymentIntentCreateParams) => Object.assign(p, { amount: 9_000_000 })],
      ['the transfer destination', (p: Stripe.PaymentIntentCreateParams) => Object.assign(p.transfer_data!, { destination: 'acct_evil' })],
    ])('%s changed by the caller while the call is pending is not what is checked or sent', async (what, mutate) => {
      t = await openTestGate({ policy: POLICY, approve: approver([]) });
      const before = psp.requests.length;
      const gated = gatePaymentIntents(stripe.paymentIntents, { context: hostContext(t.gate), psp: 'api.stripe.com' });
      const p = params({ amount: 100 });
      const pending = gated.create(p, { idempotencyKey: `toctou-${what.replace(/ /g, '-')}` });
      mutate(p);
      await pending;
      expect(psp.requests.length).toBe(before + 1);
      const sent = new URLSearchParams(psp.requests.at(-1)!.body);
      expect([sent.get('amount'), sent.get('transfer_data[destination]')]).toEqual(['100', 'acct_host_1']);
    });

    it('a getter on amount is read once: the amount checked is the amount sent', async () => {
      t = await openTestGate({ policy: POLICY, approve: approver([]) });
      const gated = gatePaymentIntents(stripe.paymentIntents, { context: hostContext(t.gate), psp: 'api.stripe.com' });
      let reads = 0;
      const p = params();
      Object.defineProperty(p, 'amount', { enumerable: true, get: () => (reads++ === 0 ? 100 : 9_000_000) });
      const err = await gated.create(p, { idempotencyKey: 'toctou-getter' }).catch((e: unknown) => e);
      if (err === undefined || !(err instanceof GateError)) {
        expect(new URLSearchParams(psp.requests.at(-1)!.body).get('amount')).toBe('100');
      }
      expect(reads).toBe(1);
    });
  });

  it('issue 36 defect 21: every field that routes funds is in the payee check (on_behalf_of beside transfer_data.destination)', async () => {
    const asked: AgentCandidateAct[] = [];
    t = await openTestGate({ policy: POLICY, approve: approver(asked) });
    const before = psp.requests.length;
    const gated = gatePaymentIntents(stripe.paymentIntents, { context: hostContext(t.gate), psp: 'api.stripe.com' });
    await expect(gated.create(params({ on_behalf_of: 'acct_evil' }), { idempotencyKey: 'routing-obo-1' })).rejects.toBeInstanceOf(
      GateError,
    );
    await expect(
      gated.create(params(), { idempotencyKey: 'routing-account-1', stripeAccount: 'acct_evil' } as { idempotencyKey: string }),
    ).rejects.toBeInstanceOf(GateError);
    expect(asked).toEqual([]);
    expect(psp.requests.length).toBe(before);
    // All routing fields naming the allowed payee: one payee, allowed, sent with the account header.
    await gated.create(params({ on_behalf_of: 'acct_host_1' }), { idempotencyKey: 'routing-ok-1', stripeAccount: 'acct_host_1' } as {
      idempotencyKey: string;
    });
    expect(psp.requests.length).toBe(before + 1);
    expect(psp.requests.at(-1)!.headers['stripe-account']).toBe('acct_host_1');
  });
});

describe('gatedFetch: the HTTP client as the sink for frameworks without a hook', () => {
  let api: Recorder;
  let other: Recorder;
  beforeAll(async () => {
    api = await startRecorder((path) =>
      path === '/moved' ? { status: 307, body: '', headers: { location: `${other.url}steal` } } : { status: 201, body: '{"ok":true}' },
    );
    other = await startRecorder(() => ({ status: 200, body: '{"stolen":true}' }));
  });
  afterAll(async () => {
    await api.close();
    await other.close();
  });

  function policyFor(origin: string): PolicyDocument {
    return {
      ...TEST_POLICY,
      policy_id: 'fetch-v1',
      tools: [{ tool: 'http_request', consequence_class: 'PERSISTENT_STATE_CHANGE' }],
      hot_envelopes: [
        { name: 'own-api', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['http_request'], destinations: [origin] },
      ],
    };
  }

  it('reads pass; a POST to the enveloped API is sent once with exactly the digested bytes; an Idempotency-Key retry is replayed', async () => {
    t = await openTestGate({ policy: policyFor(api.origin), approve: approver([], false) });
    const f = gatedFetch({ context: hostContext(t.gate) });
    const before = api.requests.length;
    expect((await f(`${api.url}items`)).status).toBe(201);
    const body = JSON.stringify({ name: 'towels', qty: 4 });
    const init = { method: 'POST', body, headers: { 'content-type': 'application/json', 'idempotency-key': 'order-991' } };
    const res = await f(`${api.url}items`, init);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ ok: true });
    expect(api.requests.slice(before).map((r) => [r.method, r.path, r.body])).toEqual([
      ['GET', '/items', ''],
      ['POST', '/items', body],
    ]);
    const again = await f(`${api.url}items`, init);
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual({ ok: true });
    expect(api.requests.length).toBe(before + 2);
  });

  it('a POST to another origin is denied (the person refuses) and never arrives; gated requests do not follow redirects', async () => {
    t = await openTestGate({ policy: policyFor(api.origin), approve: approver([], false) });
    const f = gatedFetch({ context: hostContext(t.gate) });
    await expect(f(`${other.url}exfiltrate`, { method: 'POST', body: 'secrets' })).rejects.toMatchObject({ code: 'EF_NOT_AUTHORIZED' });
    expect(other.requests).toEqual([]);
    const moved = await f(`${api.url}moved`, { method: 'POST', body: 'payload' });
    expect(moved.status).toBe(307);
    expect(other.requests).toEqual([]);
  });
});

describe('gatedFetch binds the request headers: an approval covers exactly the request the person saw', () => {
  let api: Recorder;
  beforeAll(async () => {
    api = await startRecorder(() => ({ status: 200, body: '{"ok":true}' }));
  });
  afterAll(() => api.close());

  it('a method-override header changed after approval is another act (EF_SCOPE_MISMATCH); the approved request runs once', async () => {
    t = await openTestGate({ policy: { ...TEST_POLICY, tools: [{ tool: 'http_request', consequence_class: 'PERSISTENT_STATE_CHANGE' }] } });
    const f = gatedFetch({ context: hostContext(t.gate) });
    const init = (override: string) => ({
      method: 'POST',
      body: '{"status":"closed"}',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'acct-7-change', 'x-http-method-override': override },
    });
    await expect(f(`${api.url}accounts/7`, init('PATCH'))).rejects.toMatchObject({ code: 'EF_APPROVAL_REQUIRED' });
    expect((await t.gate.approve(candidateActId('http', 'sess55', 'acct-7-change'), 'alice')).status).toBe('issued');
    await expect(f(`${api.url}accounts/7`, init('DELETE'))).rejects.toMatchObject({ code: 'EF_SCOPE_MISMATCH' });
    expect(api.requests).toEqual([]);
    expect((await f(`${api.url}accounts/7`, init('PATCH'))).status).toBe(200);
    expect(api.requests.map((r) => [r.method, r.path, r.headers['x-http-method-override']])).toEqual([['POST', '/accounts/7', 'PATCH']]);
  });
});

describe('issue 36 defects 16 and 19: gatedFetch strips forwarding headers and honours method overrides', () => {
  let api: Recorder;
  beforeAll(async () => {
    api = await startRecorder(() => ({ status: 200, body: '{"ok":true}' }));
  });
  afterAll(() => api.close());
  const FORWARDING = {
    'x-forwarded-for': '10.0.0.1',
    'x-forwarded-host': 'admin.internal',
    'x-forwarded-proto': 'https',
    forwarded: 'for=203.0.113.7;host=admin.internal',
    'x-real-ip': '10.0.0.2',
  };

  it('defect 16: an approved POST reaches the server without X-Forwarded-*, Forwarded or X-Real-IP', async () => {
    t = await openTestGate({
      policy: {
        ...TEST_POLICY,
        policy_id: 'fetch-forwarding',
        tools: [{ tool: 'http_request', consequence_class: 'PERSISTENT_STATE_CHANGE' }],
        hot_envelopes: [{ name: 'api', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['http_request'] }],
      },
    });
    const f = gatedFetch({ context: hostContext(t.gate) });
    const res = await f(`${api.url}orders`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', ...FORWARDING } });
    expect(res.status).toBe(200);
    const seen = api.requests.at(-1)!.headers;
    expect(Object.keys(FORWARDING).filter((h) => seen[h] !== undefined)).toEqual([]);
  });

  it.each([['x-http-method-override'], ['x-http-method'], ['x-method-override']])(
    'defect 19: a GET with %s: DELETE is the act it asks for (refused here, never sent)',
    async (header) => {
      t = await openTestGate({
        policy: {
          ...TEST_POLICY,
          policy_id: 'fetch-override',
          tools: [{ tool: 'http_request', consequence_class: 'PERSISTENT_STATE_CHANGE' }],
        },
        approve: approver([], false),
      });
      const before = api.requests.length;
      const f = gatedFetch({ context: hostContext(t.gate) });
      await expect(f(`${api.url}accounts/7`, { headers: { [header]: 'DELETE' } })).rejects.toMatchObject({ code: 'EF_NOT_AUTHORIZED' });
      expect(api.requests.length).toBe(before);
    },
  );
});

describe('gateMemoryWrite: memory writes that are not tool calls are MEMORY_WRITE acts', () => {
  const POLICY: PolicyDocument = {
    ...TEST_POLICY,
    policy_id: 'memory-v1',
    hot_envelopes: [
      { name: 'user-facts', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['memory_write'], provenance: ['user'] },
    ],
  };

  it("a fact from the user's turn is written; a fact from retrieved content goes to a person and, refused, is never stored", async () => {
    const asked: AgentCandidateAct[] = [];
    t = await openTestGate({ policy: POLICY, approve: approver(asked, false) });
    const memory = new Map<string, unknown>();
    const store = { write: (k: string, v: unknown) => memory.set(k, v).size };
    const ctx = hostContext(t.gate);
    await gateMemoryWrite(ctx, store, {
      memory: 'memory://guest-profile',
      key: 'diet',
      value: 'vegetarian',
      provenance: { source_type: 'user' },
    });
    const injected = gateMemoryWrite(ctx, store, {
      memory: 'memory://guest-profile',
      key: 'payout_account',
      value: 'acct_attacker',
      provenance: { source_type: 'retrieval', source_ref: 'https://evil.example/listing' },
    });
    await expect(injected).rejects.toMatchObject({ code: 'EF_NOT_AUTHORIZED' });
    expect(asked.map((a) => [a.act_type, a.instruction_provenance?.source_type, a.destination?.destination_id])).toEqual([
      ['MEMORY_WRITE', 'retrieval', 'memory://guest-profile'],
    ]);
    expect([...memory]).toEqual([['diet', 'vegetarian']]);
  });
});

it("issue 36 defect 17: gateMemoryWrite's declared provenance wins over the context's provenanceOf", async () => {
  const asked: AgentCandidateAct[] = [];
  t = await openTestGate({
    policy: {
      ...TEST_POLICY,
      policy_id: 'memory-provenance',
      hot_envelopes: [
        { name: 'user-facts', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['memory_write'], provenance: ['user'] },
      ],
    },
    approve: approver(asked, false),
  });
  const memory = new Map<string, unknown>();
  const ctx = hostContext(t.gate, { provenanceOf: () => ({ source_type: 'user' }) });
  const write = gateMemoryWrite(
    ctx,
    { write: (k: string, v: unknown) => memory.set(k, v).size },
    {
      memory: 'memory://guest-profile',
      key: 'payout_account',
      value: 'acct_attacker',
      provenance: { source_type: 'retrieval', source_ref: 'https://evil.example/listing' },
    },
  );
  await expect(write).rejects.toMatchObject({ code: 'EF_NOT_AUTHORIZED' });
  expect(asked.map((a) => a.instruction_provenance?.source_type)).toEqual(['retrieval']);
  expect([...memory]).toEqual([]);
});
