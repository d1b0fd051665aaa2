import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ChatCompletionChunkLike,
  type DispatchGate,
  digestArguments,
  Gate,
  gateMcpClient,
  handleAnthropicMessage,
  handleOpenAIMessage,
  handleResponsesOutput,
  loadPolicy,
  mapToolUse,
  openSqliteStore,
  resolveActContext,
  ToolCallStreamAccumulator,
  ToolUseStreamAccumulator,
} from '@vrpkit/gate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SIGNING_KEY } from './procs/common.js';
import { countingTools, hostContext, openTestGate, type TestGate } from './scenarios-gate.js';

let t: TestGate;
beforeEach(async () => {
  t = await openTestGate();
});
afterEach(async () => {
  await t.close();
});

const errorOf = (content: string) => JSON.parse(content).error as { code: string; message: string; retryable: boolean; invoked: boolean };

describe('handleAnthropicMessage', () => {
  it('runs an allowed block once and appends its real result; denies a sibling with is_error and runs nothing for it', async () => {
    const { tools, calls } = countingTools();
    const msg = {
      content: [
        { type: 'text', text: 'Searching and mailing.' },
        { type: 'tool_use', id: 'toolu_s', name: 'search', input: { q: 'invoice' } },
        { type: 'tool_use', id: 'toolu_m', name: 'email_send', input: { to: 'alice@example.com', subject: 'Invoice' } },
      ],
    };
    const { message, outcomes } = await handleAnthropicMessage(msg, tools, hostContext(t.gate));
    expect(calls.map((c) => c.name)).toEqual(['search']);
    expect(message.role).toBe('user');
    expect(message.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_s',
      content: JSON.stringify({ hits: ['result for invoice'] }),
    });
    expect(message.content[1]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_m', is_error: true });
    expect(errorOf(message.content[1]!.content)).toEqual({
      code: 'EF_APPROVAL_REQUIRED',
      message: expect.any(String),
      retryable: false,
      invoked: false,
    });
    expect(outcomes.map((o) => [o.id, o.decision.allow, o.invoked])).toEqual([
      ['toolu_s', true, true],
      ['toolu_m', false, false],
    ]);
    // Outcomes carry digests, never the arguments.
    expect(JSON.stringify(outcomes)).not.toContain('alice@example.com');
  });

  it('a retried message never invokes twice: the recorded result comes back', async () => {
    const { tools, calls } = countingTools();
    const msg = { content: [{ type: 'tool_use', id: 'toolu_r', name: 'search', input: { q: 'again' } }] };
    const first = await handleAnthropicMessage(msg, tools, hostContext(t.gate));
    const second = await handleAnthropicMessage(msg, tools, hostContext(t.gate));
    expect(calls).toHaveLength(1);
    expect(second.message.content[0]!.content).toBe(first.message.content[0]!.content);
    expect(second.outcomes[0]).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_005' } });
  });

  it('digest substitution: authority for a search cannot run a send under the same act id', async () => {
    const { tools, calls } = countingTools();
    const ctx = hostContext(t.gate);
    const actCtx = await resolveActContext(ctx);
    if ('allow' in actCtx) throw new Error('no context');
    const search = { type: 'tool_use' as const, id: 'toolu_x', name: 'search', input: { q: 'invoice' } };
    const authorized = await t.gate.authorize(mapToolUse(search, actCtx));
    expect(authorized.status).toBe('issued');
    // The model (or an attacker replaying the id) turns the approved block into a send.
    const send = { ...search, name: 'email_send', input: { to: 'attacker@ex.com' } };
    const { message, outcomes } = await handleAnthropicMessage({ content: [send] }, tools, ctx);
    expect(calls).toEqual([]);
    expect(outcomes[0]).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_SCOPE_MISMATCH' } });
    expect(errorOf(message.content[0]!.content).code).toBe('EF_SCOPE_MISMATCH');
    // And live arguments that differ from the act's own digest are refused before any lookup.
    const act = mapToolUse(search, actCtx);
    expect(await t.gate.enforce(act, { q: 'invoice', to: 'attacker@ex.com' })).toMatchObject({ allow: false, code: 'EF_SCOPE_MISMATCH' });
    expect(calls).toEqual([]);
  });

  it('a name the host has no function for is never authorized', async () => {
    const { tools, calls } = countingTools();
    const { message } = await handleAnthropicMessage(
      { content: [{ type: 'tool_use', id: 'toolu_u', name: 'search_everything', input: {} }] },
      tools,
      hostContext(t.gate),
    );
    expect(calls).toEqual([]);
    expect(errorOf(message.content[0]!.content).code).toBe('EF_NOT_AUTHORIZED');
  });

  it('a tool that throws after an allow reports its own error (invoked: true), not a deny', async () => {
    const { message, outcomes } = await handleAnthropicMessage(
      { content: [{ type: 'tool_use', id: 'toolu_f', name: 'search', input: { q: 'x' } }] },
      {
        search: async () => {
          throw new Error('index offline');
        },
      },
      hostContext(t.gate),
    );
    expect(message.content[0]).toMatchObject({ is_error: true });
    expect(JSON.parse(message.content[0]!.content)).toEqual({
      error: { code: 'tool_error', message: 'index offline', retryable: false, invoked: true },
    });
    expect(outcomes[0]).toMatchObject({ invoked: true });
  });

  it('a gate that cannot read its epochs denies every block of the message (fail closed)', async () => {
    const { tools, calls } = countingTools();
    await t.gate.close(); // the store is gone: the epochs are uncertain
    const { message } = await handleAnthropicMessage(
      { content: [{ type: 'tool_use', id: 'toolu_c', name: 'search', input: { q: 'x' } }] },
      tools,
      hostContext(t.gate),
    );
    expect(calls).toEqual([]);
    expect(message.content[0]).toMatchObject({ is_error: true });
    expect(errorOf(message.content[0]!.content).invoked).toBe(false);
    t = await openTestGate(); // afterEach closes a fresh one
  });

  it('a computer-use block whose live page cannot be read is refused, and nothing is clicked', async () => {
    const clicks: unknown[] = [];
    const block = { type: 'tool_use' as const, id: 'toolu_cu', name: 'computer', input: { action: 'left_click', coordinate: [1, 2] } };
    const tools = { computer: async (input: unknown) => clicks.push(input) };
    const unreadable = await handleAnthropicMessage({ content: [block] }, tools, hostContext(t.gate), {
      liveState: async () => {
        throw new Error('target closed');
      },
    });
    const noController = await handleAnthropicMessage({ content: [{ ...block, id: 'toolu_cu2' }] }, tools, hostContext(t.gate));
    const formHidden = await handleAnthropicMessage({ content: [{ ...block, id: 'toolu_cu3' }] }, tools, hostContext(t.gate), {
      liveState: async () => ({ url: 'https://pay.example/checkout', form: 'unreadable' }),
    });
    for (const r of [unreadable, noController, formHidden])
      expect(r.outcomes[0]!.decision).toMatchObject({ allow: false, code: 'EF_LIVE_STATE_UNREADABLE' });
    expect(clicks).toEqual([]);
  });

  it('a streamed message: only finalized blocks reach the gate; a partial block is never dispatched', async () => {
    const { tools, calls } = countingTools();
    const acc = new ToolUseStreamAccumulator();
    const events = [
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_p1', name: 'search', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"q":"inv' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'oice"}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_p2', name: 'search', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":"sec' } },
      // The stream breaks here: block 1 never stops.
    ];
    const finalized = events.map((e) => acc.push(e)).filter((x) => x !== undefined);
    const blocks = finalized.flatMap((f) => (f.ok ? [f.block] : []));
    await handleAnthropicMessage({ content: blocks }, tools, hostContext(t.gate));
    expect(calls).toEqual([{ name: 'search', args: { q: 'invoice' } }]);
    expect(acc.pending).toBe(1);
  });
});

describe('handleOpenAIMessage', () => {
  it('parallel calls are separate acts: the search runs, the payout does not', async () => {
    const { tools, calls } = countingTools();
    const { messages, outcomes } = await handleOpenAIMessage(
      {
        tool_calls: [
          { id: 'call_s', type: 'function', function: { name: 'search', arguments: '{"q":"vendor-441"}' } },
          {
            id: 'call_p',
            type: 'function',
            function: { name: 'payout_create', arguments: '{"amount":"150.00","currency":"EUR","beneficiary":"vendor-441"}' },
          },
        ],
      },
      tools,
      hostContext(t.gate),
    );
    expect(calls.map((c) => c.name)).toEqual(['search']);
    expect(messages[0]).toEqual({ role: 'tool', tool_call_id: 'call_s', content: JSON.stringify({ hits: ['result for vendor-441'] }) });
    expect(messages[1]!.tool_call_id).toBe('call_p');
    expect(errorOf(messages[1]!.content)).toMatchObject({ code: 'EF_APPROVAL_REQUIRED', invoked: false });
    expect(new Set(outcomes.map((o) => o.candidate_act_id)).size).toBe(2);
  });

  it('malformed arguments (duplicate keys, unsafe integers, truncated JSON) are denied and run nothing', async () => {
    const { tools, calls } = countingTools();
    const { messages } = await handleOpenAIMessage(
      {
        tool_calls: [
          { id: 'call_d', type: 'function', function: { name: 'search', arguments: '{"q":"a","q":"b"}' } },
          { id: 'call_i', type: 'function', function: { name: 'search', arguments: '{"q":9007199254740993}' } },
          { id: 'call_t', type: 'function', function: { name: 'search', arguments: '{"q":"trunc' } },
          { id: 'call_c', type: 'custom', custom: { name: 'search', input: 'free text' } } as never,
        ],
      },
      tools,
      hostContext(t.gate),
    );
    expect(calls).toEqual([]);
    expect(messages.map((m) => [m.tool_call_id, errorOf(m.content).code])).toEqual([
      ['call_d', 'EF_MALFORMED_ARGUMENTS'],
      ['call_i', 'EF_MALFORMED_ARGUMENTS'],
      ['call_t', 'EF_MALFORMED_ARGUMENTS'],
      ['call_c', 'EF_MALFORMED_ACT'],
    ]);
  });

  it('streamed tool_calls reach the gate only when the choice finishes', async () => {
    const { tools, calls } = countingTools();
    const acc = new ToolCallStreamAccumulator();
    type Delta = { index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } };
    const chunk = (tc: Delta): ChatCompletionChunkLike => ({ choices: [{ index: 0, delta: { tool_calls: [tc] }, finish_reason: null }] });
    const chunks: ChatCompletionChunkLike[] = [
      chunk({ index: 0, id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":' } }),
      chunk({ index: 0, function: { arguments: '"hotels"}' } }),
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ];
    for (const c of chunks.slice(0, 2)) {
      expect(acc.push(c)).toBeUndefined();
    }
    expect(calls).toEqual([]);
    const done = acc.push(chunks[2]!);
    await handleOpenAIMessage({ tool_calls: done ?? [] }, tools, hostContext(t.gate));
    expect(calls).toEqual([{ name: 'search', args: { q: 'hotels' } }]);
  });
});

describe('handleResponsesOutput', () => {
  it('maps every function_call item to its own act and answers with function_call_output items', async () => {
    const { tools, calls } = countingTools();
    const { items } = await handleResponsesOutput(
      [
        { type: 'reasoning', id: 'rs_1' } as never,
        { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'search', arguments: '{"q":"x"}', status: 'completed' },
        {
          type: 'function_call',
          id: 'fc_2',
          call_id: 'call_b',
          name: 'email_send',
          arguments: '{"to":"bob@example.com"}',
          status: 'completed',
        },
      ],
      tools,
      hostContext(t.gate),
    );
    expect(calls.map((c) => c.name)).toEqual(['search']);
    expect(items[0]).toEqual({ type: 'function_call_output', call_id: 'call_a', output: JSON.stringify({ hits: ['result for x'] }) });
    expect(items[1]).toMatchObject({ type: 'function_call_output', call_id: 'call_b' });
    expect(errorOf(items[1]!.output).code).toBe('EF_APPROVAL_REQUIRED');
  });
});

/** A gate whose host mutates `mutate()`'s target after enforce allowed and before the tool runs (the TOCTOU window). */
function mutatingGate(gate: TestGate['gate'], mutate: () => void): DispatchGate {
  return {
    sinkId: gate.sinkId,
    policyState: () => gate.policyState(),
    classify: (tool) => gate.classify(tool),
    dispatch: (act, liveArgs, invoke) =>
      gate.dispatch(act, liveArgs, async (args, grant) => {
        mutate();
        return invoke(args, grant);
      }),
  };
}

describe('the tool receives exactly the digested arguments', () => {
  it('Anthropic: mutating the block input after mapping does not change what the function receives', async () => {
    const { tools, calls } = countingTools();
    const input: Record<string, unknown> = { q: 'invoice', filters: { from: 'alice@example.com' } };
    const original = structuredClone(input);
    const block = { type: 'tool_use' as const, id: 'toolu_toctou', name: 'search', input };
    const gate = mutatingGate(t.gate, () => {
      input.q = 'DROP TABLE users';
      (input.filters as Record<string, unknown>).from = 'mallory@example.com';
      input.extra = true;
    });
    const { outcomes } = await handleAnthropicMessage({ content: [block] }, tools, { ...hostContext(t.gate), gate });
    expect(outcomes[0]).toMatchObject({ invoked: true, decision: { allow: true }, arguments_digest: digestArguments(original).value });
    expect(input.q).toBe('DROP TABLE users'); // the caller's object did change …
    expect(calls).toEqual([{ name: 'search', args: original }]); // … the tool got the digested arguments
    expect(calls[0]!.args).not.toBe(input);
  });

  it('MCP: mutating params.arguments after mapping does not change what tools/call sends', async () => {
    const params = { name: 'search', arguments: { q: 'lisbon', opts: { deep: false } } as Record<string, unknown> };
    const original = structuredClone(params.arguments);
    const sent: Array<{ name: string; arguments?: unknown }> = [];
    const fake = {
      callTool: async (p: { name: string; arguments?: unknown }) => {
        sent.push(structuredClone(p));
        return { content: [] };
      },
    };
    const gate = mutatingGate(t.gate, () => {
      params.arguments.q = 'DROP TABLE users';
      (params.arguments.opts as Record<string, unknown>).deep = true;
      params.name = 'email_send';
    });
    const client = gateMcpClient(fake as never, { serverUrl: 'https://mcp.example', context: { ...hostContext(t.gate), gate } });
    await client.callTool(params as never);
    expect(client.gateOutcomes[0]).toMatchObject({ invoked: true, arguments_digest: digestArguments(original).value });
    expect(sent).toEqual([{ name: 'search', arguments: original }]);
    // Absent arguments stay absent on the wire (digested as the empty object).
    await client.callTool({ name: 'search' } as never);
    expect(sent[1]).toEqual({ name: 'search' });
    expect(client.gateOutcomes[1]).toMatchObject({ invoked: true, arguments_digest: digestArguments({}).value });
  });
});

describe('adapters look tools up with tools[block.name]', () => {
  const INHERITED = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];

  it('inherited names (constructor, toString, __proto__) never run, even under a lenient policy', async () => {
    // A lenient policy: every class but the fail-closed ones is on a hot envelope, so only the lookup stands in the way.
    const dir = mkdtempSync(join(tmpdir(), 'gate-inherited-'));
    const store = await openSqliteStore(join(dir, 'authority.sqlite'));
    const lenient = new Gate({
      store,
      policy: loadPolicy({
        version: 1,
        policy_id: 'lenient',
        default_consequence_class: 'INFORMATIONAL',
        hot_envelopes: [{ name: 'everything', consequence_classes: ['INFORMATIONAL', 'OTHER'] }],
      }),
      sinkId: 'host-dispatch-1',
      signingKey: SIGNING_KEY,
    });
    try {
      const { tools, calls } = countingTools();
      const ctx = hostContext(lenient as never);
      const anthropic = await handleAnthropicMessage(
        { content: INHERITED.map((name, i) => ({ type: 'tool_use', id: `toolu_i${i}`, name, input: {} })) },
        tools,
        ctx,
      );
      const chat = await handleOpenAIMessage(
        { tool_calls: INHERITED.map((name, i) => ({ id: `call_i${i}`, type: 'function' as const, function: { name, arguments: '{}' } })) },
        tools,
        ctx,
      );
      const responses = await handleResponsesOutput(
        INHERITED.map((name, i) => ({ type: 'function_call' as const, id: `fc_i${i}`, call_id: `call_r${i}`, name, arguments: '{}' })),
        tools,
        ctx,
      );
      const outcomes = [...anthropic.outcomes, ...chat.outcomes, ...responses.outcomes];
      expect(outcomes).toHaveLength(INHERITED.length * 3);
      for (const o of outcomes) expect(o, o.name).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_NOT_AUTHORIZED' } });
      expect(calls).toEqual([]);
      // The same policy runs a tool the host did register.
      const ok = await handleAnthropicMessage(
        { content: [{ type: 'tool_use', id: 'toolu_ok', name: 'search', input: { q: 'x' } }] },
        tools,
        ctx,
      );
      expect(ok.outcomes[0]).toMatchObject({ invoked: true });
    } finally {
      await lenient.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
