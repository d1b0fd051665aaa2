import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type EnforceDecision, GateError, hostErrorObject } from '../errors.js';
import { mapMcpToolsCall } from '../mappers/mcp.js';
import { dispatchMapped, forCall, type MapContext, resolveActContext, type ToolCallOutcome } from './context.js';

type CallTool = Client['callTool'];
type CallToolResult = Awaited<ReturnType<CallTool>>;

/** A gated MCP `Client`: usable wherever a `Client` is, with every `tools/call` passing the gate. */
export type GatedMcpClient = Client & {
  /**
   * `callTool` for the model block (tool_use id, call id) this call executes: the id becomes part
   * of the candidate act id, so an approval or a retry binds to the same act. Plain `callTool`
   * makes every call a fresh act. Never the JSON-RPC id (seed: "it can collide across servers").
   */
  callToolFor(actRef: string, ...args: Parameters<CallTool>): Promise<CallToolResult>;
  /** The decision for every call made through this client, in order (ids, codes, digests; never arguments). */
  readonly gateOutcomes: readonly ToolCallOutcome[];
};

/** The host error object as an MCP tool-level error result (`isError: true`) the model sees, with the object as structured content. */
export function mcpDenyResult(decision: EnforceDecision) {
  const body = hostErrorObject(decision);
  return { isError: true, content: [{ type: 'text' as const, text: JSON.stringify(body) }], structuredContent: { ...body } };
}

/**
 * Wrap an MCP SDK `Client` so every `tools/call` passes the gate (seed §"MCP": "The conforming
 * placement is the MCP client dispatcher … wrap Client.callTool"). On deny NO `tools/call` is
 * sent and an MCP error result (`isError: true`, the host error object) comes back.
 * `serverUrl` is the identity of the server the client is really connected to; it enters the
 * act's tool_endpoint and destination, so authority issued for one server fails on a swapped one.
 * Discovery (`listTools`, …) passes through: "tools/list remains discovery".
 * The paths around `callTool` are closed: a raw `request({ method: 'tools/call' })` is refused,
 * and `experimental` (task-based `callToolStream`) is not reachable through the gated client.
 */
export function gateMcpClient(client: Client, opts: { serverUrl: string; context: MapContext }): GatedMcpClient {
  const outcomes: ToolCallOutcome[] = [];
  const server = { serverUrl: opts.serverUrl };

  async function gatedCall(actRef: string | undefined, ...[params, resultSchema, options]: Parameters<CallTool>): Promise<CallToolResult> {
    const block = { id: actRef ?? '', name: params.name };
    const actCtx = await resolveActContext(opts.context);
    if ('allow' in actCtx) {
      outcomes.push({ ...block, decision: actCtx, invoked: false });
      return mcpDenyResult(actCtx) as CallToolResult;
    }
    // The params sent carry the frozen copy of the arguments dispatch digested: the server
    // receives exactly them, whatever happens to the caller's object meanwhile.
    const { arguments: raw, ...rest } = params;
    const r = await dispatchMapped(
      opts.context,
      block,
      () => {
        // Absent arguments are the empty object (as mcpArguments reads them); the wire keeps them absent.
        const liveArgs = raw ?? {};
        const mapped = { ...rest, name: block.name, arguments: liveArgs };
        return { act: mapMcpToolsCall(mapped, server, forCall(actCtx, opts.context, block.name, liveArgs), actRef), liveArgs };
      },
      (args) =>
        client.callTool(
          raw === undefined ? { ...rest, name: block.name } : { ...rest, name: block.name, arguments: args },
          resultSchema,
          options,
        ),
      true,
    );
    outcomes.push(r.outcome);
    if (r.toolError !== undefined) throw r.toolError;
    if (r.outcome.decision.allow || r.result !== undefined) return r.result as CallToolResult;
    return mcpDenyResult(r.outcome.decision) as CallToolResult;
  }

  const overrides: Record<PropertyKey, unknown> = {
    callTool: (...args: Parameters<CallTool>) => gatedCall(undefined, ...args),
    callToolFor: (actRef: string, ...args: Parameters<CallTool>) => gatedCall(actRef, ...args),
    gateOutcomes: outcomes,
    request: (req: { method?: unknown }, ...rest: unknown[]) =>
      req?.method === 'tools/call'
        ? Promise.reject(new GateError('EF_NOT_AUTHORIZED', 'tools/call must go through the gated callTool'))
        : (client.request as (...a: unknown[]) => unknown)(req, ...rest),
  };
  return new Proxy(client, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop];
      if (prop === 'experimental') throw new GateError('EF_NOT_AUTHORIZED', 'experimental task calls bypass the gate; use callTool');
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as GatedMcpClient;
}
