/**
 * How an escalated call can send its person to the approvals page, read from the agent's request
 * (issue 32 item 4): a 2026-07-28 request declares its revision and capabilities in its own
 * `_meta` envelope and may echo a `requestState`; a 2025-11-25 connection negotiated them at
 * `initialize` and carries server-to-client requests (stdio, or a Streamable HTTP session), so
 * `elicitation/create` can be sent on it.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ElicitRequestURLParams,
  type ElicitResult,
  PROTOCOL_VERSION_META_KEY,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { type ApprovalClient, MRTR_REVISION, urlElicitationDeclared } from '../approvals/answer.js';

export interface AgentApproval {
  client: ApprovalClient;
  /** 2026-07-28: the `requestState` a retried call echoes, as received (verified by the call pipeline). */
  requestState: string | undefined;
  /** 2025-11-25: send `elicitation/create` on this request's connection, waiting at most `timeoutMs` for the answer. */
  elicit?(params: ElicitRequestURLParams, timeoutMs: number): Promise<ElicitResult>;
}

/** The approval channel of one `tools/call` on a connection of `era` (proxy.ts `AgentEra`). */
export function agentApproval(server: Server, ctx: ServerContext, era: 'legacy' | 'modern'): AgentApproval {
  if (era === 'modern') {
    const envelope: Record<string, unknown> = ctx.mcpReq.envelope ?? {};
    const state = ctx.mcpReq.requestState<unknown>();
    const revision = envelope[PROTOCOL_VERSION_META_KEY];
    return {
      client: {
        revision: typeof revision === 'string' ? revision : MRTR_REVISION,
        urlElicitation: urlElicitationDeclared(envelope[CLIENT_CAPABILITIES_META_KEY]),
        sessionful: false,
      },
      requestState: typeof state === 'string' ? state : undefined,
    };
  }
  return {
    client: {
      revision: server.getNegotiatedProtocolVersion() ?? '',
      urlElicitation: urlElicitationDeclared(server.getClientCapabilities()),
      sessionful: true,
    },
    requestState: undefined,
    elicit: (params, timeoutMs) => ctx.mcpReq.elicitInput(params, { signal: ctx.mcpReq.signal, timeout: timeoutMs }),
  };
}
