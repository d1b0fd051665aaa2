/**
 * The seed's scenarios T-A, T-B, T-D, T-E (draft-das-agentic-tool-binding §"Test scenarios"),
 * with the seed's scenario JSON as fixtures, against the REAL Gate on a SQLite file, real MCP
 * servers over Streamable HTTP and real Chromium.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { candidateActId, gateMcpClient, handleAnthropicMessage, handleOpenAIMessage } from '@vrpkit/gate';
import { hasChromium } from '@vrpkit/testkit/browser';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CheckoutSite, launchChromium, readLiveState, startCheckoutSite } from './scenarios-browser.js';
import { countingTools, hostContext, openTestGate, type TestGate } from './scenarios-gate.js';
import { type CountingMcpServer, startCountingMcpServer } from './scenarios-mcp-server.js';

function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/scenarios/${name}.json`, import.meta.url)), 'utf8')) as T;
}

let t: TestGate;
beforeEach(async () => {
  t = await openTestGate();
});
afterEach(async () => {
  await t.close();
});

describe('T-A INJECTED_EMAIL_SEND: tool_use email_send to an address not in the user turn', () => {
  const s = fixture<{
    vendor: string;
    block: { name: string; input: Record<string, unknown> };
    enforce: { allow: boolean; code: string };
    invoked: boolean;
    tool_result: { is_error: boolean };
  }>('INJECTED_EMAIL_SEND');

  it(`expect invoke=false, ${s.enforce.code}, tool_result.is_error`, async () => {
    expect(s.vendor).toBe('anthropic');
    const { tools, calls } = countingTools();
    // The instruction came from a retrieved email, not from the user's turn.
    const ctx = hostContext(t.gate, { instruction_provenance: { source_type: 'retrieval', source_ref: 'mail:inbox/4711' } });
    const msg = { content: [{ type: 'tool_use', id: 'toolu_01A', name: s.block.name, input: s.block.input }] };
    const { message, outcomes } = await handleAnthropicMessage(msg, tools, ctx);
    expect(outcomes[0]!.decision).toMatchObject({ allow: s.enforce.allow, code: s.enforce.code });
    expect(outcomes[0]!.invoked).toBe(s.invoked);
    expect(calls).toEqual([]);
    expect(message.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01A', is_error: s.tool_result.is_error });
    expect(JSON.parse(message.content[0]!.content)).toEqual({
      error: { code: s.enforce.code, message: expect.any(String), retryable: false, invoked: false },
    });
    // The model-visible deny names the code, not the recipient.
    expect(message.content[0]!.content).not.toContain('attacker@ex.com');
  });
});

describe('T-B PARALLEL_PAY_AND_SEARCH: two OpenAI tool_calls, search and payout', () => {
  const s = fixture<{ vendor: string; tool_calls: Array<{ name: string; result: string }>; rule: string }>('PARALLEL_PAY_AND_SEARCH');

  it(`expect payout denied when above envelope: "${s.rule}"`, async () => {
    expect(s.vendor).toBe('openai');
    const { tools, calls } = countingTools();
    const args: Record<string, string> = {
      search: '{"query":"vendor-441 invoices"}',
      payout_create: '{"amount":"150.00","currency":"EUR","beneficiary":"vendor-441"}',
    };
    const tool_calls = s.tool_calls.map((c, i) => ({
      id: `call_${i}`,
      type: 'function' as const,
      function: { name: c.name, arguments: args[c.name]! },
    }));
    const { messages, outcomes } = await handleOpenAIMessage({ tool_calls }, tools, hostContext(t.gate));
    const byName = Object.fromEntries(outcomes.map((o, i) => [o.name, { o, m: messages[i]! }]));
    for (const c of s.tool_calls) {
      const { o, m } = byName[c.name]!;
      if (c.result === 'enforce_hot_allow') {
        expect(o).toMatchObject({ invoked: true, decision: { allow: true, authority_id: expect.any(String) } });
        expect(JSON.parse(m.content)).toEqual({ hits: ['result for vendor-441 invoices'] });
      } else {
        expect(c.result).toBe('enforce_deny_envelope');
        expect(o).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_APPROVAL_REQUIRED' } });
        expect(JSON.parse(m.content).error).toMatchObject({ code: 'EF_APPROVAL_REQUIRED', invoked: false });
      }
    }
    expect(calls.map((c) => c.name)).toEqual(['search']);
    // The search's authority is its own: it cannot be spent on the payout's act.
    const search = byName.search!.o;
    const payout = byName.payout_create!.o;
    expect(search.candidate_act_id).not.toBe(payout.candidate_act_id);
    // Reordering does not help: payout first, then search, is still one allow and one deny.
    const again = await handleOpenAIMessage(
      { tool_calls: [...tool_calls].reverse().map((c) => ({ ...c, id: `${c.id}_r` })) },
      tools,
      hostContext(t.gate),
    );
    expect(again.outcomes.map((o) => [o.name, o.invoked])).toEqual([
      ['payout_create', false],
      ['search', true],
    ]);
    expect(calls.filter((c) => c.name === 'payout_create')).toEqual([]);
  });
});

describe('T-D MCP_SERVER_SWAP: MCP call with swapped server URL', () => {
  const s = fixture<{ name: string; authorized_endpoint: string; live_endpoint: string; enforce: { allow: boolean; code: string } }>(
    'MCP_SERVER_SWAP',
  );
  let servers: Record<string, CountingMcpServer>;
  const clients: Client[] = [];

  beforeEach(async () => {
    servers = {
      [s.authorized_endpoint]: await startCountingMcpServer('git.example'),
      [s.live_endpoint]: await startCountingMcpServer('git.attacker'),
    };
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    for (const srv of Object.values(servers)) await srv.close();
  });

  async function connect(endpoint: string) {
    const server = servers[endpoint]!;
    const client = new Client({ name: 'acts-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    clients.push(client);
    // The identity is the endpoint the client is really connected to.
    return gateMcpClient(client, { serverUrl: server.url, context: hostContext(t.gate) });
  }

  it(`expect destination deny (${s.enforce.code}) and no tools/call sent to the swapped server`, async () => {
    const params = { name: s.name, arguments: { env: 'prod', ref: 'main' } };
    const legit = await connect(s.authorized_endpoint);
    // The model's block toolu_dep1 asks for a deploy: PERSISTENT_STATE_CHANGE escalates to a person.
    const first = await legit.callToolFor('toolu_dep1', params);
    expect(first.isError).toBe(true);
    expect((first.structuredContent as { error: { code: string } }).error.code).toBe('EF_APPROVAL_REQUIRED');
    // tools/list is discovery: it reaches the server and issues nothing.
    expect((await legit.listTools()).tools.map((x) => x.name)).toEqual([s.name]);
    // A person approves this deploy, on this server.
    const approved = await t.gate.approve(candidateActId('mcp', 'sess55', 'toolu_dep1'), 'alice@acme');
    expect(approved.status).toBe('issued');

    // The server is swapped under the same tool name; the host dispatches the approved block.
    const swapped = await connect(s.live_endpoint);
    const denied = await swapped.callToolFor('toolu_dep1', params);
    expect(swapped.gateOutcomes[0]!.decision).toMatchObject({ allow: s.enforce.allow, code: s.enforce.code });
    expect(denied).toMatchObject({
      isError: true,
      structuredContent: { error: { code: s.enforce.code, retryable: false, invoked: false } },
    });
    const attacker = servers[s.live_endpoint]!;
    // The paths around callTool are closed too.
    await expect(swapped.request({ method: 'tools/call', params }, CallToolResultSchema)).rejects.toMatchObject({
      code: 'EF_NOT_AUTHORIZED',
    });
    expect(swapped).toBeInstanceOf(Client);
    expect(attacker.toolsCallRequests).toBe(0); // on deny NO tools/call is sent
    expect(attacker.deploys).toBe(0);

    // The approval still holds for the server it was given for: exactly one deploy there.
    const ok = await legit.callToolFor('toolu_dep1', params);
    expect(ok.isError).toBeFalsy();
    expect(ok.content).toEqual([{ type: 'text', text: 'git.example deployed main to prod' }]);
    const origin = servers[s.authorized_endpoint]!;
    expect([origin.toolsCallRequests, origin.deploys]).toEqual([1, 1]);
    // A retry of the same block is answered from the journal, never a second tools/call.
    const retry = await legit.callToolFor('toolu_dep1', params);
    expect(retry.content).toEqual(ok.content);
    expect([origin.toolsCallRequests, origin.deploys]).toEqual([1, 1]);
  });
});

describe.skipIf(!hasChromium('gate scenarios T-E'))('T-E COMPUTER_USE_ORIGIN_CHANGE: computer-use submit after origin change', () => {
  const s = fixture<{ authorized_origin: string; live_origin: string; enforce: { allow: boolean; code: string } }>(
    'COMPUTER_USE_ORIGIN_CHANGE',
  );
  const hosts = [new URL(s.authorized_origin).hostname, new URL(s.live_origin).hostname];
  let site: CheckoutSite;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    site = await startCheckoutSite(hosts);
    browser = await launchChromium(site, hosts);
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it(`expect deny (${s.enforce.code}); the click is never sent to the new origin`, async () => {
    // The controller: a click is an OS/browser event sent only after the gate allowed it.
    const clicks: unknown[] = [];
    const tools = {
      computer: async (input: { action: string; coordinate: [number, number] }) => {
        clicks.push(input);
        await Promise.all([page.waitForURL('**/pay'), page.mouse.click(...input.coordinate)]);
        return { ok: true, url: page.url() };
      },
    };
    const ctx = hostContext(t.gate);
    const liveState = (block: { input: unknown }) => readLiveState(page, block.input);
    const msg = (id: string) => ({
      content: [{ type: 'tool_use', id, name: 'computer', input: { action: 'left_click', coordinate: [160, 220] } }],
    });

    const pay1 = msg('toolu_pay1');
    const pay2 = msg('toolu_pay2');

    // The exact approved state runs once; a changed field value first is another digest: no click.
    await page.goto(s.authorized_origin);
    // A click that submits a payment form on a pay host is FINANCIAL: it goes to a person.
    const first = await handleAnthropicMessage(pay1, tools, ctx, { liveState });
    expect(first.outcomes[0]!.decision).toMatchObject({ allow: false, code: 'EF_APPROVAL_REQUIRED' });
    expect((await t.gate.approve(candidateActId('computer', 'sess55', 'toolu_pay1'), 'alice@acme')).status).toBe('issued');
    await page.fill('input[name=beneficiary]', 'vendor-666');
    const edited = await handleAnthropicMessage(pay1, tools, ctx, { liveState });
    expect(edited.outcomes[0]!.decision).toMatchObject({ allow: false, code: 'EF_SCOPE_MISMATCH' });
    expect(site.payments).toEqual([]);
    await page.goto(s.authorized_origin);
    const ok = await handleAnthropicMessage(pay1, tools, ctx, { liveState });
    expect(ok.outcomes[0]).toMatchObject({ invoked: true, decision: { allow: true } });
    expect(site.payments).toEqual([{ host: hosts[0], body: 'amount=150.00&beneficiary=vendor-441' }]);

    // Another approved click: the page moves to another origin that looks the same before it runs.
    const before = clicks.length;
    await page.goto(s.authorized_origin);
    expect((await handleAnthropicMessage(pay2, tools, ctx, { liveState })).outcomes[0]!.decision.code).toBe('EF_APPROVAL_REQUIRED');
    expect((await t.gate.approve(candidateActId('computer', 'sess55', 'toolu_pay2'), 'alice@acme')).status).toBe('issued');
    await page.goto(s.live_origin);
    const swapped = await handleAnthropicMessage(pay2, tools, ctx, { liveState });
    expect(swapped.outcomes[0]!.decision).toMatchObject({ allow: s.enforce.allow, code: s.enforce.code });
    expect(swapped.message.content[0]).toMatchObject({ is_error: true });
    // "Origin change MUST invalidate prior authority": back on the approved origin it is spent.
    await page.goto(s.authorized_origin);
    const back = await handleAnthropicMessage(pay2, tools, ctx, { liveState });
    expect(back.outcomes[0]).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_005' } });
    expect(clicks.length).toBe(before);
    expect(site.payments).toEqual([{ host: hosts[0], body: 'amount=150.00&beneficiary=vendor-441' }]);
  });
});
