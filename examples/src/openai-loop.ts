/**
 * An OpenAI-shaped host loop (Chat Completions) with the gate on the invoke arrow
 * (Tool-Use Binding draft, HANDLE_OPENAI_MESSAGE). Without OPENAI_API_KEY it replays recorded Chat
 * Completions responses; with it, the same loop runs live through `openai`.
 *
 *   npx tsx --conditions=vrpkit-source examples/src/openai-loop.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { handleOpenAIMessage, parseIJson, type ToolCallOutcome } from '@vrpkit/gate';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { type ExampleHost, openExampleHost, USER_PROMPT } from './host.js';
import { printRun } from './report.js';
import { type ExampleWorld, exampleTools, newWorld, TOOL_SPECS } from './tools.js';

export type CreateCompletion = (params: ChatCompletionCreateParamsNonStreaming) => Promise<ChatCompletion>;

export const OPENAI_TOOLS: ChatCompletionTool[] = TOOL_SPECS.map((t) => ({
  type: 'function',
  function: { name: t.name, description: t.description, parameters: t.schema, strict: true },
}));

export async function runOpenAILoop(opts: {
  createCompletion: CreateCompletion;
  host: ExampleHost;
  world: ExampleWorld;
  model: string;
  prompt?: string;
  maxTurns?: number;
}): Promise<{ messages: ChatCompletionMessageParam[]; outcomes: ToolCallOutcome[]; final: string }> {
  const tools = exampleTools(opts.world);
  const ctx = opts.host.context(opts.model, 'openai-host-loop');
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: opts.prompt ?? USER_PROMPT }];
  const outcomes: ToolCallOutcome[] = [];
  for (let turn = 0; turn < (opts.maxTurns ?? 6); turn++) {
    const res = await opts.createCompletion({ model: opts.model, tools: OPENAI_TOOLS, parallel_tool_calls: true, messages });
    const choice = res.choices[0];
    if (!choice) break;
    messages.push(choice.message);
    if (choice.finish_reason !== 'tool_calls' || !choice.message.tool_calls?.length)
      return { messages, outcomes, final: choice.message.content ?? '' };
    for (const c of choice.message.tool_calls) {
      if (c.type !== 'function') continue;
      try {
        opts.host.desk.note(c.function.name, parseIJson(c.function.arguments));
      } catch {
        // Malformed arguments are denied by the gate (EF_MALFORMED_ARGUMENTS); nobody is asked.
      }
    }
    // Each tool_calls[] entry is its own act; one allow never covers a sibling.
    const handled = await handleOpenAIMessage(choice.message, tools, ctx);
    outcomes.push(...handled.outcomes);
    messages.push(...handled.messages);
  }
  return { messages, outcomes, final: '' };
}

/** Recorded Chat Completions responses, replayed in order; like the API, it refuses a turn that leaves a tool call unanswered. */
export function replayOpenAI(recording: ChatCompletion[]): CreateCompletion {
  let i = 0;
  return async (params) => {
    const previous = recording[i - 1]?.choices[0]?.message;
    const answered = new Set(params.messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
    for (const c of previous?.tool_calls ?? []) if (!answered.has(c.id)) throw new Error(`tool call ${c.id} has no tool message`);
    const next = recording[i++];
    if (!next) throw new Error('the recording has no more responses');
    return structuredClone(next);
  };
}

export const OPENAI_RECORDING = fileURLToPath(new URL('../recordings/openai-chat-completions.json', import.meta.url));

async function main(): Promise<void> {
  const world = newWorld();
  const dataDir = mkdtempSync(join(tmpdir(), 'vrpkit-example-'));
  const host = await openExampleHost(dataDir);
  let createCompletion: CreateCompletion;
  let model = process.env.OPENAI_MODEL ?? 'gpt-4.1-mini';
  if (process.env.OPENAI_API_KEY) {
    const { default: OpenAI } = await import('openai');
    const client = new OpenAI();
    createCompletion = (params) => client.chat.completions.create(params);
  } else {
    const recording = JSON.parse(readFileSync(OPENAI_RECORDING, 'utf8')) as ChatCompletion[];
    model = recording[0]!.model;
    createCompletion = replayOpenAI(recording);
    process.stdout.write('OPENAI_API_KEY is not set: replaying recorded responses.\n');
  }
  try {
    printRun(await runOpenAILoop({ createCompletion, host, world, model }), world);
  } finally {
    await host.gate.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
