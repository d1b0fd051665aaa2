/**
 * An Anthropic-shaped host loop with the gate on the invoke arrow (Tool-Use Binding draft, informative pseudo-code:
 * HANDLE_ANTHROPIC_MESSAGE). Without ANTHROPIC_API_KEY it replays recorded Messages API
 * responses; with it, the same loop runs live through `@anthropic-ai/sdk`.
 *
 *   npx tsx --conditions=vrpkit-source examples/src/anthropic-loop.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Message, MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { handleAnthropicMessage, type ToolCallOutcome } from '@vrpkit/gate';
import { type ExampleHost, openExampleHost, USER_PROMPT } from './host.js';
import { printRun } from './report.js';
import { type ExampleWorld, exampleTools, newWorld, TOOL_SPECS } from './tools.js';

export type CreateMessage = (params: MessageCreateParamsNonStreaming) => Promise<Message>;

export const ANTHROPIC_TOOLS: Tool[] = TOOL_SPECS.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema }));

export async function runAnthropicLoop(opts: {
  createMessage: CreateMessage;
  host: ExampleHost;
  world: ExampleWorld;
  model: string;
  prompt?: string;
  maxTurns?: number;
}): Promise<{ messages: MessageParam[]; outcomes: ToolCallOutcome[]; final: string }> {
  const tools = exampleTools(opts.world);
  const ctx = opts.host.context(opts.model, 'anthropic-host-loop');
  const messages: MessageParam[] = [{ role: 'user', content: opts.prompt ?? USER_PROMPT }];
  const outcomes: ToolCallOutcome[] = [];
  for (let turn = 0; turn < (opts.maxTurns ?? 6); turn++) {
    const res = await opts.createMessage({ model: opts.model, max_tokens: 1024, tools: ANTHROPIC_TOOLS, messages });
    messages.push({ role: 'assistant', content: res.content });
    if (res.stop_reason !== 'tool_use') {
      return { messages, outcomes, final: res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n') };
    }
    for (const b of res.content) if (b.type === 'tool_use') opts.host.desk.note(b.name, b.input);
    // tool_use is not invoke(): every block goes through the gate; denies come back as is_error results.
    const handled = await handleAnthropicMessage(res, tools, ctx);
    outcomes.push(...handled.outcomes);
    messages.push(handled.message);
  }
  return { messages, outcomes, final: '' };
}

/** Recorded Messages API responses, replayed in order; like the API, it refuses a turn that leaves a tool_use unanswered. */
export function replayAnthropic(recording: Message[]): CreateMessage {
  let i = 0;
  return async (params) => {
    const previous = recording[i - 1];
    const last = params.messages.at(-1);
    if (previous?.stop_reason === 'tool_use') {
      const answered = new Set(
        Array.isArray(last?.content) ? last.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])) : [],
      );
      for (const b of previous.content)
        if (b.type === 'tool_use' && !answered.has(b.id)) throw new Error(`tool_use ${b.id} has no tool_result`);
    }
    const next = recording[i++];
    if (!next) throw new Error('the recording has no more responses');
    return structuredClone(next);
  };
}

export const ANTHROPIC_RECORDING = fileURLToPath(new URL('../recordings/anthropic-messages.json', import.meta.url));

async function main(): Promise<void> {
  const world = newWorld();
  const dataDir = mkdtempSync(join(tmpdir(), 'vrpkit-example-'));
  const host = await openExampleHost(dataDir);
  let createMessage: CreateMessage;
  let model = process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5';
  if (process.env.ANTHROPIC_API_KEY) {
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    const client = new Anthropic();
    createMessage = (params) => client.messages.create(params);
  } else {
    const recording = JSON.parse(readFileSync(ANTHROPIC_RECORDING, 'utf8')) as Message[];
    model = recording[0]!.model;
    createMessage = replayAnthropic(recording);
    process.stdout.write('ANTHROPIC_API_KEY is not set: replaying recorded responses.\n');
  }
  try {
    printRun(await runAnthropicLoop({ createMessage, host, world, model }), world);
  } finally {
    await host.gate.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
