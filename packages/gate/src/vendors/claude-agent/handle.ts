/**
 * Claude Agent SDK (Tool-Use Binding draft: "hook before the tool call"): a `PreToolUse` hook is the
 * sink. Structural: the gate does not depend on the SDK; the shapes are checked in the tests.
 */
import { type EnforceDecision, hostErrorObject } from '../../errors.js';
import type { MapContext } from '../../host/dispatch-mapped.js';
import { dispatchHostCall } from '../../host/host-call.js';

/** A Claude Agent SDK hook input (structural: every member of the SDK's `HookInput` fits; `PreToolUse` carries the tool fields). */
export interface ClaudePreToolUseInput {
  hook_event_name: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  mcp_server?: { name: string; source: string };
}

/** The hook's answer (structural: a `SyncHookJSONOutput` with a PreToolUse `hookSpecificOutput`). */
export interface ClaudePreToolUseOutput {
  continue?: boolean;
  hookSpecificOutput?: { hookEventName: 'PreToolUse'; permissionDecision: 'deny'; permissionDecisionReason: string };
}

/**
 * A Claude Agent SDK `PreToolUse` hook callback (Tool-Use Binding draft: "hook before the tool call").
 * Claude Code runs the tool itself after the hook, so the hook is the sink: each tool_use becomes an
 * act under its `tool_use_id`, enforce consumes its authority, and the hook hands the call back to
 * the executor only when this very invocation consumed it (the journal records the hand-over as the
 * invoke; a repeated `tool_use_id` is denied, never handed over twice). A deny answers
 * `permissionDecision: 'deny'` with the host error object as the reason, which the model sees.
 * Any other hook event passes. Register it with `claudeAgentHooks` (which sets `onFailure: 'block'`,
 * so a failing hook blocks the tool instead of letting it run).
 */
export function claudePreToolUseHook(context: MapContext) {
  return async (input: ClaudePreToolUseInput, toolUseId: string | undefined): Promise<ClaudePreToolUseOutput> => {
    if (input.hook_event_name !== 'PreToolUse') return {};
    const deny = (decision: EnforceDecision): ClaudePreToolUseOutput => ({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: JSON.stringify(hostErrorObject(decision)),
      },
    });
    const id = input.tool_use_id || toolUseId;
    if (!id || typeof input.tool_name !== 'string') return deny({ allow: false, code: 'EF_MALFORMED_ACT' });
    const server = input.mcp_server ? `claude-mcp://${input.mcp_server.source}/${input.mcp_server.name}` : undefined;
    try {
      const r = await dispatchHostCall(
        context,
        {
          source: 'claude-agent',
          id,
          name: input.tool_name,
          args: input.tool_input ?? {},
          act_type: 'TOOL_CALL',
          tool_protocol: server ? 'MCP' : 'ANTHROPIC_TOOL_USE',
          ...(server ? { tool_endpoint: server, destination: { destination_id: server } } : {}),
        },
        async () => ({ handed_to: 'claude-agent-executor' }),
      );
      return r.outcome.invoked ? {} : deny(r.outcome.decision.allow ? { allow: false, code: 'EF_005' } : r.outcome.decision);
    } catch {
      // The hook never throws: a Claude Code that predates `onFailure` lets the tool run after a
      // failed hook, so a failure here must answer deny itself (fail closed).
      return deny({ allow: false, code: 'EF_FAIL_CLOSED' });
    }
  };
}

/** The `hooks` option for the Claude Agent SDK's `query()`: the gate on every PreToolUse, failing closed. */
export function claudeAgentHooks(context: MapContext) {
  return { PreToolUse: [{ hooks: [claudePreToolUseHook(context)], onFailure: 'block' as const }] };
}
