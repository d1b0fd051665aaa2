/**
 * How an escalated call can send its person to the approvals page, read from the agent's request
 * (issue 32 item 4): a 2026-07-28 request declares its revision and capabilities in its own
 * `_meta` envelope and may echo a `requestState`; a 2025-11-25 connection negotiated them at
 * `initialize` and carries server-to-client requests (stdio, or a Streamable HTTP session), so
 * `elicitation/create` can be sent on it.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ElicitRequestParams,
  type ElicitResult,
  PROTOCOL_VERSION_META_KEY,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { type ApprovalClient, MRTR_REVISION, urlElicitationDeclared } from '../approvals/answer.js';

export interface AgentApproval {
  client: ApprovalClient;
  /** It declared form-mode elicitation (a downstream's forms can be forwarded to it: downstream-input.ts). */
  formElicitation: boolean;
  /**
   * The `requestState` a retried call echoes, as received (verified by the call pipeline): sent by a
   * 2026-07-28 client, or on 2025-11-25 by the SDK's legacy shim re-entering the handler after it
   * asked the client for the input an `InputRequiredResult` named.
   */
  requestState: string | undefined;
  /** The `inputResponses` a retried call carries (the bare results, by input key), as received. */
  inputResponses: Record<string, unknown> | undefined;
  /** 2025-11-25: send `elicitation/create` on this request's connection, waiting at most `timeoutMs` for the answer. */
  elicit?(params: ElicitRequestParams, timeoutMs: number): Promise<ElicitResult>;
}

/**
 * True when client capabilities declare form-mode elicitation (client/elicitation, Capabilities:
 * `elicitation.form`, or an empty `elicitation` object, which means form mode only).
 */
export function formElicitationDeclared(capabilities: unknown): boolean {
  const elicitation = (capabilities as { elicitation?: unknown } | null | undefined)?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null || Array.isArray(elicitation)) return false;
  const e = elicitation as { form?: unknown; url?: unknown };
  if (e.form === undefined && e.url === undefined) return true;
  return typeof e.form === 'object' && e.form !== null && !Array.isArray(e.form);
}

/** The approval channel of one `tools/call` on a connection of `era` (proxy.ts `AgentEra`). */
export function agentApproval(server: Server, ctx: ServerContext, era: 'legacy' | 'modern'): AgentApproval {
  const state = ctx.mcpReq.requestState<unknown>();
  const retried = {
    requestState: typeof state === 'string' ? state : undefined,
    inputResponses: ctx.mcpReq.inputResponses as Record<string, unknown> | undefined,
  };
  if (era === 'modern') return modernApproval(ctx.mcpReq.envelope ?? {}, retried);
  return legacyApproval(server, retried, ctx.mcpReq.signal);
}

/**
 * The approval channel of a 2025-11-25 `tools/call` on `server`'s connection (also stdio-call.ts's):
 * what `initialize` negotiated, and `elicitation/create` sent on the connection (the SDK's
 * `ctx.mcpReq.elicitInput` is `server.elicitInput`), cancelled with the call (`signal`).
 */
export function legacyApproval(
  server: Server,
  retried: Pick<AgentApproval, 'requestState' | 'inputResponses'>,
  signal: AbortSignal,
): AgentApproval {
  return {
    client: {
      revision: server.getNegotiatedProtocolVersion() ?? '',
      urlElicitation: urlElicitationDeclared(server.getClientCapabilities()),
      sessionful: true,
    },
    formElicitation: formElicitationDeclared(server.getClientCapabilities()),
    ...retried,
    elicit: (params, timeoutMs) => server.elicitInput(params, { signal, timeout: timeoutMs }),
  };
}

/** The approval channel of a 2026-07-28 `tools/call`, read from its per-request `_meta` envelope (also direct-call.ts's). */
export function modernApproval(
  envelope: Record<string, unknown>,
  retried: Pick<AgentApproval, 'requestState' | 'inputResponses'>,
): AgentApproval {
  const revision = envelope[PROTOCOL_VERSION_META_KEY];
  const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY];
  return {
    client: {
      revision: typeof revision === 'string' ? revision : MRTR_REVISION,
      urlElicitation: urlElicitationDeclared(capabilities),
      sessionful: false,
    },
    formElicitation: formElicitationDeclared(capabilities),
    ...retried,
  };
}
