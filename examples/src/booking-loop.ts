/**
 * The gated direct-booking loop, for Anthropic Messages and OpenAI Responses: the model finds a
 * host's verified offer over MCP, quotes it, and asks to book it; the booking runs only with a
 * person's approval bound to that verified offer (docs/booking.md). Without an API key it
 * replays recorded model responses; with ANTHROPIC_API_KEY / OPENAI_API_KEY it runs live.
 *
 *   npx tsx --conditions=vrpkit-source examples/src/booking-loop.ts anthropic|responses --node https://villa.example \
 *     [--connect-to HOST:443:ADDR:PORT --cacert ca.pem] [--yes]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Message, MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { BOOKING_TOOL_SPECS, type BookingHost } from '@vrpkit/agent';
import type { ToolCallOutcome } from '@vrpkit/gate';
import type { BookingGuest } from '@vrpkit/protocol';
import type { FunctionTool, Response, ResponseCreateParamsNonStreaming, ResponseInputItem } from 'openai/resources/responses/responses';

export const BOOKING_POLICY_FILE = fileURLToPath(new URL('../booking-policy.yaml', import.meta.url));
export const ANTHROPIC_BOOKING_RECORDING = fileURLToPath(new URL('../recordings/booking-anthropic-messages.json', import.meta.url));
export const RESPONSES_BOOKING_RECORDING = fileURLToPath(new URL('../recordings/booking-openai-responses.json', import.meta.url));

/** The stay the recordings ask for, and the instant they were recorded at (a node on this clock signs offers for it). */
export const RECORDED_AT = '2027-03-01T09:00:00Z';
export const BOOKING_PROMPT =
  'Find the verified direct offer for 2 guests from 2027-04-10 to 2027-04-13 at villa-booking.example and book it for me if it is safe to quote.';

/** The guest the host books for: from the user's profile, never from the model. */
export const DEMO_GUEST: BookingGuest = { name: 'Alice Example', email: 'alice@example.com' };

export type CreateMessage = (params: MessageCreateParamsNonStreaming) => Promise<Message>;
export type CreateResponse = (params: ResponseCreateParamsNonStreaming) => Promise<Response>;

export const ANTHROPIC_BOOKING_TOOLS: Tool[] = BOOKING_TOOL_SPECS.map((t) => ({
  name: t.name,
  description: t.description,
  input_schema: t.schema,
}));
export const RESPONSES_BOOKING_TOOLS: FunctionTool[] = BOOKING_TOOL_SPECS.map((t) => ({
  type: 'function',
  name: t.name,
  description: t.description,
  parameters: t.schema,
  strict: false,
}));

export interface BookingRun {
  outcomes: ToolCallOutcome[];
  final: string;
}

/** Anthropic Messages: every `tool_use` block goes through the booking host (and so through the gate). */
export async function runAnthropicBookingLoop(opts: {
  createMessage: CreateMessage;
  host: BookingHost;
  model: string;
  prompt?: string;
  maxTurns?: number;
}): Promise<BookingRun> {
  const messages: MessageParam[] = [{ role: 'user', content: opts.prompt ?? BOOKING_PROMPT }];
  const outcomes: ToolCallOutcome[] = [];
  for (let turn = 0; turn < (opts.maxTurns ?? 6); turn++) {
    const res = await opts.createMessage({ model: opts.model, max_tokens: 1024, tools: ANTHROPIC_BOOKING_TOOLS, messages });
    messages.push({ role: 'assistant', content: res.content });
    if (res.stop_reason !== 'tool_use')
      return { outcomes, final: res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n') };
    const blocks = res.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    // Parallel blocks are dispatched in parallel: one approval never covers two of them.
    const handled = await Promise.all(blocks.map((b) => opts.host.handle('anthropic', b)));
    outcomes.push(...handled.map((h) => h.outcome));
    messages.push({
      role: 'user',
      content: handled.map((h, i) => ({
        type: 'tool_result' as const,
        tool_use_id: blocks[i]!.id,
        content: h.text,
        ...(h.isError ? { is_error: true } : {}),
      })),
    });
  }
  return { outcomes, final: '' };
}

/** OpenAI Responses: every `function_call` item goes through the booking host. */
export async function runResponsesBookingLoop(opts: {
  createResponse: CreateResponse;
  host: BookingHost;
  model: string;
  prompt?: string;
  maxTurns?: number;
}): Promise<BookingRun> {
  const input: ResponseInputItem[] = [{ role: 'user', content: opts.prompt ?? BOOKING_PROMPT }];
  const outcomes: ToolCallOutcome[] = [];
  for (let turn = 0; turn < (opts.maxTurns ?? 6); turn++) {
    const res = await opts.createResponse({ model: opts.model, tools: RESPONSES_BOOKING_TOOLS, input });
    input.push(...(res.output as ResponseInputItem[]));
    const calls = res.output.flatMap((o) => (o.type === 'function_call' ? [o] : []));
    // The raw API object (a recording) has no SDK `output_text` convenience: read the message items.
    if (!calls.length)
      return {
        outcomes,
        final: res.output
          .flatMap((o) => (o.type === 'message' ? o.content.flatMap((c) => (c.type === 'output_text' ? [c.text] : [])) : []))
          .join('\n'),
      };
    const handled = await Promise.all(
      calls.map((c) => {
        let args: unknown;
        try {
          args = JSON.parse(c.arguments);
        } catch {
          args = c.arguments; // not JSON: the host's schema check refuses it
        }
        return opts.host.handle('responses', { id: c.call_id, name: c.name, input: args });
      }),
    );
    outcomes.push(...handled.map((h) => h.outcome));
    input.push(...handled.map((h, i) => ({ type: 'function_call_output' as const, call_id: calls[i]!.call_id, output: h.text })));
  }
  return { outcomes, final: '' };
}

/** Recorded Messages API responses in order; like the API, a turn that leaves a tool_use unanswered is refused. */
export function replayAnthropicBooking(recording: Message[]): CreateMessage {
  let i = 0;
  return async (params) => {
    const previous = recording[i - 1];
    const last = params.messages.at(-1);
    const answered = new Set(
      Array.isArray(last?.content) ? last.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])) : [],
    );
    for (const b of previous?.content ?? [])
      if (b.type === 'tool_use' && !answered.has(b.id)) throw new Error(`tool_use ${b.id} has no tool_result`);
    const next = recording[i++];
    if (!next) throw new Error('the recording has no more responses');
    return structuredClone(next);
  };
}

/** Recorded Responses API responses in order; like the API, a function_call without its output is refused. */
export function replayResponsesBooking(recording: Response[]): CreateResponse {
  let i = 0;
  return async (params) => {
    const items = Array.isArray(params.input) ? params.input : [];
    const answered = new Set(items.flatMap((m) => ('type' in m && m.type === 'function_call_output' ? [m.call_id] : [])));
    for (const o of recording[i - 1]?.output ?? [])
      if (o.type === 'function_call' && !answered.has(o.call_id)) throw new Error(`function_call ${o.call_id} has no output`);
    const next = recording[i++];
    if (!next) throw new Error('the recording has no more responses');
    return structuredClone(next);
  };
}

export function readRecording<T>(file: string): T[] {
  return JSON.parse(readFileSync(file, 'utf8')) as T[];
}
