/**
 * Framework adapters against the real SDKs and their own tool loops: the Vercel AI SDK
 * (`generateText` with the SDK's `MockLanguageModelV3` replaying a recorded turn) and the OpenAI
 * Agents SDK (`run` with a `Model` replaying recorded Responses items). The tools count their
 * invocations: a denied call never reaches its tool, an approved one runs exactly once, and the
 * model's next turn carries the EF code.
 */

import {
  Agent,
  tool as agentsTool,
  MCPServerStreamableHttp,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  setTracingDisabled,
  Usage,
} from '@openai/agents';
import { type AgentCandidateAct, gateAgentsFunctionTool, gateAgentsMcpServer, gateAiSdkTools } from '@vrpkit/gate';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { hostContext, openTestGate, type TestGate } from './scenarios-gate.js';
import { startCountingMcpServer } from './scenarios-mcp-server.js';

let t: TestGate | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function approver(asked: string[], answer: boolean) {
  return async (act: AgentCandidateAct): Promise<boolean> => {
    asked.push(act.tool.tool_id);
    return answer;
  };
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A recorded two-step turn: the model calls search and payout_create in parallel, then answers. */
function recordedAiSdkModel() {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          { type: 'tool-call', toolCallId: 'call_search_1', toolName: 'search', input: '{"query":"vendor-441 invoices"}' },
          {
            type: 'tool-call',
            toolCallId: 'call_payout_1',
            toolName: 'payout_create',
            input: '{"amount":"150.00","currency":"EUR","beneficiary":"vendor-441"}',
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      },
      { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
    ],
  });
}

describe('Vercel AI SDK (ai 6): gateAiSdkTools wraps each execute', () => {
  function tools(calls: string[]) {
    return {
      search: tool({
        description: 'Search invoices',
        inputSchema: jsonSchema<{ query: string }>({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }),
        execute: async ({ query }) => {
          calls.push(`search:${query}`);
          return { hits: 1 };
        },
      }),
      payout_create: tool({
        description: 'Pay a vendor',
        inputSchema: z.object({ amount: z.string(), currency: z.string(), beneficiary: z.string() }),
        execute: async ({ amount }) => {
          calls.push(`payout:${amount}`);
          return { payout_id: 'po_1' };
        },
      }),
    };
  }

  it('the refused payout never reaches its tool; the model sees EF code in a tool error; the search runs once', async () => {
    const asked: string[] = [];
    t = await openTestGate({ approve: approver(asked, false) });
    const calls: string[] = [];
    const model = recordedAiSdkModel();
    const result = await generateText({
      model,
      tools: gateAiSdkTools(tools(calls), hostContext(t.gate)),
      prompt: 'Pay vendor-441 what we owe',
      stopWhen: stepCountIs(3),
    });
    expect(calls).toEqual(['search:vendor-441 invoices']);
    expect(asked).toEqual(['payout_create']);
    const errors = result.steps[0]!.content.filter((c) => c.type === 'tool-error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ toolName: 'payout_create' });
    expect(JSON.parse((errors[0] as { error: Error }).error.message)).toEqual({
      error: { code: 'EF_NOT_AUTHORIZED', message: expect.any(String), retryable: false, invoked: false },
    });
    // The second model call received the deny, not a result.
    expect(JSON.stringify(model.doGenerateCalls[1]!.prompt)).toContain('EF_NOT_AUTHORIZED');
  });

  it('an approved payout runs exactly once with the digested arguments', async () => {
    t = await openTestGate({ approve: approver([], true) });
    const calls: string[] = [];
    await generateText({
      model: recordedAiSdkModel(),
      tools: gateAiSdkTools(tools(calls), hostContext(t.gate)),
      prompt: 'Pay vendor-441',
      stopWhen: stepCountIs(3),
    });
    expect(calls.sort()).toEqual(['payout:150.00', 'search:vendor-441 invoices']);
  });
});

/** A `Model` replaying recorded Responses output items, one response per turn; it keeps every request. */
class RecordedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: ModelResponse['output'][]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.turns[this.requests.length - 1];
    if (!output) throw new Error('no recorded turn left');
    return { usage: new Usage(), output };
  }
  // biome-ignore lint/correctness/useYield: the recorded model never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the recorded model does not stream');
  }
}

describe('OpenAI Agents SDK (@openai/agents 0.14): gateAgentsFunctionTool wraps invoke', () => {
  setTracingDisabled(true);
  function agent(model: Model, calls: string[], context: Parameters<typeof gateAgentsFunctionTool>[1]) {
    const search = agentsTool({
      name: 'search',
      description: 'Search invoices',
      parameters: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        calls.push(`search:${query}`);
        return 'one hit';
      },
    });
    const payout = agentsTool({
      name: 'payout_create',
      description: 'Pay a vendor',
      parameters: z.object({ amount: z.string(), currency: z.string(), beneficiary: z.string() }),
      execute: async ({ amount }) => {
        calls.push(`payout:${amount}`);
        return 'paid';
      },
    });
    return new Agent({
      name: 'payables',
      instructions: 'Pay invoices',
      model,
      tools: [search, payout].map((x) => gateAgentsFunctionTool(x, context)),
    });
  }
  const turns = (): ModelResponse['output'][] => [
    [
      { type: 'function_call', callId: 'call_a1', name: 'search', arguments: '{"query":"vendor-441"}', status: 'completed' },
      {
        type: 'function_call',
        callId: 'call_a2',
        name: 'payout_create',
        arguments: '{"amount":"150.00","currency":"EUR","beneficiary":"vendor-441"}',
        status: 'completed',
      },
    ],
    [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.' }] }],
  ];

  it('the refused payout never reaches its tool and its function_call_output is the host error object', async () => {
    t = await openTestGate({ approve: approver([], false) });
    const calls: string[] = [];
    const model = new RecordedModel(turns());
    const result = await run(agent(model, calls, hostContext(t.gate)), 'Pay vendor-441');
    expect(result.finalOutput).toBe('Done.');
    expect(calls).toEqual(['search:vendor-441']);
    const secondTurn = JSON.stringify(model.requests[1]!.input);
    expect(secondTurn).toContain('EF_NOT_AUTHORIZED');
    expect(secondTurn).toContain('one hit');
  });

  it('an approved payout runs once; the same call id replayed by the model does not run it again', async () => {
    t = await openTestGate({ approve: approver([], true) });
    const calls: string[] = [];
    const replay = turns();
    const model = new RecordedModel([replay[0]!, replay[0]!.filter((i) => 'name' in i && i.name === 'payout_create'), replay[1]!]);
    await run(agent(model, calls, hostContext(t.gate)), 'Pay vendor-441');
    expect(calls.filter((c) => c.startsWith('payout'))).toEqual(['payout:150.00']);
  });
});

describe('OpenAI Agents SDK: gateAgentsMcpServer gates the MCP tools the agent calls (real MCP server, official SDK)', () => {
  it('a refused repo_deploy never reaches the server; an approved one is sent once', async () => {
    const server = await startCountingMcpServer('git.example');
    try {
      for (const [answer, expected] of [
        [false, 0],
        [true, 1],
      ] as const) {
        t = await openTestGate({ approve: approver([], answer) });
        const mcp = new MCPServerStreamableHttp({ url: server.url, name: 'git' });
        await mcp.connect();
        try {
          const before = server.toolsCallRequests;
          const model = new RecordedModel([
            [
              {
                type: 'function_call',
                callId: `call_d${answer}`,
                name: 'repo_deploy',
                arguments: '{"env":"prod","ref":"main"}',
                status: 'completed',
              },
            ],
            [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok' }] }],
          ]);
          const gated = gateAgentsMcpServer(mcp, { serverUrl: server.url, context: hostContext(t.gate) });
          await run(new Agent({ name: 'deployer', model, mcpServers: [gated] }), 'deploy main to prod');
          expect(server.toolsCallRequests - before).toBe(expected);
          if (!answer) expect(JSON.stringify(model.requests[1]!.input)).toContain('EF_NOT_AUTHORIZED');
        } finally {
          await mcp.close();
        }
        await t.close();
        t = undefined;
      }
    } finally {
      await server.close();
    }
  });
});
