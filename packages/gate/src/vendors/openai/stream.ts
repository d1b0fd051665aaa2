import type { ToolCallLike } from './map.js';

/** A Chat Completions stream chunk (structural; the SDK's `ChatCompletionChunk` fits). */
export interface ChatCompletionChunkLike {
  choices: Array<{
    index: number;
    delta?: { tool_calls?: Array<{ index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }> | null };
    finish_reason?: string | null;
  }>;
}

/** Finish reasons after which the streamed tool calls are complete. */
const COMPLETE_FINISH = new Set(['tool_calls', 'stop']);

interface OpenCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Accumulates OpenAI `tool_calls` deltas by choice and call index (the `id` and the name arrive
 * only in the first fragment) and hands out the calls only when the choice finishes (Tool-Use Binding
 * draft, streaming: "A partial … function.arguments string MUST remain non-effective"). The
 * arguments stay text: the adapter parses them as I-JSON and denies malformed ones.
 */
export class ToolCallStreamAccumulator {
  readonly #choices = new Map<number, Map<number, OpenCall>>();

  /** Feed one chunk; returns the finalized tool calls of every choice this chunk finished. */
  push(chunk: ChatCompletionChunkLike): ToolCallLike[] | undefined {
    let finished: ToolCallLike[] | undefined;
    for (const choice of chunk.choices) {
      let calls = this.#choices.get(choice.index);
      for (const d of choice.delta?.tool_calls ?? []) {
        if (!calls) {
          calls = new Map();
          this.#choices.set(choice.index, calls);
        }
        const call = calls.get(d.index) ?? { id: '', name: '', arguments: '' };
        if (d.id) call.id = d.id;
        if (d.function?.name) call.name += d.function.name;
        if (d.function?.arguments) call.arguments += d.function.arguments;
        calls.set(d.index, call);
      }
      if (choice.finish_reason) {
        this.#choices.delete(choice.index);
        // A choice cut off by `length` or a filter may end inside an arguments string: its calls stay partial, never effective.
        if (!COMPLETE_FINISH.has(choice.finish_reason)) continue;
        const done = [...(calls?.entries() ?? [])]
          .sort(([a], [b]) => a - b)
          .map(([, c]): ToolCallLike => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
        finished = [...(finished ?? []), ...done];
      }
    }
    return finished;
  }

  /** How many tool calls are still partial (and therefore non-effective). */
  get pending(): number {
    let n = 0;
    for (const calls of this.#choices.values()) n += calls.size;
    return n;
  }
}
