/**
 * The Claude Agent SDK's own tool loop with the gate's `PreToolUse` hook: the real SDK `query()`
 * spawns the real Claude Code CLI, which talks to a local Messages API replaying a recorded turn
 * (the model asks for an MCP tool, then answers once it sees the tool result), runs the hooks the
 * SDK registered over its control protocol, and runs the tool itself: an in-process SDK MCP server
 * whose tool counts its invocations. No model and no network are reached.
 *
 * The SDK is pinned to 0.2.112, the last release whose CLI is JavaScript (later releases install a
 * native binary per platform). That CLI predates `onFailure`, so a hook that failed would let the
 * tool run: the last test proves the gate's hook answers deny itself when the gate fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSdkMcpServer, type Options, query, tool } from '@anthropic-ai/claude-agent-sdk';
import { type AgentCandidateAct, claudeAgentHooks, type PolicyDocument } from '@vrpkit/gate';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { hostContext, openTestGate, type TestGate } from './scenarios-gate.js';

const PAYOUT = 'mcp__pay__payout_create';
const POLICY: PolicyDocument = {
  version: 1,
  policy_id: 'claude-loop-v1',
  tools: [{ tool: PAYOUT, consequence_class: 'FINANCIAL' }],
  hot_envelopes: [],
  otherwise: 'escalate',
};

let t: TestGate | undefined;
const cleanup: Array<() => void> = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const c of cleanup.splice(0)) c();
});

/**
 * A Messages API that replays one recorded turn over SSE: a `tool_use` of the payout tool while the
 * conversation holds no tool result, then a text answer. Every tool result the CLI sends is kept.
 */
async function recordedMessagesApi(): Promise<{ url: string; toolResults: string[] }> {
  const toolResults: string[] = [];
  const api = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":1}');
      return;
    }
    const request = JSON.parse(body) as { model: string; messages: Array<{ content: unknown }> };
    const results = request.messages.flatMap((m) =>
      Array.isArray(m.content) ? (m.content as Array<{ type: string; content?: unknown }>).filter((c) => c.type === 'tool_result') : [],
    );
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', {
      message: {
        id: `msg_${results.length}`,
        type: 'message',
        role: 'assistant',
        model: request.model,
        content: [],
        stop_reason: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    });
    if (results.length === 0) {
      event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_pay_1', name: PAYOUT, input: {} } });
      event('content_block_delta', {
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"amount":"150.00","currency":"EUR","beneficiary":"vendor-441"}' },
      });
      event('content_block_stop', { index: 0 });
      event('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 1 } });
    } else {
      toolResults.push(...results.map((r) => JSON.stringify(r.content)));
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'done' } });
      event('content_block_stop', { index: 0 });
      event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
    }
    event('message_stop', {});
    res.end();
  });
  cleanup.push(() => api.close());
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  const { port } = api.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, toolResults };
}

/** One agent turn through the real SDK and CLI; returns what the tool saw and what the model was told. */
async function agentTurn(hooks: Options['hooks']) {
  const { url, toolResults } = await recordedMessagesApi();
  const home = mkdtempSync(join(tmpdir(), 'claude-home-'));
  cleanup.push(() => rmSync(home, { recursive: true, force: true }));
  const paid: unknown[] = [];
  const pay = createSdkMcpServer({
    name: 'pay',
    version: '1.0.0',
    tools: [
      tool('payout_create', 'Pay a vendor', { amount: z.string(), currency: z.string(), beneficiary: z.string() }, async (args) => {
        paid.push(args);
        return { content: [{ type: 'text', text: 'paid' }] };
      }),
    ],
  });
  const messages: string[] = [];
  for await (const m of query({
    prompt: 'Pay vendor-441 its invoice.',
    options: {
      model: 'claude-sonnet-4-5',
      maxTurns: 3,
      settingSources: [],
      mcpServers: { pay },
      // The CLI's own permission check lets the tool through: the gate's hook is what decides.
      allowedTools: [PAYOUT],
      hooks,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
      },
    },
  })) {
    if (m.type === 'result') messages.push(m.subtype);
  }
  return { paid, toolResults, messages };
}

function approver(answer: boolean, asked: AgentCandidateAct[]) {
  return async (act: AgentCandidateAct) => {
    asked.push(act);
    return answer;
  };
}

describe('claudeAgentHooks inside the Claude Agent SDK loop', () => {
  it('a refused payout never reaches the tool; the model is told EF_NOT_AUTHORIZED', async () => {
    const asked: AgentCandidateAct[] = [];
    t = await openTestGate({ policy: POLICY, approve: approver(false, asked) });
    const turn = await agentTurn(claudeAgentHooks(hostContext(t.gate)));
    expect(turn.paid).toEqual([]);
    expect(asked.map((a) => [a.tool.tool_id, a.candidate_act_id])).toEqual([[PAYOUT, 'act:claude-agent:sess55:toolu_pay_1']]);
    expect(turn.toolResults).toHaveLength(1);
    expect(turn.toolResults[0]).toContain('EF_NOT_AUTHORIZED');
    expect(turn.messages).toEqual(['success']);
  }, 90_000);

  it('an approved payout runs exactly once with the digested arguments', async () => {
    const asked: AgentCandidateAct[] = [];
    t = await openTestGate({ policy: POLICY, approve: approver(true, asked) });
    const turn = await agentTurn(claudeAgentHooks(hostContext(t.gate)));
    expect(turn.paid).toEqual([{ amount: '150.00', currency: 'EUR', beneficiary: 'vendor-441' }]);
    expect(asked).toHaveLength(1);
    expect(turn.toolResults[0]).toContain('paid');
  }, 90_000);

  it('a hook that fails answers deny: on this CLI a throwing hook would let the tool run', async () => {
    t = await openTestGate({ policy: POLICY, approve: async () => true });
    // The CLI's behaviour the hook must not rely on: a hook that throws, and the tool runs.
    const throwing = await agentTurn({ PreToolUse: [{ hooks: [async () => Promise.reject(new Error('hook failed'))] }] });
    expect(throwing.paid).toHaveLength(1);
    // The gate's hook over a host context that fails to resolve (a host bug): deny, not a throw.
    const context = hostContext(t.gate);
    Object.defineProperty(context, 'principal', {
      get() {
        throw new Error('the host could not resolve the principal');
      },
    });
    const turn = await agentTurn(claudeAgentHooks(context));
    expect(turn.paid).toEqual([]);
    expect(turn.toolResults[0]).toContain('EF_FAIL_CLOSED');
  }, 90_000);
});
