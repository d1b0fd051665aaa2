/**
 * The Claude Agent SDK `PreToolUse` hook. Claude Code runs the tool itself once every PreToolUse
 * hook has answered without a deny, so the hook is the sink. The inputs below have the shape the
 * SDK documents for `PreToolUseHookInput` (0.3: session_id, transcript_path, cwd, hook_event_name,
 * tool_name, tool_input, tool_use_id, mcp_server); `claudePreToolUseHook` type-checks as the SDK's
 * `HookCallback`. Here the executor is the hook contract, written out (run the tool unless a hook
 * denied it); claude-agent-loop.test.ts runs the same hook inside the SDK's own loop.
 */
import { type AgentCandidateAct, type ClaudePreToolUseInput, claudeAgentHooks, claudePreToolUseHook } from '@vrpkit/gate';
import { afterEach, describe, expect, it } from 'vitest';
import { hostContext, openTestGate, type TestGate } from './scenarios-gate.js';

let t: TestGate | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function preToolUse(tool_use_id: string, tool_name: string, tool_input: unknown, extra: Partial<ClaudePreToolUseInput> = {}) {
  return {
    session_id: '2f0c5c1e-sess',
    transcript_path: '/tmp/transcript.jsonl',
    cwd: '/work',
    hook_event_name: 'PreToolUse',
    tool_name,
    tool_input,
    tool_use_id,
    ...extra,
  };
}

/** Claude Code's side of the contract: every PreToolUse hook runs first; the tool runs unless one denied. */
async function execute(
  hook: ReturnType<typeof claudePreToolUseHook>,
  input: ReturnType<typeof preToolUse>,
  tools: Record<string, (args: unknown) => void>,
): Promise<{ ran: boolean; reason?: string }> {
  const out = await hook(input, input.tool_use_id);
  if (out.hookSpecificOutput?.permissionDecision === 'deny') return { ran: false, reason: out.hookSpecificOutput.permissionDecisionReason };
  tools[input.tool_name]!(input.tool_input);
  return { ran: true };
}

function approver(answer: boolean, asked: AgentCandidateAct[] = []) {
  return async (act: AgentCandidateAct) => {
    asked.push(act);
    return answer;
  };
}

describe('claudePreToolUseHook', () => {
  it('a refused payout never reaches its tool and the reason is the host error object; the hot search runs', async () => {
    t = await openTestGate({ approve: approver(false) });
    const ran: string[] = [];
    const tools = { search: () => ran.push('search'), payout_create: () => ran.push('payout_create') };
    const hook = claudePreToolUseHook(hostContext(t.gate));
    expect(await execute(hook, preToolUse('toolu_01', 'search', { query: 'invoices' }), tools)).toEqual({ ran: true });
    const denied = await execute(hook, preToolUse('toolu_02', 'payout_create', { amount: '150.00', currency: 'EUR' }), tools);
    expect(denied.ran).toBe(false);
    expect(JSON.parse(denied.reason!)).toEqual({
      error: { code: 'EF_NOT_AUTHORIZED', message: expect.any(String), retryable: false, invoked: false },
    });
    expect(ran).toEqual(['search']);
  });

  it('an approved call is handed over once: the same tool_use_id again is denied (EF_005)', async () => {
    const asked: AgentCandidateAct[] = [];
    t = await openTestGate({ approve: approver(true, asked) });
    const ran: string[] = [];
    const tools = { payout_create: () => ran.push('payout_create') };
    const hook = claudePreToolUseHook(hostContext(t.gate));
    const input = preToolUse('toolu_03', 'payout_create', { amount: '10.00', currency: 'EUR' });
    expect(await execute(hook, input, tools)).toEqual({ ran: true });
    const again = await execute(hook, input, tools);
    expect(again.ran).toBe(false);
    expect(JSON.parse(again.reason!).error.code).toBe('EF_005');
    expect(ran).toEqual(['payout_create']);
    expect(asked.map((a) => [a.act_type, a.tool.tool_protocol, a.candidate_act_id])).toEqual([
      ['TOOL_CALL', 'ANTHROPIC_TOOL_USE', 'act:claude-agent:sess55:toolu_03'],
    ]);
  });

  it("an MCP tool's server enters the act as its endpoint and destination", async () => {
    const asked: AgentCandidateAct[] = [];
    t = await openTestGate({ approve: approver(false, asked) });
    const hook = claudePreToolUseHook(hostContext(t.gate));
    const input = preToolUse('toolu_04', 'mcp__git__repo_deploy', { env: 'prod' }, { mcp_server: { name: 'git', source: 'project' } });
    expect((await execute(hook, input, { mcp__git__repo_deploy: () => {} })).ran).toBe(false);
    expect(asked[0]).toMatchObject({
      tool: { tool_id: 'mcp__git__repo_deploy', tool_protocol: 'MCP', tool_endpoint: 'claude-mcp://project/git' },
      destination: { destination_id: 'claude-mcp://project/git' },
    });
  });

  it('other hook events pass; a PreToolUse without an id is denied; the registered matcher fails closed', async () => {
    t = await openTestGate();
    const hook = claudePreToolUseHook(hostContext(t.gate));
    expect(await hook({ hook_event_name: 'SessionStart' }, undefined)).toEqual({});
    const out = await hook({ ...preToolUse('', 'search', {}), tool_use_id: '' }, undefined);
    expect(JSON.parse(out.hookSpecificOutput!.permissionDecisionReason).error.code).toBe('EF_MALFORMED_ACT');
    expect(claudeAgentHooks(hostContext(t.gate)).PreToolUse[0]).toMatchObject({ onFailure: 'block' });
  });
});
