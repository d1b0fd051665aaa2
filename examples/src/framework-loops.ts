/**
 * The same story as the host loops, for agents written with a framework that runs tools itself:
 * the Vercel AI SDK (`generateText`) and the OpenAI Agents SDK (`run`). The only change to an
 * ordinary framework program is one wrapper around the tools (`gateAiSdkTools`,
 * `gateAgentsFunctionTool`); the framework's own loop calls them, and the gate decides each call.
 * Without a key both replay the recorded model turns of `recordings/openai-chat-completions.json`;
 * with OPENAI_API_KEY the Agents SDK loop runs live (the AI SDK loop takes any provider's model).
 *
 *   npx tsx --conditions=vrpkit-source examples/src/framework-loops.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  Agent,
  tool as agentsTool,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  setTracingDisabled,
  Usage,
} from '@openai/agents';
import { gateAgentsFunctionTool, gateAiSdkTools } from '@vrpkit/gate';
import { generateText, jsonSchema, type LanguageModel, stepCountIs, type ToolSet, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { type ExampleHost, openExampleHost, USER_PROMPT } from './host.js';
import { OPENAI_RECORDING } from './openai-loop.js';
import { type ExampleWorld, exampleTools, newWorld, TOOL_SPECS } from './tools.js';

/** One recorded model turn: the tool calls it makes, or its final text. */
interface Turn {
  calls: Array<{ id: string; name: string; arguments: string }>;
  text: string;
}

export function recordedTurns(file = OPENAI_RECORDING): Turn[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as ChatCompletion[]).map((r) => {
    const m = r.choices[0]!.message;
    return {
      calls: (m.tool_calls ?? []).flatMap((c) =>
        c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
      ),
      text: m.content ?? '',
    };
  });
}

/** Vercel AI SDK: `generateText` runs the tools; `gateAiSdkTools` puts the gate in front of each `execute`. */
export async function runAiSdkLoop(opts: { host: ExampleHost; world: ExampleWorld; model: LanguageModel }) {
  const impl = exampleTools(opts.world);
  const tools: ToolSet = {};
  for (const s of TOOL_SPECS) {
    const execute = impl[s.name as keyof typeof impl] as unknown as (a: Record<string, unknown>) => Promise<unknown>;
    tools[s.name] = tool({ description: s.description, inputSchema: jsonSchema<Record<string, unknown>>(s.schema), execute });
  }
  const gated = gateAiSdkTools(tools, opts.host.context('ai-sdk-model', 'ai-sdk-loop'));
  // The desk sees each call's arguments before the gate asks it (the person approves what they were shown).
  for (const [name, t] of Object.entries(gated)) {
    const execute = t.execute!;
    t.execute = (input, options) => {
      opts.host.desk.note(name, input);
      return execute(input, options);
    };
  }
  const result = await generateText({ model: opts.model, tools: gated, prompt: USER_PROMPT, stopWhen: stepCountIs(6) });
  const denied = result.steps.flatMap((s) => s.content.flatMap((c) => (c.type === 'tool-error' ? [denyCode(c.error)] : [])));
  return { final: result.text, denied };
}

/** The recorded turns as the AI SDK's model: each turn's calls become `tool-call` parts. */
export function recordedAiSdkModel(turns: Turn[]): MockLanguageModelV3 {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 0, text: 0, reasoning: undefined },
  };
  return new MockLanguageModelV3({
    doGenerate: turns.map((t) => ({
      content: t.calls.length
        ? t.calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.arguments }))
        : [{ type: 'text' as const, text: t.text }],
      finishReason: { unified: t.calls.length ? ('tool-calls' as const) : ('stop' as const), raw: undefined },
      usage,
      warnings: [],
    })),
  });
}

/** OpenAI Agents SDK: `run` invokes the function tools; `gateAgentsFunctionTool` gates each `invoke`. */
export async function runAgentsSdkLoop(opts: { host: ExampleHost; world: ExampleWorld; model: Model | string }) {
  setTracingDisabled(true);
  const impl = exampleTools(opts.world);
  const context = opts.host.context(typeof opts.model === 'string' ? opts.model : 'recorded', 'openai-agents-loop');
  const describe = (name: string) => TOOL_SPECS.find((t) => t.name === name)!.description;
  const plain = [
    agentsTool({
      name: 'search',
      description: describe('search'),
      parameters: z.object({ query: z.string() }),
      execute: async (args) => JSON.stringify(await impl.search(args)),
    }),
    agentsTool({
      name: 'email_send',
      description: describe('email_send'),
      parameters: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
      execute: async (args) => JSON.stringify(await impl.email_send(args)),
    }),
    agentsTool({
      name: 'payout_create',
      description: describe('payout_create'),
      parameters: z.object({ amount: z.string(), currency: z.string(), beneficiary: z.string() }),
      execute: async (args) => JSON.stringify(await impl.payout_create(args)),
    }),
  ];
  const tools = plain.map((t) => {
    const gated = gateAgentsFunctionTool(t, context);
    const invoke = gated.invoke;
    // The desk sees each call's arguments before the gate asks it.
    gated.invoke = (ctx, input, details) => {
      try {
        opts.host.desk.note(t.name, JSON.parse(input));
      } catch {}
      return invoke(ctx, input, details);
    };
    return gated;
  });
  const result = await run(new Agent({ name: 'payables', instructions: 'You handle invoices.', model: opts.model, tools }), USER_PROMPT);
  return { final: String(result.finalOutput ?? '') };
}

/** The recorded turns as an Agents SDK `Model`: each turn's calls become `function_call` items. */
export class RecordedAgentsModel implements Model {
  #i = 0;
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: Turn[]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const t = this.turns[this.#i++];
    if (!t) throw new Error('the recording has no more turns');
    return {
      usage: new Usage(),
      output: t.calls.length
        ? t.calls.map((c) => ({
            type: 'function_call' as const,
            callId: c.id,
            name: c.name,
            arguments: c.arguments,
            status: 'completed' as const,
          }))
        : [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t.text }] }],
    };
  }
  // biome-ignore lint/correctness/useYield: a recording does not stream
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the recording does not stream');
  }
}

function denyCode(error: unknown): string {
  try {
    return JSON.parse((error as Error).message).error.code as string;
  } catch {
    return 'tool_error';
  }
}

function report(label: string, world: ExampleWorld, final: string): void {
  console.log(
    `${label}: ${world.searches.length} search(es), ${world.outbox.length} email(s) [${world.outbox.map((m) => m.to).join(', ')}], ${world.payouts.length} payout(s)`,
  );
  console.log(`  model: ${final}`);
}

async function main(): Promise<void> {
  const turns = recordedTurns();
  for (const loop of ['ai-sdk', 'openai-agents'] as const) {
    const dir = mkdtempSync(join(tmpdir(), `vrpkit-${loop}-`));
    const host = await openExampleHost(dir);
    const world = newWorld();
    try {
      if (loop === 'ai-sdk') {
        const r = await runAiSdkLoop({ host, world, model: recordedAiSdkModel(turns) });
        report('Vercel AI SDK (recorded turns)', world, r.final);
        console.log(`  denied: ${r.denied.join(', ')}`);
      } else {
        const live = process.env.OPENAI_API_KEY;
        const r = await runAgentsSdkLoop({
          host,
          world,
          model: live ? (process.env.OPENAI_MODEL ?? 'gpt-4.1-mini') : new RecordedAgentsModel(turns),
        });
        report(`OpenAI Agents SDK (${live ? 'live' : 'recorded turns'})`, world, r.final);
      }
    } finally {
      await host.gate.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
