import { GateError, isEfCode } from '../../errors.js';
import { parseIJson } from '../../ijson.js';
import type { ToolUseBlockLike } from './map.js';

/** The Messages API stream events the accumulator reads (structural; the SDK's `RawMessageStreamEvent` fits). */
export type AnthropicStreamEventLike =
  | { type: 'content_block_start'; index: number; content_block: { type: string; id?: string; name?: string; input?: unknown } }
  | { type: 'content_block_delta'; index: number; delta: { type: string; partial_json?: string } }
  | { type: 'content_block_stop'; index: number }
  | { type: string };

/** A finalized tool_use block, or — when its streamed input is not I-JSON — its id and the error to deny it with. */
export type FinalizedToolUse = { ok: true; block: ToolUseBlockLike } | { ok: false; id: string; name: string; error: GateError };

interface OpenBlock {
  id: string;
  name: string;
  json: string;
}

/**
 * Accumulates Anthropic `input_json_delta` fragments per content block index and hands out a
 * tool_use block only at its `content_block_stop` (Tool-Use Binding draft, streaming: "A partial tool_use …
 * MUST remain non-effective. enforce() MUST run only on the finalized block"). Nothing about a
 * block is observable before then, so a host cannot act on a partial object by mistake.
 */
export class ToolUseStreamAccumulator {
  readonly #open = new Map<number, OpenBlock>();

  /** Feed one stream event; returns the tool_use block this event finalized, if any. */
  push(event: AnthropicStreamEventLike): FinalizedToolUse | undefined {
    if (event.type === 'content_block_start' && 'content_block' in event) {
      const b = event.content_block;
      if (b.type === 'tool_use') this.#open.set(event.index, { id: b.id ?? '', name: b.name ?? '', json: '' });
      return undefined;
    }
    if (event.type === 'content_block_delta' && 'delta' in event) {
      const open = this.#open.get(event.index);
      if (open && event.delta.type === 'input_json_delta') open.json += event.delta.partial_json ?? '';
      return undefined;
    }
    if (event.type === 'content_block_stop' && 'index' in event) {
      const open = this.#open.get(event.index);
      if (!open) return undefined;
      this.#open.delete(event.index);
      try {
        // A tool with no parameters streams no fragment: its input is the empty object.
        const input = open.json.trim() === '' ? {} : parseIJson(open.json);
        return { ok: true, block: { type: 'tool_use', id: open.id, name: open.name, input } };
      } catch (e) {
        const error = e instanceof GateError && isEfCode(e.code) ? e : new GateError('EF_MALFORMED_ARGUMENTS');
        return { ok: false, id: open.id, name: open.name, error };
      }
    }
    return undefined;
  }

  /** How many tool_use blocks are still partial (and therefore non-effective). */
  get pending(): number {
    return this.#open.size;
  }
}
