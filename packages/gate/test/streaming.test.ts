import {
  type AnthropicStreamEventLike,
  type ChatCompletionChunkLike,
  ToolCallStreamAccumulator,
  ToolUseStreamAccumulator,
} from '@vrpkit/gate';
import { describe, expect, it } from 'vitest';

/** A recorded-shape Anthropic stream: text block, then a tool_use whose input arrives in fragments. */
function anthropicEvents(fragments: string[]): AnthropicStreamEventLike[] {
  return [
    { type: 'message_start' },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } as never },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Paying.' } as never },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01P', name: 'payout_create', input: {} } },
    ...fragments.map((partial_json) => ({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json } })),
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta' },
    { type: 'message_stop' },
  ];
}

describe('ToolUseStreamAccumulator (Anthropic input_json_delta)', () => {
  const fragments = ['{"amount":', '"150.00","curr', 'ency":"EUR","beneficiary":"vendor-441"}'];

  it('hands out nothing while the block is partial, and the whole block at content_block_stop', () => {
    const acc = new ToolUseStreamAccumulator();
    const events = anthropicEvents(fragments);
    const stopAt = events.findIndex((e) => e.type === 'content_block_stop' && (e as { index: number }).index === 1);
    const out = events.map((e) => acc.push(e));
    // Every event before the tool block's stop yields nothing: a partial block is non-effective.
    expect(out.slice(0, stopAt).every((x) => x === undefined)).toBe(true);
    expect(acc.pending).toBe(0);
    expect(out[stopAt]).toEqual({
      ok: true,
      block: {
        type: 'tool_use',
        id: 'toolu_01P',
        name: 'payout_create',
        input: { amount: '150.00', currency: 'EUR', beneficiary: 'vendor-441' },
      },
    });
  });

  it('a stream that ends mid-block leaves the block pending and never handed out', () => {
    const acc = new ToolUseStreamAccumulator();
    const events = anthropicEvents(fragments).slice(0, 6); // through the first input fragment only
    expect(events.map((e) => acc.push(e)).filter(Boolean)).toEqual([]);
    expect(acc.pending).toBe(1);
  });

  it('a tool with no parameters (no fragments) is the empty object', () => {
    const acc = new ToolUseStreamAccumulator();
    const done = anthropicEvents([])
      .map((e) => acc.push(e))
      .find(Boolean);
    expect(done).toMatchObject({ ok: true, block: { input: {} } });
  });

  it('malformed streamed input (duplicate keys) finalizes as an error for that id, never as a block', () => {
    const acc = new ToolUseStreamAccumulator();
    const done = anthropicEvents(['{"amount":"1.00",', '"amount":"9000.00"}'])
      .map((e) => acc.push(e))
      .find(Boolean);
    expect(done?.ok).toBe(false);
    expect(done).toMatchObject({ id: 'toolu_01P', name: 'payout_create' });
    if (done && !done.ok) expect(done.error.code).toBe('EF_MALFORMED_ARGUMENTS');
  });
});

/** Recorded-shape Chat Completions chunks with two parallel tool calls interleaved. */
function chatChunks(finish: string | null): ChatCompletionChunkLike[] {
  const d = (tool_calls: NonNullable<NonNullable<ChatCompletionChunkLike['choices'][0]['delta']>['tool_calls']>) => ({
    choices: [{ index: 0, delta: { tool_calls }, finish_reason: null }],
  });
  return [
    d([{ index: 0, id: 'call_s1', type: 'function', function: { name: 'search', arguments: '' } }]),
    d([{ index: 0, function: { arguments: '{"q":"in' } }]),
    d([{ index: 1, id: 'call_p1', type: 'function', function: { name: 'payout_create', arguments: '' } }]),
    d([{ index: 1, function: { arguments: '{"amount":"5000.00",' } }]),
    d([{ index: 0, function: { arguments: 'voices"}' } }]),
    d([{ index: 1, function: { arguments: '"currency":"EUR","beneficiary":"vendor-9"}' } }]),
    { choices: [{ index: 0, delta: {}, finish_reason: finish }] },
  ];
}

describe('ToolCallStreamAccumulator (OpenAI tool_calls deltas)', () => {
  it('hands out the calls, in index order, only when the choice finishes with tool_calls', () => {
    const acc = new ToolCallStreamAccumulator();
    const chunks = chatChunks('tool_calls');
    const out = chunks.map((c) => acc.push(c));
    expect(out.slice(0, -1).every((x) => x === undefined)).toBe(true);
    expect(out.at(-1)).toEqual([
      { id: 'call_s1', type: 'function', function: { name: 'search', arguments: '{"q":"invoices"}' } },
      {
        id: 'call_p1',
        type: 'function',
        function: { name: 'payout_create', arguments: '{"amount":"5000.00","currency":"EUR","beneficiary":"vendor-9"}' },
      },
    ]);
    expect(acc.pending).toBe(0);
  });

  it('partial calls stay pending while the stream is open', () => {
    const acc = new ToolCallStreamAccumulator();
    for (const c of chatChunks('tool_calls').slice(0, 4)) expect(acc.push(c)).toBeUndefined();
    expect(acc.pending).toBe(2);
  });

  it('a choice cut off by length never hands out its calls', () => {
    const acc = new ToolCallStreamAccumulator();
    const out = chatChunks('length').map((c) => acc.push(c));
    expect(out.every((x) => x === undefined)).toBe(true);
    expect(acc.pending).toBe(0);
  });
});
